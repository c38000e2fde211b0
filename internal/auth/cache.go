package auth

import (
	"context"
	"time"

	"till/internal/ttlcache"
)

// cacheLimit bounds how many principals a cache holds.
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
	return &cache{next: resolve, principals: ttlcache.New[string, Principal](ttl, cacheLimit, now)}
}

type cache struct {
	next       Resolver
	principals *ttlcache.Cache[string, Principal]
}

func (c *cache) ResolveToken(ctx context.Context, kind TokenKind, hash string) (Principal, error) {
	if kind != TokenOrganization && kind != TokenPersonal {
		return c.next.ResolveToken(ctx, kind, hash)
	}
	if p, found := c.principals.Get(hash); found {
		return p, nil
	}
	p, err := c.next.ResolveToken(ctx, kind, hash)
	if err != nil {
		return p, err
	}
	var notAfter time.Time
	if p.ExpiresAt != nil {
		notAfter = *p.ExpiresAt
	}
	c.principals.Put(hash, p, notAfter)
	return p, nil
}
