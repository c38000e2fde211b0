package ratelimit

import (
	"errors"
	"fmt"
	"time"
)

// Limit is one rule: at most Rate requests per Interval for each key, and a
// key that goes over is refused for Block.
type Limit struct {
	// Rate is the number of requests allowed per Interval; 0 disables the rule.
	Rate int
	// Interval is the window length.
	Interval time.Duration
	// Block is how long a key that exceeded Rate is refused. Requests during
	// the block do not extend it, so a client honouring Retry-After gets back
	// in. With 0 the key is refused only until its window ends.
	Block time.Duration
}

// Enabled reports whether the rule limits anything.
func (l Limit) Enabled() bool { return l.Rate > 0 }

// Validate rejects a rule that cannot be enforced as written.
func (l Limit) Validate() error {
	switch {
	case l.Rate < 0:
		return fmt.Errorf("rate %d is negative", l.Rate)
	case l.Rate == 0:
		return nil
	case l.Interval <= 0:
		return fmt.Errorf("interval %s must be positive when rate is set", l.Interval)
	case l.Block < 0:
		return fmt.Errorf("block %s is negative", l.Block)
	}
	return nil
}

// Config holds both rules of the license-key endpoints.
type Config struct {
	// PerIP counts calls by client address.
	PerIP Limit
	// PerKey counts calls by the (organization_id, key) pair they name.
	PerKey Limit
}

// DefaultConfig is upstream's per-IP rule (3 per second, 60-second block)
// plus a per-key rule of 30 per second with a 10-second block: loose enough
// that a fleet of machines starting one app together is not refused, and
// short enough that whoever floods a key they learnt cannot lock its owner
// out for long.
func DefaultConfig() Config {
	return Config{
		PerIP:  Limit{Rate: 3, Interval: time.Second, Block: time.Minute},
		PerKey: Limit{Rate: 30, Interval: time.Second, Block: 10 * time.Second},
	}
}

// Validate reports every invalid field, named as in the struct.
func (c Config) Validate() error {
	var errs []error
	if err := c.PerIP.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("ratelimit: PerIP: %w", err))
	}
	if err := c.PerKey.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("ratelimit: PerKey: %w", err))
	}
	return errors.Join(errs...)
}
