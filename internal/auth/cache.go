package auth

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
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
//     license validation, and users' browser sessions are kept for ttl: a revoked token keeps working for at most ttl
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
	feed Feed
	// tokens and sessions are nil when ttl is 0.
	tokens, sessions *flushable
}

// NewCache returns a Cache over resolve. A ttl of 0 caches nothing; a nil feed caches no
// sessions.
func NewCache(resolve Resolver, ttl time.Duration, now func() time.Time, feed Feed) *Cache {
	c := &Cache{next: resolve, feed: feed}
	if ttl > 0 {
		c.tokens, c.sessions = newFlushable(ttl, now), newFlushable(ttl, now)
	}
	return c
}

// ForgetTokens drops every organization and personal token and every user session the cache
// holds; notifications of revoked tokens and sessions and of deleted organizations call it, so that those stop at once in every
// process that listens rather than at the end of the ttl.
func (c *Cache) ForgetTokens() { c.tokens.flush() }

// ForgetSessions drops every session the cache holds.
func (c *Cache) ForgetSessions() { c.sessions.flush() }

// ResolveToken answers from the cache when it may, and from the wrapped resolver otherwise.
func (c *Cache) ResolveToken(ctx context.Context, kind TokenKind, hash string) (Principal, error) {
	p, _, err := c.ResolveStamped(ctx, kind, hash)
	return p, err
}

// ResolveStamped implements StampedResolver: the stamp stays current while the cache keeps
// the answer, so a caller holding it knows that asking again would give the same principal.
func (c *Cache) ResolveStamped(ctx context.Context, kind TokenKind, hash string) (Principal, Stamp, error) {
	lookup := func() (Principal, error) { return c.next.ResolveToken(ctx, kind, hash) }
	switch {
	case c.tokens == nil:
		p, err := lookup()
		return p, Stamp{}, err
	case kind == TokenOrganization || kind == TokenPersonal || kind == TokenUserSession:
		return c.tokens.resolve(hash, nil, lookup)
	case (kind == TokenCustomerSession || kind == TokenMemberSession) && c.feed != nil:
		// A session is kept only when the feed was listening from before the lookup until
		// after it: then any later change to what it read will be announced and flush it.
		return c.sessions.resolve(strconv.Itoa(int(kind))+":"+hash, c.feed.Listening, lookup)
	default:
		p, err := lookup()
		return p, Stamp{}, err
	}
}

// StampedResolver is a Resolver that says how long an answer holds (a Cache).
type StampedResolver interface {
	Resolver
	ResolveStamped(ctx context.Context, kind TokenKind, hash string) (Principal, Stamp, error)
}

// Stamp marks a principal a Cache keeps: it is current until the cache would no longer
// answer with it, because a notification flushed the cache or the entry's time ran out.
// A connection that resolves its credential for every message it sends (a subscription's
// events) skips the lookups while its stamp is current, and so still stops at once when a
// revocation flushes the cache. The zero Stamp is never current.
type Stamp struct {
	f          *flushable
	generation uint64
	until      time.Time
}

// Current reports whether the principal stamped is still the cache's answer.
func (s Stamp) Current() bool {
	return s.f != nil && s.f.generation.Load() == s.generation && s.f.now().Before(s.until)
}

// flushable is a map of principals that notifications empty whole. A lookup keeps its answer
// only if no flush happened while it read: one that read a row before a change and finished
// after the change's flush would otherwise keep the old answer for the whole ttl.
type flushable struct {
	ttl time.Duration
	now func() time.Time

	// entries holds at most cacheLimit principals, dropping the least recently used past
	// that and the ones its ttl passed by the wall clock; until, read by the cache's own
	// clock, decides a hit. mu orders a flush against a lookup storing its answer, and
	// generation, advanced under mu after the entries are dropped, tells a lookup (and a
	// Stamp) that a flush happened since it read.
	entries    *expirable.LRU[string, cachedPrincipal]
	mu         sync.Mutex
	generation atomic.Uint64
}

// cachedPrincipal is a principal and the moment it stops being served from the cache.
type cachedPrincipal struct {
	p     Principal
	until time.Time
}

func newFlushable(ttl time.Duration, now func() time.Time) *flushable {
	return &flushable{ttl: ttl, now: now, entries: expirable.NewLRU[string, cachedPrincipal](cacheLimit, nil, ttl)}
}

// flush drops every entry and makes lookups in flight keep their answers to themselves.
// A nil flushable (a ttl of 0) has nothing to drop.
func (f *flushable) flush() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.entries.Purge()
	f.generation.Add(1)
}

// resolve answers key from the map, or by lookup, keeping a successful answer when no flush
// happened meanwhile and, with keep, when keep holds both before and after the lookup. The
// stamp is current while the answer is kept; an answer not kept gets the zero Stamp. A hit
// is stamped with the generation read before it, so a flush that overlaps it makes the stamp
// stale at once.
func (f *flushable) resolve(key string, keep func() bool, lookup func() (Principal, error)) (Principal, Stamp, error) {
	generation := f.generation.Load()
	if c, found := f.entries.Get(key); found && f.now().Before(c.until) {
		return c.p, Stamp{f: f, generation: generation, until: c.until}, nil
	}
	f.mu.Lock()
	generation = f.generation.Load()
	f.mu.Unlock()
	keeping := keep == nil || keep()
	p, err := lookup()
	if err != nil || !keeping {
		return p, Stamp{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.generation.Load() != generation || (keep != nil && !keep()) {
		return p, Stamp{}, nil
	}
	until := f.until(p)
	f.entries.Add(key, cachedPrincipal{p: p, until: until})
	return p, Stamp{f: f, generation: generation, until: until}, nil
}

// until is when a principal stored now leaves the cache: after the ttl, or at the
// credential's own expiry when that is sooner.
func (f *flushable) until(p Principal) time.Time {
	until := f.now().Add(f.ttl)
	if p.ExpiresAt != nil && p.ExpiresAt.Before(until) {
		until = *p.ExpiresAt
	}
	return until
}
