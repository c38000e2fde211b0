package auth

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingResolver answers from a table and counts lookups; during, when set, runs inside
// each lookup, as a change committed while the lookup reads would.
type countingResolver struct {
	calls     atomic.Int64
	principal map[string]Principal
	during    func()
}

func (c *countingResolver) ResolveToken(_ context.Context, _ TokenKind, hash string) (Principal, error) {
	c.calls.Add(1)
	if c.during != nil {
		c.during()
	}
	if p, ok := c.principal[hash]; ok {
		return p, nil
	}
	return Principal{}, ErrInvalidToken
}

// feed is a Feed the test turns on and off.
type feed struct{ on atomic.Bool }

func (f *feed) Listening() bool { return f.on.Load() }

func TestCacheReusesTokenPrincipalsWithinTheirTTL(t *testing.T) {
	t0 := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	soon := t0.Add(2 * time.Second)
	tests := []struct {
		name   string
		kind   TokenKind
		hash   string
		noFeed bool
		at     []time.Duration // times of the lookups after t0
		calls  int64           // lookups that reach the store
	}{
		{"organization token: one lookup per ttl", TokenOrganization, "org", false, []time.Duration{0, time.Second, 4 * time.Second, 5 * time.Second}, 2},
		{"personal token is cached too", TokenPersonal, "pat", false, []time.Duration{0, time.Second}, 1},
		{"never past the token's own expiry", TokenOrganization, "expiring", false, []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second}, 3},
		{"customer session: one lookup per ttl with a feed", TokenCustomerSession, "cst", false, []time.Duration{0, 0, time.Second, 5 * time.Second}, 2},
		{"member session: the same", TokenMemberSession, "mst", false, []time.Duration{0, time.Second}, 1},
		{"a session never past its own expiry", TokenCustomerSession, "expiring", false, []time.Duration{0, time.Second, 2 * time.Second}, 2},
		{"customer sessions are not cached without a feed", TokenCustomerSession, "cst", true, []time.Duration{0, 0, 0}, 3},
		{"member sessions are not cached without a feed", TokenMemberSession, "mst", true, []time.Duration{0, 0}, 2},
		{"other credentials are never cached", TokenOAuthAccess, "oauth", false, []time.Duration{0, 0}, 2},
		{"failures are never cached", TokenOrganization, "unknown", false, []time.Duration{0, 0, 0}, 3},
		{"failed sessions are never cached", TokenCustomerSession, "unknown", false, []time.Duration{0, 0}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &countingResolver{principal: map[string]Principal{
				"org": {Kind: KindOrganization}, "pat": {Kind: KindUser}, "cst": {Kind: KindCustomerSession},
				"mst": {Kind: KindMemberSession}, "oauth": {Kind: KindUser}, "expiring": {Kind: KindOrganization, ExpiresAt: &soon}}}
			var now time.Time
			f := &feed{}
			f.on.Store(true)
			var c *Cache
			if tt.noFeed {
				c = NewCache(store, 5*time.Second, func() time.Time { return now }, nil)
			} else {
				c = NewCache(store, 5*time.Second, func() time.Time { return now }, f)
			}
			for _, at := range tt.at {
				now = t0.Add(at)
				_, err := c.ResolveToken(context.Background(), tt.kind, tt.hash)
				if (err != nil) != (tt.hash == "unknown") {
					t.Fatalf("at %s: err = %v", at, err)
				}
			}
			if got := store.calls.Load(); got != tt.calls {
				t.Errorf("store lookups = %d, want %d", got, tt.calls)
			}
		})
	}
}

