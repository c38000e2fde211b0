package ratelimit

import (
	"fmt"
	"hash/maphash"
	"sync"
	"time"
)

// shardCount spreads keys over independent mutexes so concurrent requests
// for different clients rarely wait on each other.
const shardCount = 64

// minSweepLen is the shard size below which growth alone never triggers a
// sweep; small tables are cheaper to keep than to scan.
const minSweepLen = 256

// Limiter counts requests per key with a fixed window that each key opens
// with its own first request, so windows of different keys do not reset in
// lockstep. A key may make Rate requests per window; the request that goes
// over starts a block of Limit.Block. A fixed window keeps an entry at a few
// words, where a sliding log would hold one timestamp per request; the cost
// is that up to 2×Rate can pass across a window boundary without a block.
//
// Memory is bounded without a goroutine: each shard drops expired entries
// when it has doubled in size since its last sweep or when
// max(Interval, Block) has passed, and rebuilds its map after a large
// shrink because Go maps never return memory on delete. Sweep does the same
// on demand for all shards.
//
// A Limiter is safe for concurrent use. Times are taken relative to its
// creation, so a time.Now with a monotonic reading is immune to wall-clock
// steps.
type Limiter struct {
	limit  Limit
	epoch  time.Time
	seed   maphash.Seed
	keep   time.Duration
	shards [shardCount]shard
}

type shard struct {
	mu        sync.Mutex
	entries   map[string]entry
	sweepLen  int           // sweep when the map reaches this size
	nextSweep time.Duration // sweep when the clock reaches this
	peak      int           // largest size since the map was last rebuilt
	_         [64]byte      // keeps neighbouring mutexes off one cache line
}

// entry is one key's state; times are offsets from Limiter.epoch.
type entry struct {
	start   time.Duration // when the current window opened
	until   time.Duration // window end, or block end when blocked
	count   int
	blocked bool
}

// NewLimiter returns a limiter enforcing l; a disabled l allows everything.
func NewLimiter(l Limit) (*Limiter, error) {
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("ratelimit: %w", err)
	}
	return &Limiter{
		limit: l,
		epoch: time.Now(),
		seed:  maphash.MakeSeed(),
		keep:  max(l.Interval, l.Block),
	}, nil
}

// Allow counts one request for key at now. When it is refused, retryAfter
// is how long until the key may try again (the rest of its block, or of its
// window when Block is 0); it is always positive then, and 0 when allowed.
func (l *Limiter) Allow(key string, now time.Time) (ok bool, retryAfter time.Duration) {
	ok, _, wait := l.Spend(key, 1, now)
	if ok {
		return true, 0
	}
	return false, wait
}

// Spend counts n units for key at now, as one request weighing n: a budget of
// points rather than a count of requests. A spend that does not fit in what
// is left of the window is refused whole and spends nothing (it starts a
// block when Block is set). remaining is what the window has left after the
// spend; reset is how long until the window (or block) ends, when a refused
// key may try again. A disabled limiter allows everything and reports 0 for
// both.
func (l *Limiter) Spend(key string, n int, now time.Time) (ok bool, remaining int, reset time.Duration) {
	if !l.limit.Enabled() {
		return true, 0, 0
	}
	at := now.Sub(l.epoch)
	s := l.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prepare(at, l.keep)

	e, found := s.entries[key]
	if found && e.blocked && at < e.until {
		return false, 0, e.until - at
	}
	if !found || at >= e.until {
		e = entry{start: at, until: at + l.limit.Interval}
	}
	if n <= l.limit.Rate-e.count {
		e.count += n
		s.entries[key] = e
		return true, l.limit.Rate - e.count, e.until - at
	}
	if l.limit.Block > 0 {
		e.blocked, e.until = true, at+l.limit.Block
	}
	s.entries[key] = e
	return false, max(0, l.limit.Rate-e.count), e.until - at
}

// Sweep drops every entry that has expired at now and returns how many it
// dropped. Allow sweeps on its own; Sweep lets a caller reclaim memory
// after a burst that is followed by silence.
func (l *Limiter) Sweep(now time.Time) int {
	at := now.Sub(l.epoch)
	removed := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		if s.entries != nil {
			removed += s.sweep(at, l.keep)
		}
		s.mu.Unlock()
	}
	return removed
}

// Len is the number of keys currently tracked, expired or not.
func (l *Limiter) Len() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += len(s.entries)
		s.mu.Unlock()
	}
	return n
}

func (l *Limiter) shard(key string) *shard {
	return &l.shards[maphash.String(l.seed, key)%shardCount]
}

// prepare creates the map on first use and sweeps when the shard is due.
func (s *shard) prepare(at, keep time.Duration) {
	if s.entries == nil {
		s.entries = make(map[string]entry)
		s.sweepLen = minSweepLen
		s.nextSweep = at + keep
		return
	}
	if len(s.entries) >= s.sweepLen || at >= s.nextSweep {
		s.sweep(at, keep)
	}
}

// sweep deletes expired entries and schedules the next sweep. Entries the
// sweep keeps are still within their window or block, so dropping expired
// ones never changes a decision: Allow treats a missing and an expired
// entry alike.
func (s *shard) sweep(at, keep time.Duration) int {
	before := len(s.entries)
	s.peak = max(s.peak, before)
	for k, e := range s.entries {
		if at >= e.until {
			delete(s.entries, k)
		}
	}
	n := len(s.entries)
	if s.peak >= 4*minSweepLen && n < s.peak/4 {
		rebuilt := make(map[string]entry, n)
		for k, e := range s.entries {
			rebuilt[k] = e
		}
		s.entries, s.peak = rebuilt, n
	}
	s.sweepLen = max(minSweepLen, 2*n)
	s.nextSweep = at + keep
	return before - n
}
