package jobs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"till/internal/jobs"
	"till/storage"
)

func TestRunOnceRecordsEachOutcome(t *testing.T) {
	db, _ := newDB(t)
	snoozeUntil := time.Now().Add(3 * time.Hour).Truncate(time.Microsecond)
	effectThen := func(err error) jobs.Handler {
		return func(_ context.Context, tx *sqlx.Tx, job *storage.Job) error {
			if e := writeEffect(tx, job); e != nil {
				return e
			}
			return err
		}
	}
	tests := []struct {
		name        string
		kind        string // default "test"
		maxAttempts int
		handler     jobs.Handler
		wantState   string
		wantError   string // in the job's error entry; "" for none
		wantEffect  bool
		wantAt      time.Time // scheduled_at, when the job is to run again
		wantMax     int
	}{
		{name: "success commits the effect with the completion", maxAttempts: 3, handler: effectThen(nil),
			wantState: storage.JobCompleted, wantEffect: true, wantMax: 3},
		{name: "an error rolls the effect back and retries after backoff", maxAttempts: 3, handler: effectThen(errors.New("boom")),
			wantState: storage.JobRetryable, wantError: "boom", wantAt: time.Now().Add(time.Hour), wantMax: 3},
		{name: "an error on the last attempt discards", maxAttempts: 1, handler: effectThen(errors.New("boom")),
			wantState: storage.JobDiscarded, wantError: "boom", wantMax: 1},
		{name: "Discard gives up with attempts left", maxAttempts: 3, handler: effectThen(jobs.Discard(errors.New("bad args"))),
			wantState: storage.JobDiscarded, wantError: "bad args", wantMax: 3},
		{name: "Snooze waits without spending an attempt", maxAttempts: 3, handler: effectThen(jobs.Snooze(snoozeUntil)),
			wantState: storage.JobAvailable, wantAt: snoozeUntil, wantMax: 4},
		{name: "a panic is a failed attempt", maxAttempts: 3, handler: func(context.Context, *sqlx.Tx, *storage.Job) error {
			panic("kaboom")
		}, wantState: storage.JobRetryable, wantError: "panic: kaboom", wantAt: time.Now().Add(time.Hour), wantMax: 3},
		{name: "a handler that outlives its deadline cannot complete", maxAttempts: 3,
			handler: func(ctx context.Context, tx *sqlx.Tx, job *storage.Job) error {
				<-ctx.Done()
				time.Sleep(50 * time.Millisecond) // let database/sql roll the transaction back
				_ = writeEffect(tx, job)
				return nil
			}, wantState: storage.JobRetryable, wantError: "timed out after 200ms", wantAt: time.Now().Add(time.Hour), wantMax: 3},
		{name: "an unknown kind is discarded", kind: "nobody.handles.this", maxAttempts: 3,
			wantState: storage.JobDiscarded, wantError: `no handler for job kind "nobody.handles.this"`, wantMax: 3},
		{name: "bad arguments are discarded", kind: "decode", maxAttempts: 3,
			wantState: storage.JobDiscarded, wantError: "arguments", wantMax: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			queue := t.Name()
			kind := tt.kind
			if kind == "" {
				kind = "test"
			}
			job := enqueue(t, db, storage.JobInsert{Kind: kind, Queue: queue, MaxAttempts: tt.maxAttempts,
				Args: storage.RawJSON(`{"n": "not a number"}`)})
			w := &jobs.Worker{DB: db, Queue: queue, Logger: quiet(), JobTimeout: 200 * time.Millisecond,
				Backoff:  func(attempt int) time.Duration { return time.Duration(attempt) * time.Hour },
				Handlers: map[string]jobs.Handler{"test": tt.handler, "decode": decodeHandler}}
			if n, err := w.RunOnce(t.Context()); n != 1 || err != nil {
				t.Fatalf("RunOnce = %d, %v; want 1 job", n, err)
			}
			got := readJob(t, db, job.ID)
			if got.State != tt.wantState || got.Attempt != 1 || got.MaxAttempts != tt.wantMax {
				t.Errorf("state %s, attempt %d, max %d; want %s, 1, %d", got.State, got.Attempt, got.MaxAttempts, tt.wantState, tt.wantMax)
			}
			if effect := len(effectAttempts(t, db, job.ID)) > 0; effect != tt.wantEffect {
				t.Errorf("effect committed = %v, want %v", effect, tt.wantEffect)
			}
			checkErrorEntry(t, got, tt.wantError)
			if !tt.wantAt.IsZero() && got.ScheduledAt.Sub(tt.wantAt).Abs() > 5*time.Second {
				t.Errorf("scheduled at %v, want %v", got.ScheduledAt, tt.wantAt)
			}
		})
	}
}

func decodeHandler(_ context.Context, _ *sqlx.Tx, job *storage.Job) error {
	var args struct{ N int }
	return jobs.DecodeArgs(job, &args)
}