func TestCacheLeavesUnknownTokensAndZeroTTLAlone(t *testing.T) {
	store := &countingResolver{principal: map[string]Principal{"org": {Kind: KindOrganization}}}
	c := NewCache(store, 0, time.Now, &feed{})
	for range 2 {
		if _, err := c.ResolveToken(context.Background(), TokenOrganization, "org"); err != nil {
			t.Fatal(err)
		}
	}
	c.ForgetSessions()
	if got := store.calls.Load(); got != 2 {
		t.Errorf("a zero ttl cached: %d lookups for 2 requests", got)
	}
	c = NewCache(store, time.Minute, time.Now, nil)
	if _, err := c.ResolveToken(context.Background(), TokenOrganization, "missing"); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("unknown token: %v", err)
	}
}

// TestCacheDropsTheLeastRecentlyUsedTokenWhenFull fills the token map to its bound and adds
// one more: only the token used longest ago must be looked up again; the others, and the
// one just used, stay cached.
func TestCacheDropsTheLeastRecentlyUsedTokenWhenFull(t *testing.T) {
	principals := map[string]Principal{}
	for i := range cacheLimit + 1 {
		principals[strconv.Itoa(i)] = Principal{Kind: KindOrganization}
	}
	store := &countingResolver{principal: principals}
	c := NewCache(store, time.Minute, time.Now, nil)
	resolve := func(hash string) {
		t.Helper()
		if _, err := c.ResolveToken(context.Background(), TokenOrganization, hash); err != nil {
			t.Fatal(err)
		}
	}
	for i := range cacheLimit {
		resolve(strconv.Itoa(i))
	}
	resolve("0")                      // the oldest entry becomes the most recently used
	resolve(strconv.Itoa(cacheLimit)) // one past the bound: "1" is now the least recently used
	tests := []struct {
		name   string
		hash   string
		lookup bool
	}{
		{"the token used just before the map filled is still cached", "0", false},
		{"a token used after it is still cached", "2", false},
		{"the token that overflowed the map is cached", strconv.Itoa(cacheLimit), false},
		{"the least recently used token was dropped", "1", true}, // last: its lookup evicts another
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := store.calls.Load()
			resolve(tt.hash)
			if looked := store.calls.Load() > before; looked != tt.lookup {
				t.Errorf("token %s reached the store: %v, want %v", tt.hash, looked, tt.lookup)
			}
		})
	}
}

// TestCacheKeepsSessionsOnlyWhileChangesAreAnnounced walks what may happen around a session
// lookup and counts the lookups that reach the store for two requests in a row: 1 when the
// first answer was kept, 2 when it was not.
func TestCacheKeepsSessionsOnlyWhileChangesAreAnnounced(t *testing.T) {
	tests := []struct {
		name      string
		listening bool
		between   func(c *Cache, f *feed) // after the first request
		during    func(c *Cache, f *feed) // inside the first lookup
		calls     int64
	}{
		{"listening: kept", true, nil, nil, 1},
		{"not listening: not kept", false, nil, nil, 2},
		{"a notification forgets it", true, func(c *Cache, _ *feed) { c.ForgetSessions() }, nil, 2},
		{"a flush while the lookup reads: not kept", true, nil, func(c *Cache, _ *feed) { c.ForgetSessions() }, 2},
		{"the feed lost while the lookup reads: not kept", true, nil, func(_ *Cache, f *feed) { f.on.Store(false) }, 2},
		{"the feed back while the lookup reads: not kept", false, nil, func(_ *Cache, f *feed) { f.on.Store(true) }, 2},
		{"organization tokens outlive a flush", true, func(c *Cache, _ *feed) { c.ForgetSessions() }, nil, 1},
		{"organization tokens: forgotten on their own notification", true, func(c *Cache, _ *feed) { c.ForgetTokens() }, nil, 2},
		{"sessions outlive the tokens' notification", true, func(c *Cache, _ *feed) { c.ForgetTokens() }, nil, 1},
		{"organization tokens: a flush while the lookup reads: not kept", true, nil, func(c *Cache, _ *feed) { c.ForgetTokens() }, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, hash := TokenCustomerSession, "cst"
			if strings.HasPrefix(tt.name, "organization tokens") {
				kind, hash = TokenOrganization, "org"
			}
			f := &feed{}
			f.on.Store(tt.listening)
			store := &countingResolver{principal: map[string]Principal{"cst": {Kind: KindCustomerSession}, "org": {Kind: KindOrganization}}}
			c := NewCache(store, time.Minute, time.Now, f)
			if tt.during != nil {
				store.during = func() { tt.during(c, f); store.during = nil }
			}
			for i := range 2 {
				if _, err := c.ResolveToken(context.Background(), kind, hash); err != nil {
					t.Fatal(err)
				}
				if i == 0 && tt.between != nil {
					tt.between(c, f)
				}
			}
			if got := store.calls.Load(); got != tt.calls {
				t.Errorf("store lookups = %d, want %d", got, tt.calls)
			}
		})
	}
}

