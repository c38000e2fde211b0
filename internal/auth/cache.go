package auth

import (
	"context"
	"sync"
	"time"
)

// cacheLimit bounds how many principals a cache holds; past it, expired entries are dropped
// and, if that is not enough, the whole cache is, so a flood of distinct tokens costs
// lookups, never memory.
const cacheLimit = 10_000

// Cache wraps a Resolver so that organization and personal tokens, the credentials of
// server-to-server traffic such as license validation, cost a query only once per ttl
// instead of on every request. A revoked or expired token therefore keeps working for at
// most ttl in a process that saw it recently, never past its own expiry. Sessions are not
// cached: a member's role and a deleted customer apply to the portal at once. Failures are
// not cached either. A ttl of 0 returns resolve unchanged.
func Cache(resolve Resolver, ttl time.Duration, now func() time.Time) Resolver {
	if ttl <= 0 {
		return resolve
	}
	return &cache{next: resolve, ttl: ttl, now: now, entries: map[string]cached{}}
}

type cache struct {
	next    Resolver
	ttl     time.Duration
	now     func() time.Time
	mu      sync.RWMutex
	entries map[string]cached
}

type cached struct {
	p     Principal
	until time.Time
}

func (c *cache) ResolveToken(ctx context.Context, kind TokenKind, hash string) (Principal, error) {
	if kind != TokenOrganization && kind != TokenPersonal {
		return c.next.ResolveToken(ctx, kind, hash)
	}
	now := c.now()
	c.mu.RLock()
	e, found := c.entries[hash]
	c.mu.RUnlock()
	if found && now.Before(e.until) {
		return e.p, nil
	}
	p, err := c.next.ResolveToken(ctx, kind, hash)
	if err != nil {
		return p, err
	}
	until := now.Add(c.ttl)
	if p.ExpiresAt != nil && p.ExpiresAt.Before(until) {
		until = *p.ExpiresAt
	}
	c.mu.Lock()
	if len(c.entries) >= cacheLimit {
		for h, e := range c.entries {
			if !now.Before(e.until) {
				delete(c.entries, h)
			}
		}
		if len(c.entries) >= cacheLimit {
			c.entries = map[string]cached{}
		}
	}
	c.entries[hash] = cached{p: p, until: until}
	c.mu.Unlock()
	return p, nil
}
