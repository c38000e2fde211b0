package ratelimit

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func newTestLimiter(t testing.TB, l Limit) *Limiter {
	t.Helper()
	lim, err := NewLimiter(l)
	if err != nil {
		t.Fatal(err)
	}
	return lim
}

func TestLimiterSequences(t *testing.T) {
	type step struct {
		at    time.Duration // offset from the test's start
		key   string
		ok    bool
		retry time.Duration
	}
	upstream := Limit{Rate: 3, Interval: time.Second, Block: time.Minute}
	ms := time.Millisecond
	tests := []struct {
		name  string
		limit Limit
		steps []step
	}{
		{
			name:  "rate requests pass, the next starts a block",
			limit: upstream,
			steps: []step{
				{0, "a", true, 0},
				{100 * ms, "a", true, 0},
				{200 * ms, "a", true, 0},
				{300 * ms, "a", false, time.Minute},
			},
		},
		{
			name:  "retries during a block see it shrink and do not extend it",
			limit: upstream,
			steps: []step{
				{0, "a", true, 0}, {0, "a", true, 0}, {0, "a", true, 0},
				{0, "a", false, time.Minute},
				{10 * time.Second, "a", false, 50 * time.Second},
				{59*time.Second + 999*ms, "a", false, ms},
				{time.Minute, "a", true, 0},
			},
		},
		{
			name:  "the window opens at the key's first request and resets after Interval",
			limit: upstream,
			steps: []step{
				{500 * ms, "a", true, 0}, {600 * ms, "a", true, 0}, {1400 * ms, "a", true, 0},
				{1500 * ms, "a", true, 0}, {1600 * ms, "a", true, 0}, {1700 * ms, "a", true, 0},
				{1800 * ms, "a", false, time.Minute},
			},
		},
		{
			name:  "keys are independent",
			limit: Limit{Rate: 1, Interval: time.Second, Block: time.Minute},
			steps: []step{
				{0, "a", true, 0},
				{0, "b", true, 0},
				{0, "a", false, time.Minute},
				{0, "b", false, time.Minute},
				{0, "c", true, 0},
			},
		},
		{
			name:  "without a block the key waits for the end of its window",
			limit: Limit{Rate: 2, Interval: time.Second},
			steps: []step{
				{0, "a", true, 0}, {0, "a", true, 0},
				{300 * ms, "a", false, 700 * ms},
				{900 * ms, "a", false, 100 * ms},
				{time.Second, "a", true, 0},
			},
		},
		{
			name:  "a block shorter than the window starts a fresh window",
			limit: Limit{Rate: 1, Interval: 10 * time.Second, Block: time.Second},
			steps: []step{
				{0, "a", true, 0},
				{0, "a", false, time.Second},
				{time.Second, "a", true, 0},
				{time.Second, "a", false, time.Second},
			},
		},
		{
			name:  "rate 0 disables the limit",
			limit: Limit{},
			steps: []step{{0, "a", true, 0}, {0, "a", true, 0}, {0, "a", true, 0}, {0, "a", true, 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := newTestLimiter(t, tt.limit)
			start := time.Now()
			for i, s := range tt.steps {
				ok, retry := lim.Allow(s.key, start.Add(s.at))
				if ok != s.ok || retry != s.retry {
					t.Fatalf("step %d (%s at %s): got (%v, %s), want (%v, %s)",
						i, s.key, s.at, ok, retry, s.ok, s.retry)
				}
			}
		})
	}
}

func TestNewLimiterRejectsInvalidLimits(t *testing.T) {
	for _, l := range []Limit{
		{Rate: -1, Interval: time.Second},
		{Rate: 1},
		{Rate: 1, Interval: -time.Second},
		{Rate: 1, Interval: time.Second, Block: -time.Second},
	} {
		if _, err := NewLimiter(l); err == nil {
			t.Errorf("NewLimiter(%+v) succeeded", l)
		}
	}
}

func TestSweepDropsOnlyExpiredKeys(t *testing.T) {
	lim := newTestLimiter(t, Limit{Rate: 1, Interval: time.Second, Block: time.Minute})
	start := time.Now()
	for i := range 100 {
		lim.Allow("idle"+strconv.Itoa(i), start)
	}
	lim.Allow("blocked", start)
	lim.Allow("blocked", start)

	if got := lim.Sweep(start.Add(999 * time.Millisecond)); got != 0 {
		t.Fatalf("sweep inside the window removed %d keys", got)
	}
	if got := lim.Sweep(start.Add(time.Second)); got != 100 {
		t.Fatalf("sweep after the window removed %d keys, want 100", got)
	}
	if got := lim.Len(); got != 1 {
		t.Fatalf("Len = %d after sweep, want the blocked key only", got)
	}
	if ok, _ := lim.Allow("blocked", start.Add(30*time.Second)); ok {
		t.Fatal("the sweep lost a live block")
	}
	lim.Sweep(start.Add(time.Minute))
	if got := lim.Len(); got != 0 {
		t.Fatalf("Len = %d after the block ended, want 0", got)
	}
}

// Allow must keep the table bounded on its own: keys that stopped calling
// disappear once new traffic arrives, without Sweep or a goroutine.
func TestAllowSweepsStaleKeysLazily(t *testing.T) {
	lim := newTestLimiter(t, Limit{Rate: 1, Interval: time.Second, Block: time.Minute})
	start := time.Now()
	const burst = 100_000
	for i := range burst {
		lim.Allow("burst"+strconv.Itoa(i), start)
	}
	if got := lim.Len(); got < burst/2 {
		t.Fatalf("Len = %d right after the burst; entries were dropped while live", got)
	}
	later := start.Add(time.Minute)
	const fresh = 50 * shardCount // enough that every shard sees a request
	for i := range fresh {
		lim.Allow("later"+strconv.Itoa(i), later)
	}
	if got := lim.Len(); got > fresh {
		t.Fatalf("Len = %d after max(Interval, Block); stale keys were kept", got)
	}
}

// The growth trigger alone bounds a shard under a flood of new keys whose
// windows keep expiring, even before max(Interval, Block) has passed.
func TestAllowSweepsOnGrowth(t *testing.T) {
	lim := newTestLimiter(t, Limit{Rate: 1, Interval: time.Millisecond, Block: time.Hour})
	start := time.Now()
	const total = 200_000
	for i := range total {
		lim.Allow("k"+strconv.Itoa(i), start.Add(time.Duration(i)*time.Millisecond))
	}
	if got, limit := lim.Len(), 2*minSweepLen*shardCount; got > limit {
		t.Fatalf("Len = %d after %d single-use keys, want at most %d", got, total, limit)
	}
}

func TestConcurrentRequestsOnOneKeyGetExactlyRate(t *testing.T) {
	const rate, goroutines = 10, 200
	lim := newTestLimiter(t, Limit{Rate: rate, Interval: time.Second, Block: time.Minute})
	now := time.Now()
	var allowed atomic.Int64
	race(goroutines, func(int) {
		if ok, _ := lim.Allow("one", now); ok {
			allowed.Add(1)
		}
	})
	if got := allowed.Load(); got != rate {
		t.Fatalf("%d of %d concurrent requests allowed, want exactly %d", got, goroutines, rate)
	}
}

func TestConcurrentRequestsOnManyKeysGetExactlyRateEach(t *testing.T) {
	const rate, keys, perKey = 5, 64, 20
	lim := newTestLimiter(t, Limit{Rate: rate, Interval: time.Second, Block: time.Minute})
	now := time.Now()
	var allowed [keys]atomic.Int64
	race(keys*perKey, func(i int) {
		k := i % keys
		if ok, _ := lim.Allow("key"+strconv.Itoa(k), now); ok {
			allowed[k].Add(1)
		}
	})
	for k := range allowed {
		if got := allowed[k].Load(); got != rate {
			t.Errorf("key %d: %d of %d allowed, want exactly %d", k, got, perKey, rate)
		}
	}
}

// race runs f in n goroutines released at the same moment.
func race(n int, f func(i int)) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(n)
	done.Add(n)
	for i := range n {
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			f(i)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
}

func BenchmarkAllow(b *testing.B) {
	for _, keys := range []int{1, 1024, 65536} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			lim := newTestLimiter(b, Limit{Rate: 1 << 30, Interval: time.Hour, Block: time.Minute})
			names := make([]string, keys)
			for i := range names {
				names[i] = "198.18." + strconv.Itoa(i>>8) + "." + strconv.Itoa(i&255)
			}
			now := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					lim.Allow(names[i%len(names)], now)
					i++
				}
			})
		})
	}
}