// TestCacheNeverKeepsASessionReadBeforeAFlush races lookups against changes and their
// flushes: no request that starts after a flush returned may see what was read before the
// change that flush announced.
func TestCacheNeverKeepsASessionReadBeforeAFlush(t *testing.T) {
	var version, flushed atomic.Int64 // the store's current version; the last one announced
	store := resolverFunc(func(context.Context, TokenKind, string) (Principal, error) {
		v := version.Load()
		time.Sleep(50 * time.Microsecond) // a change may commit while the lookup reads
		return Principal{Kind: KindCustomerSession, MemberRole: strconv.FormatInt(v, 10)}, nil
	})
	f := &feed{}
	f.on.Store(true)
	c := NewCache(store, time.Minute, time.Now, f)
	var stale, answers atomic.Int64
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				runtime.Gosched() // leave the flushing goroutine its turns on a small machine
				floor := flushed.Load()
				p, err := c.ResolveToken(context.Background(), TokenCustomerSession, "cst")
				if err != nil {
					t.Error(err)
					return
				}
				answers.Add(1)
				if got, _ := strconv.ParseInt(p.MemberRole, 10, 64); got < floor {
					stale.Add(1)
				}
			}
		}()
	}
	for range 200 {
		v := version.Add(1) // the change commits...
		c.ForgetSessions()  // ...and its notification arrives
		flushed.Store(v)
		time.Sleep(100 * time.Microsecond)
	}
	close(done)
	wg.Wait()
	if n := stale.Load(); n != 0 {
		t.Errorf("%d of %d answers were older than a flush that had returned before the request began", n, answers.Load())
	}
	if answers.Load() < 1000 {
		t.Errorf("only %d answers: the race did not run", answers.Load())
	}
}

type resolverFunc func(context.Context, TokenKind, string) (Principal, error)

func (f resolverFunc) ResolveToken(ctx context.Context, k TokenKind, h string) (Principal, error) {
	return f(ctx, k, h)
}

