package auth

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"till/internal/ttlcache"
)

// cacheLimit bounds how many principals each of a cache's maps holds.
const cacheLimit = 10_000

// Feed is the notification connection that tells a Cache when sessions may have changed
// (a wake.Listener): a session is kept only while Listening holds, and the owner calls
// ForgetSessions on every notification and as soon as the connection is lost.
type Feed interface {
	Listening() bool
}

// Cache wraps a Resolver so that a credential costs a query once per ttl instead of on every
// request. Failures are never cached, nor anything past the credential's own expiry.
//
//   - Organization and personal tokens, the credentials of server-to-server traffic such as
//     license validation, are kept for ttl: a revoked token keeps working for at most ttl
//     in a process that saw it recently, and only a moment when the owner calls
//     ForgetTokens on the notifications of such changes.
//   - Customer and member sessions carry what the portal shows at once (the customer, a
//     member's role), so they are kept only with a Feed whose notifications announce every
//     change to them; the cache then forgets them within the notification's latency
//     (milliseconds; tens of them on a loaded machine) and never keeps one read while the
//     feed was down. A change made through this process's own requests is forgotten before
//     that request answers (SessionsChanged). Without a feed sessions are not cached.
type Cache struct {
	next Resolver
	now  func() time.Time
	ttl  time.Duration
	feed Feed

	// tokens is replaced whole by ForgetTokens; nil inside when ttl is 0.
	tokens atomic.Pointer[ttlcache.Cache[string, Principal]]

	// sessions is replaced whole by ForgetSessions; mu orders that against a lookup storing
	// its answer, and generation tells a lookup that a flush happened while it read.
	sessions   atomic.Pointer[ttlcache.Cache[string, Principal]]
	mu         sync.Mutex
	generation uint64
}

// NewCache returns a Cache over resolve. A ttl of 0 caches nothing; a nil feed caches no
// sessions.
func NewCache(resolve Resolver, ttl time.Duration, now func() time.Time, feed Feed) *Cache {
	c := &Cache{next: resolve, now: now, ttl: ttl, feed: feed}
	if ttl > 0 {
		c.tokens.Store(ttlcache.New[string, Principal](ttl, cacheLimit, now))
		c.sessions.Store(ttlcache.New[string, Principal](ttl, cacheLimit, now))
	}
	return c
}

// ForgetTokens drops every organization and personal token the cache holds; notifications
// of revoked tokens and deleted organizations call it, so that those stop at once in every
// process that listens rather than at the end of the ttl.
func (c *Cache) ForgetTokens() {
	if c.ttl <= 0 {
		return
	}
	c.tokens.Store(ttlcache.New[string, Principal](c.ttl, cacheLimit, c.now))
}

// ForgetSessions drops every session the cache holds and makes lookups in flight keep
// their answers to themselves.
func (c *Cache) ForgetSessions() {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	c.sessions.Store(ttlcache.New[string, Principal](c.ttl, cacheLimit, c.now))
}

// ResolveToken answers from the cache when it may, and from the wrapped resolver otherwise.
func (c *Cache) ResolveToken(ctx context.Context, kind TokenKind, hash string) (Principal, error) {
	tokens := c.tokens.Load()
	switch {
	case tokens == nil:
		return c.next.ResolveToken(ctx, kind, hash)
	case kind == TokenOrganization || kind == TokenPersonal:
		if p, found := tokens.Get(hash); found {
			return p, nil
		}
		p, err := c.next.ResolveToken(ctx, kind, hash)
		if err == nil {
			tokens.Put(hash, p, expiry(p))
		}
		return p, err
	case (kind == TokenCustomerSession || kind == TokenMemberSession) && c.feed != nil:
		return c.session(ctx, kind, hash)
	default:
		return c.next.ResolveToken(ctx, kind, hash)
	}
}

// session resolves a session through the cache. The answer is kept only when the feed was
// listening from before the lookup until after it and no flush happened meanwhile: then
// any later change to what it read will be announced and will flush it.
func (c *Cache) session(ctx context.Context, kind TokenKind, hash string) (Principal, error) {
	key := strconv.Itoa(int(kind)) + ":" + hash
	if p, found := c.sessions.Load().Get(key); found {
		return p, nil
	}
	c.mu.Lock()
	generation := c.generation
	c.mu.Unlock()
	listening := c.feed.Listening()
	p, err := c.next.ResolveToken(ctx, kind, hash)
	if err != nil || !listening {
		return p, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.generation == generation && c.feed.Listening() {
		c.sessions.Load().Put(key, p, expiry(p))
	}
	return p, nil
}

// expiry is when a principal must leave the cache at the latest; zero for never.
func expiry(p Principal) time.Time {
	if p.ExpiresAt == nil {
		return time.Time{}
	}
	return *p.ExpiresAt
}
