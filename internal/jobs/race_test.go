package jobs_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"till/internal/jobs"
	"till/storage"
)

// TestManyWorkersRunEveryJobExactlyOnce races eight workers, each with its own pool as if in
// its own process, over one queue: every job must complete, with one effect and one attempt.
func TestManyWorkersRunEveryJobExactlyOnce(t *testing.T) {
	db, dsn := newDB(t)
	const n, workers = 2000, 8
	err := storage.InTx(t.Context(), db, func(tx *sqlx.Tx) error {
		for range n {
			if _, _, err := storage.InsertJob(t.Context(), tx, storage.JobInsert{Kind: "effect"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	handlers := map[string]jobs.Handler{"effect": func(_ context.Context, tx *sqlx.Tx, job *storage.Job) error {
		return writeEffect(tx, job)
	}}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for i := range workers {
		pool, err := storage.Open(dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		w := &jobs.Worker{DB: pool, Concurrency: 4, PollInterval: 10 * time.Millisecond, Logger: quiet(),
			Handlers: handlers, ID: "worker-" + string(rune('a'+i))}
		wg.Go(func() {
			if i%2 == 0 {
				errs <- w.Run(ctx)
				return
			}
			for ctx.Err() == nil {
				if _, err := w.RunOnce(ctx); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		})
	}
	waitFor(t, db, 2*time.Minute, `SELECT count(*) = $1 FROM jobs WHERE state = 'completed'`, n)
	stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	var got struct {
		Completed, Attempts, Effects, Errors int
	}
	if err := db.Get(&got, `SELECT
		(SELECT count(*) FROM jobs WHERE state = 'completed') AS completed,
		(SELECT sum(attempt) FROM jobs) AS attempts,
		(SELECT count(*) FROM job_effects e JOIN jobs j ON j.id = e.job_id AND e.attempt = 1) AS effects,
		(SELECT count(*) FROM jobs WHERE errors <> '[]') AS errors`); err != nil {
		t.Fatal(err)
	}
	if got.Completed != n || got.Attempts != n || got.Effects != n || got.Errors != 0 {
		t.Errorf("completed %d, attempts %d, effects %d, jobs with errors %d; want %d, %d, %d, 0",
			got.Completed, got.Attempts, got.Effects, got.Errors, n, n, n)
	}
}

// waitFor polls until query (a boolean) holds.
func waitFor(t *testing.T, db *sqlx.DB, timeout time.Duration, query string, args ...any) {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(20 * time.Millisecond) {
		var ok bool
		if err := db.Get(&ok, query, args...); err != nil {
			t.Fatal(err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still not %s after %s", query, timeout)
		}
	}
}

// blockingHandler signals each attempt's start and holds it until released, then writes the
// effect.
func blockingHandler(started chan<- *storage.Job, release <-chan struct{}) jobs.Handler {
	return func(_ context.Context, tx *sqlx.Tx, job *storage.Job) error {
		started <- job
		<-release
		return writeEffect(tx, job)
	}
}

// TestAttemptOfARescuedJobCannotComplete lets a job be rescued and claimed elsewhere while its
// first attempt still runs: that attempt must fail to complete and roll its effect back,
// leaving the job to the attempt that holds it now.
func TestAttemptOfARescuedJobCannotComplete(t *testing.T) {
	db, _ := newDB(t)
	job := enqueue(t, db, storage.JobInsert{Kind: "slow"})
	worker := func(id string) (started chan *storage.Job, release chan struct{}, done chan error) {
		started, release, done = make(chan *storage.Job, 1), make(chan struct{}), make(chan error, 1)
		w := &jobs.Worker{DB: db, ID: id, Logger: quiet(), Handlers: map[string]jobs.Handler{"slow": blockingHandler(started, release)}}
		go func() {
			n, err := w.RunOnce(t.Context())
			if err == nil && n != 1 {
				err = fmt.Errorf("%s ran %d jobs, want 1", id, n)
			}
			done <- err
		}()
		return started, release, done
	}
	staleStarted, staleRelease, staleDone := worker("stale")
	<-staleStarted
	if n, err := storage.RescueJobs(t.Context(), db, time.Now().Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("RescueJobs = %d, %v", n, err)
	}
	currentStarted, currentRelease, currentDone := worker("current")
	<-currentStarted
	close(staleRelease)
	if err := <-staleDone; err != nil {
		t.Errorf("stale attempt: %v; a lost job is no error of the worker", err)
	}
	if attempts := effectAttempts(t, db, job.ID); len(attempts) != 0 {
		t.Errorf("effects after the stale attempt = %v, want none", attempts)
	}
	close(currentRelease)
	if err := <-currentDone; err != nil {
		t.Errorf("current attempt: %v", err)
	}
	if attempts := effectAttempts(t, db, job.ID); len(attempts) != 1 || attempts[0] != 2 {
		t.Errorf("effects by attempt = %v, want only attempt 2's", attempts)
	}
	got := readJob(t, db, job.ID)
	if got.State != storage.JobCompleted || got.Attempt != 2 {
		t.Errorf("job is %s at attempt %d, want completed at 2", got.State, got.Attempt)
	}
}

// TestRunFinishesRunningJobsOnShutdown cancels Run while a job runs: the job still completes,
// Run returns only after it, and nothing is claimed after the cancel.
func TestRunFinishesRunningJobsOnShutdown(t *testing.T) {
	db, _ := newDB(t)
	first := enqueue(t, db, storage.JobInsert{Kind: "slow"})
	started, release := make(chan *storage.Job, 2), make(chan struct{})
	w := &jobs.Worker{DB: db, Logger: quiet(), PollInterval: 10 * time.Millisecond,
		Handlers: map[string]jobs.Handler{"slow": blockingHandler(started, release)}}
	ctx, cancel := context.WithCancel(t.Context())
	returned := make(chan error, 1)
	go func() { returned <- w.Run(ctx) }()
	<-started
	cancel()
	second := enqueue(t, db, storage.JobInsert{Kind: "slow"})
	select {
	case err := <-returned:
		t.Fatalf("Run returned %v while a job was running", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-returned; err != nil {
		t.Errorf("Run = %v", err)
	}
	if got := readJob(t, db, first.ID); got.State != storage.JobCompleted {
		t.Errorf("running job ended %s, want completed", got.State)
	}
	if got := readJob(t, db, second.ID); got.State != storage.JobAvailable {
		t.Errorf("job enqueued after the cancel is %s, want still available", got.State)
	}
}
