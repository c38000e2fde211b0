// Package ttlcache is a small, bounded, concurrency-safe map whose entries expire. Till uses
// it where a value read on every request of a hot path may be a few seconds old: token
// principals and the customers shown in license validations.
package ttlcache

import (
	"sync"
	"time"
)

// Cache holds at most limit entries. Past the limit, expired entries are dropped and, if
// that is not enough, all of them are, so a flood of distinct keys costs lookups, never
// memory. A nil *Cache caches nothing: every Get misses.
type Cache[K comparable, V any] struct {
	ttl     time.Duration
	limit   int
	now     func() time.Time
	mu      sync.RWMutex
	entries map[K]entry[V]
}

type entry[V any] struct {
	v     V
	until time.Time
}

// New returns a cache whose entries live for ttl by the clock now.
func New[K comparable, V any](ttl time.Duration, limit int, now func() time.Time) *Cache[K, V] {
	return &Cache[K, V]{ttl: ttl, limit: limit, now: now, entries: map[K]entry[V]{}}
}

// Get returns k's value unless it is missing or expired.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	var zero V
	if c == nil {
		return zero, false
	}
	c.mu.RLock()
	e, found := c.entries[k]
	c.mu.RUnlock()
	if found && c.now().Before(e.until) {
		return e.v, true
	}
	return zero, false
}

// Put stores v for the cache's ttl, or until notAfter when that is sooner (a zero notAfter
// sets no bound).
func (c *Cache[K, V]) Put(k K, v V, notAfter time.Time) {
	if c == nil {
		return
	}
	now := c.now()
	until := now.Add(c.ttl)
	if !notAfter.IsZero() && notAfter.Before(until) {
		until = notAfter
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.limit {
		for key, e := range c.entries {
			if !now.Before(e.until) {
				delete(c.entries, key)
			}
		}
		if len(c.entries) >= c.limit {
			clear(c.entries)
		}
	}
	c.entries[k] = entry[V]{v: v, until: until}
}

// Forget drops k, so the next Get misses: a process that changes a value forgets its own
// cached copy at once, and other processes see the change within ttl.
func (c *Cache[K, V]) Forget(k K) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.entries, k)
	c.mu.Unlock()
}
