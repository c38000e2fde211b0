package ratelimit

import (
	"context"
	"crypto/sha256"
	"time"
)

// Guard holds the two rules of the public license-key operations. Build one
// Guard and let validate, activate and deactivate all ask it, so they share
// one budget per address and per key, as upstream's single rule over the
// three paths does.
type Guard struct {
	perIP  *Limiter
	perKey *Limiter
	now    func() time.Time
}

// New builds a Guard for cfg.
func New(cfg Config) (*Guard, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	perIP, err := NewLimiter(cfg.PerIP)
	if err != nil {
		return nil, err
	}
	perKey, err := NewLimiter(cfg.PerKey)
	if err != nil {
		return nil, err
	}
	return &Guard{perIP: perIP, perKey: perKey, now: time.Now}, nil
}

// Allow counts one call on the key (org, key) by the client WithClientIP
// stored in ctx. The per-IP rule runs first, and a call it refuses is not
// counted against the key, so one address flooding a key cannot block its
// owner. A call without a client address (one Till makes in process, not
// over HTTP) is held to the per-key rule only. When refused, retryAfter is
// how long until the caller may try again.
func (g *Guard) Allow(ctx context.Context, org, key string) (ok bool, retryAfter time.Duration) {
	now := g.now()
	if ip, found := ClientIPFrom(ctx); found {
		if ok, wait := g.perIP.Allow(ip, now); !ok {
			return false, wait
		}
	}
	if !g.perKey.limit.Enabled() {
		return true, 0
	}
	return g.perKey.Allow(keyID(org, key), now)
}

// Sweep drops expired entries from both rules; see Limiter.Sweep.
func (g *Guard) Sweep(now time.Time) int {
	return g.perIP.Sweep(now) + g.perKey.Sweep(now)
}

// keyID hashes the pair so a limiter entry has a fixed size however long a
// client makes its key. The NUL cannot occur in a canonical UUID, so
// distinct pairs never share an input.
func keyID(org, key string) string {
	sum := sha256.Sum256([]byte(org + "\x00" + key))
	return string(sum[:])
}