// checkErrorEntry checks the job holds one error entry containing want, or none for "".
func checkErrorEntry(t *testing.T, job *storage.Job, want string) {
	t.Helper()
	list, err := job.ErrorList()
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case want == "" && len(list) != 0:
		t.Errorf("errors = %s, want none", job.Errors)
	case want != "" && (len(list) != 1 || !strings.Contains(list[0].Error, want) || list[0].Attempt != job.Attempt):
		t.Errorf("errors = %s, want one entry of attempt %d containing %q", job.Errors, job.Attempt, want)
	}
}

func TestDefaultBackoffGrowsWithJitterUpToTheCap(t *testing.T) {
	tests := []struct {
		attempt int
		max     time.Duration
	}{
		{0, 2 * time.Second},
		{1, 2 * time.Second},
		{2, 4 * time.Second},
		{5, 32 * time.Second},
		{10, 1024 * time.Second},
		{11, 20 * time.Minute},
		{25, 20 * time.Minute},
		{1000, 20 * time.Minute},
	}
	for _, tt := range tests {
		seen := map[time.Duration]bool{}
		for range 50 {
			d := jobs.DefaultBackoff(tt.attempt)
			if d < tt.max/2 || d > tt.max {
				t.Fatalf("DefaultBackoff(%d) = %s, want within [%s, %s]", tt.attempt, d, tt.max/2, tt.max)
			}
			seen[d] = true
		}
		if len(seen) < 2 {
			t.Errorf("DefaultBackoff(%d) gave %d distinct waits in 50 draws, want jitter", tt.attempt, len(seen))
		}
	}
}

func TestWorkerRefusesUnsafeSettings(t *testing.T) {
	db, _ := newDB(t)
	tests := []struct {
		name string
		w    jobs.Worker
	}{
		{"no database", jobs.Worker{}},
		{"a timeout that outlasts the rescue", jobs.Worker{DB: db, JobTimeout: 10 * time.Minute}},
		{"a timeout equal to the rescue", jobs.Worker{DB: db, JobTimeout: time.Minute, StuckAfter: time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.w.RunOnce(t.Context()); err == nil {
				t.Error("RunOnce: no error")
			}
			if err := tt.w.Run(t.Context()); err == nil {
				t.Error("Run: no error")
			}
		})
	}
}

// TestWakeStartsAJobBeforeThePoll: with a poll interval of a minute, a job enqueued after the
// queue ran dry starts as soon as the worker is woken. The wake channel is unbuffered, so a
// send completes only once the worker waits on it: the first send proves the worker found
// the queue dry and went to sleep, the second wakes it for the job.
func TestWakeStartsAJobBeforeThePoll(t *testing.T) {
	db, _ := newDB(t)
	wake := make(chan struct{})
	send := func(why string) {
		t.Helper()
		select {
		case wake <- struct{}{}:
		case <-time.After(10 * time.Second):
			t.Fatalf("the worker never waited for a wake (%s)", why)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	w := &jobs.Worker{DB: db, Handlers: map[string]jobs.Handler{"test": func(_ context.Context, tx *sqlx.Tx, job *storage.Job) error {
		return writeEffect(tx, job)
	}}, PollInterval: time.Minute, Wake: wake, Logger: quiet()}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	send("after its first, empty claim")
	job := enqueue(t, db, storage.JobInsert{Kind: "test"})
	send("for the job")
	waitFor(t, db, 10*time.Second, `SELECT state = 'completed' FROM jobs WHERE id = $1`, job.ID)
}

// TestRetriesAndScheduledJobsRunWhenDue: with a poll interval of a minute and nothing to
// wake it, the worker still runs a retry after its backoff and a job scheduled for later, by
// sleeping until the earliest one is due.
func TestRetriesAndScheduledJobsRunWhenDue(t *testing.T) {
	db, _ := newDB(t)
	attempts := make(chan int, 10)
	ctx, cancel := context.WithCancel(t.Context())
	w := &jobs.Worker{DB: db, Logger: quiet(), PollInterval: time.Minute,
		Backoff: func(int) time.Duration { return 300 * time.Millisecond },
		Handlers: map[string]jobs.Handler{"flaky": func(_ context.Context, tx *sqlx.Tx, job *storage.Job) error {
			attempts <- job.Attempt
			if job.Attempt == 1 {
				return errors.New("first attempt fails")
			}
			return writeEffect(tx, job)
		}}}
	done := make(chan error, 1)
	defer func() { cancel(); <-done }()
	retried := enqueue(t, db, storage.JobInsert{Kind: "flaky"})
	later := time.Now().Add(500 * time.Millisecond)
	scheduled := enqueue(t, db, storage.JobInsert{Kind: "flaky", ScheduledAt: &later, MaxAttempts: 3})
	go func() { done <- w.Run(ctx) }()
	waitFor(t, db, 10*time.Second, `SELECT count(*) = 2 FROM jobs WHERE id IN ($1, $2) AND state = 'completed'`,
		retried.ID, scheduled.ID)
}