func TestSpendCountsWeightedRequests(t *testing.T) {
	type step struct {
		at        time.Duration
		n         int
		ok        bool
		remaining int
		reset     time.Duration
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"spends add up within the window", []step{
			{0, 40, true, 60, time.Minute},
			{10 * time.Second, 60, true, 0, 50 * time.Second},
		}},
		{"a spend that does not fit is refused whole and spends nothing", []step{
			{0, 70, true, 30, time.Minute},
			{0, 31, false, 30, time.Minute},
			{0, 30, true, 0, time.Minute},
		}},
		{"more than the whole budget never fits", []step{
			{0, 101, false, 100, time.Minute},
		}},
		{"the window resets after its interval", []step{
			{0, 100, true, 0, time.Minute},
			{time.Minute, 100, true, 0, time.Minute},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := newTestLimiter(t, Limit{Rate: 100, Interval: time.Minute})
			start := time.Now()
			for i, s := range tt.steps {
				ok, remaining, reset := lim.Spend("p", s.n, start.Add(s.at))
				if ok != s.ok || remaining != s.remaining || reset != s.reset {
					t.Fatalf("step %d: got (%v, %d, %s), want (%v, %d, %s)", i, ok, remaining, reset, s.ok, s.remaining, s.reset)
				}
			}
		})
	}
}
