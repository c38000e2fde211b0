package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"till/storage"
)

// Handler does one attempt of a job. It writes its database effect in tx, which the worker
// commits together with the job's completion, so the effect exists exactly when the job is
// completed. An error fails the attempt and rolls tx back; Discard and Snooze say how.
// ctx ends at the worker's JobTimeout, which also rolls tx back.
type Handler func(ctx context.Context, tx *sqlx.Tx, job *storage.Job) error

// Worker claims and runs the jobs of one queue. Zero fields take the defaults noted on them;
// only DB is required. Several workers, in one process or many, may serve the same queue.
type Worker struct {
	DB *sqlx.DB
	// Queue is the queue served; default "default".
	Queue string
	// Concurrency is how many jobs run at once; default 10. It needs as many connections.
	Concurrency int
	// Handlers maps a job kind to its handler. A job of another kind is discarded.
	Handlers map[string]Handler
	// Backoff is the wait before retrying a failed attempt; default DefaultBackoff.
	Backoff func(attempt int) time.Duration
	// Wake, when set, makes Run look for jobs at once instead of at its next poll: send on
	// it (without blocking) when a job becomes runnable, as the notifications on
	// storage.JobsChannel say, so the job starts without waiting.
	Wake <-chan struct{}
	// PollInterval is the longest Run sleeps when the queue ran dry; default 1 s. Run also
	// wakes when the earliest scheduled job falls due (a retry after backoff, a snooze), so
	// with Wake fed by notifications the poll is only a safety net and may be long.
	PollInterval time.Duration
	// JobTimeout bounds one attempt; default 1 minute. It must be below StuckAfter, so an
	// attempt has ended before its job can be rescued.
	JobTimeout time.Duration
	// StuckAfter is how long a job may stay running before it is taken for the attempt of a
	// dead worker and rescued; default 5 minutes. Attempts are stamped by the database's
	// clock and compared with the worker's, which must agree well within this.
	StuckAfter time.Duration
	// RescueInterval is how often Run rescues stuck jobs; default 1 minute.
	RescueInterval time.Duration
	// Logger receives failures and lost jobs; default slog.Default().
	Logger *slog.Logger
	// ID names the worker in attempted_by; default host:pid.
	ID string
}

// settled is a Worker with its defaults applied, so Run and RunOnce never read a zero field.
type settled struct{ Worker }

func (w *Worker) settle() (*settled, error) {
	if w.DB == nil {
		return nil, errors.New("jobs: Worker.DB is required")
	}
	s := &settled{*w}
	s.Queue = cmp.Or(s.Queue, "default")
	s.Concurrency = cmp.Or(max(s.Concurrency, 0), 10)
	if s.Backoff == nil {
		s.Backoff = DefaultBackoff
	}
	s.PollInterval = cmp.Or(s.PollInterval, time.Second)
	s.JobTimeout = cmp.Or(s.JobTimeout, time.Minute)
	s.StuckAfter = cmp.Or(s.StuckAfter, 5*time.Minute)
	s.RescueInterval = cmp.Or(s.RescueInterval, time.Minute)
	s.Logger = cmp.Or(s.Logger, slog.Default())
	if s.ID == "" {
		host, _ := os.Hostname()
		s.ID = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	if s.JobTimeout >= s.StuckAfter {
		return nil, fmt.Errorf("jobs: JobTimeout %s must be below StuckAfter %s", s.JobTimeout, s.StuckAfter)
	}
	return s, nil
}

// RunOnce claims up to Concurrency jobs, runs them and returns when all have finished,
// with the number claimed. Failed attempts are recorded on their jobs, not returned; the
// error reports a failed claim or a failure to record an outcome.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	s, err := w.settle()
	if err != nil {
		return 0, err
	}
	jobs, err := s.claim(ctx, s.Concurrency)
	if err != nil {
		return 0, fmt.Errorf("jobs: claiming: %w", err)
	}
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, job := range jobs {
		wg.Go(func() { _, errs[i] = s.execute(ctx, job) })
	}
	wg.Wait()
	return len(jobs), errors.Join(errs...)
}

