package ratelimit

import (
	"fmt"
	"time"
)

// Failures throttles a check by its failures alone, for credentials that can be guessed:
// a key (a client id, an address) may fail Max times per window, opened by its first
// failure; then it is refused until the window ends, before the credential is checked. A
// refused attempt is not checked at all, so even the right credential is refused then and
// guessing gains nothing, while the answer costs no more than a map lookup. Successes are
// neither counted nor slowed.
//
// Failures is safe for concurrent use; memory is bounded as for [Limiter].
type Failures struct {
	l *Limiter
}

// NewFailures allows max failures per window for each key.
func NewFailures(max int, window time.Duration) (*Failures, error) {
	if max <= 0 {
		return nil, fmt.Errorf("ratelimit: failures: max %d must be positive", max)
	}
	l, err := NewLimiter(Limit{Rate: max, Interval: window})
	if err != nil {
		return nil, err
	}
	return &Failures{l: l}, nil
}

// Refused reports whether key has used up its failures at now, and how long until its
// window ends. It counts nothing.
func (f *Failures) Refused(key string, now time.Time) (bool, time.Duration) {
	return f.l.exhausted(key, now)
}

// Fail counts one failure of key at now.
func (f *Failures) Fail(key string, now time.Time) {
	f.l.Allow(key, now)
}

// exhausted reports, without counting, whether Allow would refuse key at now, and for how
// long.
func (l *Limiter) exhausted(key string, now time.Time) (bool, time.Duration) {
	if !l.limit.Enabled() {
		return false, 0
	}
	at := now.Sub(l.epoch)
	s := l.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, found := s.entries[key]
	if !found || at >= e.until || (!e.blocked && e.count < l.limit.Rate) {
		return false, 0
	}
	return true, e.until - at
}
