package resolvers

import (
	"container/list"
	"context"
	"sync"
)

// apqBudget bounds the bytes of the queries automatic persisted queries keep. Anyone may
// register a query (the hash is checked, the query is not run first), so the cache is
// bounded by what it holds, not by its count: a thousand queries at the size cap would hold
// 64 MiB, while 8 MiB keeps thousands of a frontend's usual few-kilobyte queries.
const apqBudget = 8 << 20

// apqCache is the cache of automatic persisted queries: hash to query, least recently used
// evicted first once the queries held exceed budget bytes. A client whose query was evicted
// gets PersistedQueryNotFound and sends it again.
type apqCache struct {
	mu      sync.Mutex
	budget  int
	held    int
	order   *list.List // front: most recently used; values are *apqEntry
	entries map[string]*list.Element
}

type apqEntry struct{ hash, query string }

// newAPQCache is an empty cache holding at most budget bytes of queries and hashes.
func newAPQCache(budget int) *apqCache {
	return &apqCache{budget: budget, order: list.New(), entries: map[string]*list.Element{}}
}

// Get returns the query registered under hash.
func (c *apqCache) Get(_ context.Context, hash string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[hash]
	if !ok {
		return "", false
	}
	c.order.MoveToFront(e)
	return e.Value.(*apqEntry).query, true
}

// Add registers query under hash, evicting the least recently used queries beyond the
// budget. A query larger than the whole budget is not kept.
func (c *apqCache) Add(_ context.Context, hash, query string) {
	size := len(hash) + len(query)
	if size > c.budget {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[hash]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.entries[hash] = c.order.PushFront(&apqEntry{hash: hash, query: query})
	c.held += size
	for c.held > c.budget {
		last := c.order.Back()
		old := last.Value.(*apqEntry)
		c.order.Remove(last)
		delete(c.entries, old.hash)
		c.held -= len(old.hash) + len(old.query)
	}
}