// TestCacheStampIsCurrentWhileTheAnswerIsKept checks a stamp against what the cache does:
// it must be current exactly when asking again would be answered from the cache, so a
// connection that skips its lookups while it holds one misses no revocation, flush or
// expiry.
func TestCacheStampIsCurrentWhileTheAnswerIsKept(t *testing.T) {
	t0 := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	expiry := t0.Add(2 * time.Second)
	tests := []struct {
		name      string
		kind      TokenKind
		hash      string
		ttl       time.Duration
		listening bool
		between   func(c *Cache, f *feed, clock *time.Time) // after the first lookup
		during    func(c *Cache, f *feed)                   // inside the first lookup
		current   bool
	}{
		{"token kept", TokenOrganization, "org", time.Minute, false, nil, nil, true},
		{"token hit", TokenOrganization, "org", time.Minute, false, func(c *Cache, _ *feed, _ *time.Time) {
			_, _ = c.ResolveToken(context.Background(), TokenOrganization, "org")
		}, nil, true},
		{"token revoked: its notification", TokenOrganization, "org", time.Minute, false, func(c *Cache, _ *feed, _ *time.Time) { c.ForgetTokens() }, nil, false},
		{"token: flushed while it was read", TokenOrganization, "org", time.Minute, false, nil, func(c *Cache, _ *feed) { c.ForgetTokens() }, false},
		{"token: the sessions' notification", TokenOrganization, "org", time.Minute, false, func(c *Cache, _ *feed, _ *time.Time) { c.ForgetSessions() }, nil, true},
		{"token: ttl passed", TokenOrganization, "org", time.Minute, false, func(_ *Cache, _ *feed, clock *time.Time) { *clock = t0.Add(time.Minute) }, nil, false},
		{"token: just before the ttl", TokenOrganization, "org", time.Minute, false, func(_ *Cache, _ *feed, clock *time.Time) { *clock = t0.Add(time.Minute - 1) }, nil, true},
		{"token: its own expiry passed", TokenOrganization, "expiring", time.Minute, false, func(_ *Cache, _ *feed, clock *time.Time) { *clock = expiry }, nil, false},
		{"zero ttl: nothing kept", TokenOrganization, "org", 0, false, nil, nil, false},
		{"other credentials: never kept", TokenOAuthAccess, "oauth", time.Minute, true, nil, nil, false},
		{"session with the feed listening", TokenCustomerSession, "cst", time.Minute, true, nil, nil, true},
		{"session without the feed: not kept", TokenCustomerSession, "cst", time.Minute, false, nil, nil, false},
		{"session: a change announced", TokenCustomerSession, "cst", time.Minute, true, func(c *Cache, _ *feed, _ *time.Time) { c.ForgetSessions() }, nil, false},
		{"session: the feed lost while it was read", TokenCustomerSession, "cst", time.Minute, true, nil, func(_ *Cache, f *feed) { f.on.Store(false) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := t0
			f := &feed{}
			f.on.Store(tt.listening)
			store := &countingResolver{principal: map[string]Principal{"org": {Kind: KindOrganization}, "oauth": {Kind: KindUser},
				"cst": {Kind: KindCustomerSession}, "expiring": {Kind: KindOrganization, ExpiresAt: &expiry}}}
			c := NewCache(store, tt.ttl, func() time.Time { return clock }, f)
			if tt.during != nil {
				store.during = func() { tt.during(c, f); store.during = nil }
			}
			_, stamp, err := c.ResolveStamped(context.Background(), tt.kind, tt.hash)
			if err != nil {
				t.Fatal(err)
			}
			if tt.between != nil {
				tt.between(c, f, &clock)
			}
			if stamp.Current() != tt.current {
				t.Fatalf("stamp current: %v, want %v", stamp.Current(), tt.current)
			}
			before := store.calls.Load()
			if _, err := c.ResolveToken(context.Background(), tt.kind, tt.hash); err != nil {
				t.Fatal(err)
			}
			if fromCache := store.calls.Load() == before; fromCache != tt.current {
				t.Errorf("the next lookup answered from the cache: %v, while the stamp was current: %v", fromCache, tt.current)
			}
		})
	}
	var zero Stamp
	if zero.Current() {
		t.Error("the zero Stamp is current")
	}

	// A hit's stamp ends with the entry: at its ttl, or at a flush.
	clock := t0
	c := NewCache(&countingResolver{principal: map[string]Principal{"org": {Kind: KindOrganization}}}, time.Minute, func() time.Time { return clock }, nil)
	_, _ = c.ResolveToken(context.Background(), TokenOrganization, "org")
	clock = t0.Add(30 * time.Second)
	_, hit, _ := c.ResolveStamped(context.Background(), TokenOrganization, "org")
	if clock = t0.Add(time.Minute - 1); !hit.Current() {
		t.Error("a hit's stamp is not current within the entry's ttl")
	}
	if clock = t0.Add(time.Minute); hit.Current() {
		t.Error("a hit's stamp outlives the entry it was read from")
	}
	clock = t0
	if c.ForgetTokens(); hit.Current() {
		t.Error("a hit's stamp outlives a flush")
	}
}
