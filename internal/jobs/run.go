package jobs

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/jmoiron/sqlx"

	"till/storage"
)

// outcomeTimeout bounds the bookkeeping statements (claiming, recording a failure), which run
// outside an attempt's own deadline.
const outcomeTimeout = 30 * time.Second

// execute runs one claimed job and records how it ended, returning when the job is to run
// again (a retry or a snooze; zero when it is done with). The attempt gets its own deadline
// and outlives ctx, so a shutdown lets it finish. The error reports only a failure to record
// the outcome; the job then stays running until a rescue.
func (s *settled) execute(ctx context.Context, job *storage.Job) (time.Time, error) {
	ctx = context.WithoutCancel(ctx)
	attemptCtx, cancel := context.WithTimeout(ctx, s.JobTimeout)
	err := s.attempt(attemptCtx, job)
	if err != nil && errors.Is(attemptCtx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("timed out after %s: %w", s.JobTimeout, err)
	}
	cancel()
	if err == nil {
		return time.Time{}, nil
	}
	if errors.Is(err, storage.ErrJobLost) {
		s.lost(job)
		return time.Time{}, nil
	}
	ctx, cancel = context.WithTimeout(ctx, outcomeTimeout)
	defer cancel()
	failure := err
	again, err := s.record(ctx, job, failure)
	if err != nil {
		if errors.Is(err, storage.ErrJobLost) {
			s.lost(job)
			return time.Time{}, nil
		}
		return time.Time{}, fmt.Errorf("jobs: job %s: recording the failure %q: %w", job.ID, failure, err)
	}
	return again, nil
}

// attempt runs the handler and completes the job in one transaction.
func (s *settled) attempt(ctx context.Context, job *storage.Job) error {
	h, ok := s.Handlers[job.Kind]
	if !ok {
		return Discard(fmt.Errorf("no handler for job kind %q", job.Kind))
	}
	tx, err := s.DB.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	if err := s.call(ctx, h, tx, job); err != nil {
		return err
	}
	if err := storage.CompleteJob(ctx, tx, job.ID, job.Attempt); err != nil {
		return err
	}
	return tx.Commit()
}

// call runs a handler, turning a panic into a failed attempt so one bad job cannot take the
// worker down.
func (s *settled) call(ctx context.Context, h Handler, tx *sqlx.Tx, job *storage.Job) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.Logger.Error("jobs: handler panicked", "job", job.ID, "kind", job.Kind, "panic", r,
				"stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return h(ctx, tx, job)
}

// record stores a failed attempt's outcome: discarded, snoozed, or retried after backoff
// (discarded by storage once out of attempts). It returns when the job runs again, if it
// may: the worker sleeps no longer than that.
func (s *settled) record(ctx context.Context, job *storage.Job, failure error) (time.Time, error) {
	var discard *DiscardError
	var snooze *SnoozeError
	switch {
	case errors.As(failure, &snooze):
		return snooze.Until, storage.SnoozeJob(ctx, s.DB, job.ID, job.Attempt, snooze.Until)
	case errors.As(failure, &discard):
		s.Logger.Warn("jobs: job discarded", "job", job.ID, "kind", job.Kind, "attempt", job.Attempt, "err", failure)
		return time.Time{}, storage.DiscardJob(ctx, s.DB, job.ID, job.Attempt, discard.Err.Error())
	default:
		s.Logger.Warn("jobs: attempt failed", "job", job.ID, "kind", job.Kind, "attempt", job.Attempt, "err", failure)
		retry := time.Now().Add(s.Backoff(job.Attempt))
		err := storage.FailJob(ctx, s.DB, job.ID, job.Attempt, failure.Error(), retry)
		if job.Attempt >= job.MaxAttempts {
			return time.Time{}, err // discarded
		}
		return retry, err
	}
}

// lost notes an attempt whose job was rescued and taken over meanwhile; its effect was
// rolled back and the current attempt decides the job's fate.
func (s *settled) lost(job *storage.Job) {
	s.Logger.Warn("jobs: attempt lost its job to a rescue; its effect was rolled back",
		"job", job.ID, "kind", job.Kind, "attempt", job.Attempt)
}