// Run claims and runs jobs until ctx is done, then stops claiming and waits for the running
// attempts, which keep their own JobTimeout rather than ending with ctx, so a graceful
// shutdown finishes them. It rescues stuck jobs every RescueInterval. It returns nil after a
// shutdown; claim and database failures are logged and retried, not returned.
func (w *Worker) Run(ctx context.Context) error {
	s, err := w.settle()
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	done := make(chan time.Time, s.Concurrency) // when the finished job runs again, or zero
	running := 0
	var rescued time.Time
	for ctx.Err() == nil {
		if time.Since(rescued) >= s.RescueInterval {
			s.rescue(ctx)
			rescued = time.Now()
		}
		free := s.Concurrency - running
		busy := free == 0
		if free > 0 {
			jobs, err := s.claim(ctx, free)
			if err != nil && ctx.Err() == nil {
				s.Logger.Error("jobs: claiming failed", "queue", s.Queue, "err", err)
			}
			for _, job := range jobs {
				wg.Go(func() {
					again, err := s.execute(ctx, job)
					if err != nil {
						s.Logger.Error("jobs: recording an outcome failed", "job", job.ID, "kind", job.Kind, "err", err)
					}
					done <- again
				})
			}
			running += len(jobs)
			busy = len(jobs) == free
		}
		sleep := min(s.PollInterval, s.RescueInterval-time.Since(rescued))
		if !busy {
			sleep = min(sleep, s.nextDue(ctx))
		}
		running -= s.wait(ctx, done, busy, sleep)
	}
	return nil
}

// minSleep keeps a worker from spinning when a job is due but another worker holds it.
const minSleep = 50 * time.Millisecond

// nextDue is how long until the earliest scheduled job of the queue is due, at least
// minSleep; PollInterval when there is none or the question fails.
func (s *settled) nextDue(ctx context.Context) time.Duration {
	in, ok, err := storage.NextJobIn(ctx, s.DB, s.Queue)
	if err != nil && ctx.Err() == nil {
		s.Logger.Error("jobs: reading the next due time failed", "queue", s.Queue, "err", err)
	}
	if err != nil || !ok {
		return s.PollInterval
	}
	return max(in, minSleep)
}

// claim claims up to n jobs. It does not stop halfway when ctx ends: a claim that committed
// while its answer was abandoned would leave jobs running that no one runs until a rescue.
func (s *settled) claim(ctx context.Context, n int) ([]*storage.Job, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), outcomeTimeout)
	defer cancel()
	return storage.ClaimJobs(ctx, s.DB, s.Queue, s.ID, n)
}

// wait blocks until there is reason to claim again and returns how many jobs finished
// meanwhile. With every slot busy a finished job is reason enough (more jobs may be
// waiting); otherwise the queue ran dry and it waits for Wake or for sleep to pass, sleeping
// no later than the retry of a job that failed meanwhile.
func (s *settled) wait(ctx context.Context, done <-chan time.Time, busy bool, sleep time.Duration) int {
	if busy {
		select {
		case <-ctx.Done():
			return 0
		case <-done:
			return 1
		}
	}
	until := time.Now().Add(max(sleep, 0))
	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	finished := 0
	for {
		select {
		case <-ctx.Done():
			return finished
		case again := <-done:
			finished++
			if !again.IsZero() && again.Before(until) {
				until = again
				timer.Reset(max(time.Until(until), minSleep))
			}
		case <-s.Wake:
			return finished
		case <-timer.C:
			return finished
		}
	}
}

// rescue returns the jobs of dead workers to the queue.
func (s *settled) rescue(ctx context.Context) {
	n, err := storage.RescueJobs(ctx, s.DB, time.Now().Add(-s.StuckAfter))
	if err != nil && ctx.Err() == nil {
		s.Logger.Error("jobs: rescuing stuck jobs failed", "err", err)
	} else if n > 0 {
		s.Logger.Warn("jobs: rescued jobs of workers that stopped", "count", n)
	}
}
