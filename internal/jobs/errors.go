package jobs

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"till/storage"
)

// DiscardError tells the worker that retrying cannot help (malformed arguments, a target that
// no longer exists): the job is discarded now, with the error recorded.
type DiscardError struct{ Err error }

// Discard wraps err so the worker discards the job instead of retrying it.
func Discard(err error) error { return &DiscardError{Err: err} }

func (e *DiscardError) Error() string { return "discard: " + e.Err.Error() }

// Unwrap exposes the reason.
func (e *DiscardError) Unwrap() error { return e.Err }

// SnoozeError tells the worker to run the job again at Until without counting a failed
// attempt: the job is not ready yet (a resource is still being prepared, a rate limit asks
// to wait). The attempt's transaction is rolled back like a failure's.
type SnoozeError struct{ Until time.Time }

// Snooze asks for the job to run again at until.
func Snooze(until time.Time) error { return &SnoozeError{Until: until} }

func (e *SnoozeError) Error() string { return "snoozed until " + e.Until.Format(time.RFC3339) }

// DecodeArgs unmarshals the job's arguments into v. Arguments that do not decode will never
// decode, so the error it returns discards the job.
func DecodeArgs(job *storage.Job, v any) error {
	if err := json.Unmarshal(job.Args, v); err != nil {
		return Discard(fmt.Errorf("job %s (%s): arguments: %w", job.ID, job.Kind, err))
	}
	return nil
}

// DefaultBackoff is the wait before retrying after a failed attempt (1 for the first):
// 2 s doubling per attempt, capped at 20 minutes, of which a random half is taken off
// ("equal jitter": the wait lies in [d/2, d]). Growing waits let a dependency recover
// instead of being hammered; the jitter spreads out jobs that failed together, so they do
// not come back together. With the default 25 attempts a job keeps trying for 2.6 to 5.2 hours.
func DefaultBackoff(attempt int) time.Duration {
	const base, ceiling = 2 * time.Second, 20 * time.Minute
	d := ceiling
	if attempt < 1 {
		attempt = 1
	}
	if attempt <= 10 { // 2s << 10 is already past the ceiling
		d = min(base<<(attempt-1), ceiling)
	}
	return d/2 + rand.N(d/2+1)
}
