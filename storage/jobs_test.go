package storage_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// insertJob enqueues a job, failing the test on error.
func insertJob(t *testing.T, db sqlx.ExtContext, j storage.JobInsert) *storage.Job {
	t.Helper()
	if j.Kind == "" {
		j.Kind = "test.kind"
	}
	job, inserted, err := storage.InsertJob(t.Context(), db, j)
	if err != nil || !inserted {
		t.Fatalf("InsertJob(%+v) = %v, %v", j, inserted, err)
	}
	return job
}

// claimOne claims the single job expected on queue.
func claimOne(t *testing.T, db sqlx.ExtContext, queue string) *storage.Job {
	t.Helper()
	jobs, err := storage.ClaimJobs(t.Context(), db, queue, "test-worker", 10)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("ClaimJobs(%q) = %d jobs, %v; want 1", queue, len(jobs), err)
	}
	return jobs[0]
}

func readJob(t *testing.T, db sqlx.ExtContext, id uuid.UUID) *storage.Job {
	t.Helper()
	j, err := storage.JobByID(t.Context(), db, id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func jobErrors(t *testing.T, j *storage.Job) []storage.JobError {
	t.Helper()
	list, err := j.ErrorList()
	if err != nil {
		t.Fatalf("errors %s: %v", j.Errors, err)
	}
	return list
}

// jobInState makes a job of org in the given state through the queue's own operations, on a
// queue of its own so claims never pick up another test row.
func jobInState(t *testing.T, db sqlx.ExtContext, org uuid.UUID, state string, maxAttempts int) *storage.Job {
	t.Helper()
	ctx := t.Context()
	queue := "q-" + uuid.NewString()
	job := insertJob(t, db, storage.JobInsert{OrganizationID: &org, Queue: queue, MaxAttempts: maxAttempts})
	orgs := []uuid.UUID{org}
	var err error
	switch state {
	case storage.JobAvailable:
	case storage.JobCancelled:
		_, err = storage.CancelJob(ctx, db, orgs, job.ID)
	default:
		claimed := claimOne(t, db, queue)
		switch state {
		case storage.JobCompleted:
			err = storage.CompleteJob(ctx, db, job.ID, claimed.Attempt)
		case storage.JobRetryable:
			err = storage.FailJob(ctx, db, job.ID, claimed.Attempt, "boom", time.Now().Add(time.Hour))
		case storage.JobDiscarded:
			err = storage.DiscardJob(ctx, db, job.ID, claimed.Attempt, "hopeless")
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := readJob(t, db, job.ID); got.State != state {
		t.Fatalf("made a %s job, want %s", got.State, state)
	}
	return job
}

func TestInsertJobAppliesDefaultsAndArgs(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	at := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	org := newOrganization(t, db, "acme")
	tests := []struct {
		name     string
		in       storage.JobInsert
		wantArgs string
		check    func(*storage.Job) bool
	}{
		{"zero values take the defaults", storage.JobInsert{}, `{}`, func(j *storage.Job) bool {
			return j.Queue == "default" && j.Priority == 1 && j.MaxAttempts == 25 && j.State == storage.JobAvailable &&
				!j.ScheduledAt.After(time.Now()) && j.Attempt == 0 && string(j.Errors) == "[]" && j.OrganizationID == nil
		}},
		{"a struct is marshalled", storage.JobInsert{Args: struct {
			N int `json:"n"`
		}{7}}, `{"n": 7}`, nil},
		{"raw JSON is kept", storage.JobInsert{Args: storage.RawJSON(`{"a":[1,2]}`)}, `{"a": [1, 2]}`, nil},
		{"explicit settings are kept", storage.JobInsert{Queue: "mail", Priority: 3, MaxAttempts: 2, ScheduledAt: &at,
			OrganizationID: &org.ID}, `{}`, func(j *storage.Job) bool {
			return j.Queue == "mail" && j.Priority == 3 && j.MaxAttempts == 2 && j.ScheduledAt.Equal(at) &&
				*j.OrganizationID == org.ID
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := insertJob(t, db, tt.in)
			if string(j.Args) != tt.wantArgs {
				t.Errorf("args = %s, want %s", j.Args, tt.wantArgs)
			}
			if tt.check != nil && !tt.check(j) {
				t.Errorf("job = %+v", j)
			}
		})
	}
	t.Run("a priority outside 1-4 is refused", func(t *testing.T) {
		if _, _, err := storage.InsertJob(ctx, db, storage.JobInsert{Kind: "k", Priority: 5}); !errors.Is(err, storage.ErrReference) {
			t.Errorf("err = %v, want ErrReference", err)
		}
	})
	t.Run("a job without a kind is refused", func(t *testing.T) {
		if _, _, err := storage.InsertJob(ctx, db, storage.JobInsert{}); err == nil {
			t.Error("no error")
		}
	})
}

func TestInsertJobUniqueKeyDedupesUnfinishedJobs(t *testing.T) {
	db := storagetest.New(t)
	org := newOrganization(t, db, "acme")
	tests := []struct {
		existing string
		dropped  bool
	}{
		{storage.JobAvailable, true},
		{storage.JobRunning, true},
		{storage.JobRetryable, true},
		{storage.JobCompleted, false},
		{storage.JobDiscarded, false},
		{storage.JobCancelled, false},
	}
	for _, tt := range tests {
		t.Run("beside a "+tt.existing+" job", func(t *testing.T) {
			existing := jobInState(t, db, org.ID, tt.existing, 25)
			key := "key-" + tt.existing
			if _, err := db.Exec(`UPDATE jobs SET unique_key = $1 WHERE id = $2`, key, existing.ID); err != nil {
				t.Fatal(err)
			}
			j, inserted, err := storage.InsertJob(t.Context(), db, storage.JobInsert{Kind: "k", UniqueKey: &key})
			if err != nil {
				t.Fatal(err)
			}
			if inserted == tt.dropped || (j == nil) != tt.dropped {
				t.Errorf("inserted = %v (job %v), want dropped = %v", inserted, j != nil, tt.dropped)
			}
		})
	}
	t.Run("an insert rolled back leaves the key free", func(t *testing.T) {
		key := "rolled-back"
		tx := db.MustBegin()
		insertJob(t, tx, storage.JobInsert{UniqueKey: &key})
		_ = tx.Rollback()
		insertJob(t, db, storage.JobInsert{UniqueKey: &key})
	})
}

func TestClaimJobsTakesRunnableJobsMostUrgentFirst(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	past := func(d time.Duration) *time.Time { at := time.Now().Add(-d); return &at }
	low := insertJob(t, db, storage.JobInsert{Priority: 4, ScheduledAt: past(time.Hour)})
	urgentLate := insertJob(t, db, storage.JobInsert{Priority: 1, ScheduledAt: past(time.Minute)})
	urgentEarly := insertJob(t, db, storage.JobInsert{Priority: 1, ScheduledAt: past(time.Hour)})
	insertJob(t, db, storage.JobInsert{ScheduledAt: func() *time.Time { at := time.Now().Add(time.Hour); return &at }()})
	insertJob(t, db, storage.JobInsert{Queue: "other"})

	first, err := storage.ClaimJobs(ctx, db, "default", "w1", 2)
	if err != nil {
		t.Fatal(err)
	}
	var ids []uuid.UUID
	for _, j := range first {
		ids = append(ids, j.ID)
		if j.State != storage.JobRunning || j.Attempt != 1 || j.AttemptedAt == nil || j.AttemptedBy == nil || *j.AttemptedBy != "w1" {
			t.Errorf("claimed job = %+v", j)
		}
	}
	if diff := cmp.Diff([]uuid.UUID{urgentEarly.ID, urgentLate.ID}, ids); diff != "" {
		t.Errorf("first claim (-want +got):\n%s", diff)
	}
	rest, err := storage.ClaimJobs(ctx, db, "default", "w2", 10)
	if err != nil || len(rest) != 1 || rest[0].ID != low.ID {
		t.Fatalf("second claim = %v, %v; want only the low-priority job (not the future or other-queue ones)", rest, err)
	}
	if err := storage.CompleteJob(ctx, db, low.ID, 1); err != nil {
		t.Fatal(err)
	}
	if again, err := storage.ClaimJobs(ctx, db, "default", "w3", 10); err != nil || len(again) != 0 {
		t.Errorf("claim after all were taken = %d jobs, %v; want none (a completed job is never claimed again)", len(again), err)
	}
}

func TestFinishingAnAttempt(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	retryAt := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	tests := []struct {
		name        string
		maxAttempts int
		finish      func(id uuid.UUID, attempt int) error
		wantState   string
		wantMax     int
		wantErrors  []string
		wantRetryAt bool
	}{
		{"completing ends the job", 3, func(id uuid.UUID, a int) error { return storage.CompleteJob(ctx, db, id, a) },
			storage.JobCompleted, 3, nil, false},
		{"failing with attempts left schedules a retry", 3, func(id uuid.UUID, a int) error {
			return storage.FailJob(ctx, db, id, a, "boom", retryAt)
		}, storage.JobRetryable, 3, []string{"boom"}, true},
		{"failing the last attempt discards", 1, func(id uuid.UUID, a int) error {
			return storage.FailJob(ctx, db, id, a, "boom", retryAt)
		}, storage.JobDiscarded, 1, []string{"boom"}, false},
		{"discarding gives up with attempts left", 3, func(id uuid.UUID, a int) error {
			return storage.DiscardJob(ctx, db, id, a, "bad args")
		}, storage.JobDiscarded, 3, []string{"bad args"}, false},
		{"snoozing waits without using an attempt", 3, func(id uuid.UUID, a int) error {
			return storage.SnoozeJob(ctx, db, id, a, retryAt)
		}, storage.JobAvailable, 4, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			queue := uuid.NewString()
			insertJob(t, db, storage.JobInsert{Queue: queue, MaxAttempts: tt.maxAttempts})
			job := claimOne(t, db, queue)
			if err := tt.finish(job.ID, job.Attempt+1); !errors.Is(err, storage.ErrJobLost) {
				t.Errorf("finishing another attempt: err = %v, want ErrJobLost", err)
			}
			if err := tt.finish(job.ID, job.Attempt); err != nil {
				t.Fatal(err)
			}
			got := readJob(t, db, job.ID)
			if got.State != tt.wantState || got.MaxAttempts != tt.wantMax || got.Attempt != 1 {
				t.Errorf("state %s, max %d, attempt %d; want %s, %d, 1", got.State, got.MaxAttempts, got.Attempt, tt.wantState, tt.wantMax)
			}
			finished := tt.wantState != storage.JobAvailable && tt.wantState != storage.JobRetryable
			if (got.FinishedAt != nil) != finished {
				t.Errorf("finished_at = %v, want set = %v", got.FinishedAt, finished)
			}
			if tt.wantRetryAt != got.ScheduledAt.Equal(retryAt) {
				t.Errorf("scheduled_at = %v, want retry at %v: %v", got.ScheduledAt, retryAt, tt.wantRetryAt)
			}
			var msgs []string
			for _, e := range jobErrors(t, got) {
				msgs = append(msgs, e.Error)
				if e.Attempt != 1 || e.At.IsZero() {
					t.Errorf("error entry %+v", e)
				}
			}
			if diff := cmp.Diff(tt.wantErrors, msgs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if err := tt.finish(job.ID, job.Attempt); !errors.Is(err, storage.ErrJobLost) {
				t.Errorf("finishing twice: err = %v, want ErrJobLost", err)
			}
		})
	}
}

func TestCompleteJobOfARescuedAttemptRollsBackItsEffect(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	if _, err := db.Exec(`CREATE TABLE effects (job_id uuid, attempt int)`); err != nil {
		t.Fatal(err)
	}
	insertJob(t, db, storage.JobInsert{})
	stale := claimOne(t, db, "default")
	if n, err := storage.RescueJobs(ctx, db, time.Now().Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("RescueJobs = %d, %v", n, err)
	}
	current := claimOne(t, db, "default")
	err := storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
		if _, err := tx.Exec(`INSERT INTO effects VALUES ($1, $2)`, stale.ID, stale.Attempt); err != nil {
			return err
		}
		return storage.CompleteJob(ctx, tx, stale.ID, stale.Attempt)
	})
	if !errors.Is(err, storage.ErrJobLost) {
		t.Fatalf("stale completion: err = %v, want ErrJobLost", err)
	}
	var effects int
	if err := db.Get(&effects, `SELECT count(*) FROM effects`); err != nil || effects != 0 {
		t.Errorf("effects after the stale attempt = %d, %v; want 0", effects, err)
	}
	if err := storage.CompleteJob(ctx, db, current.ID, current.Attempt); err != nil {
		t.Errorf("current attempt: %v", err)
	}
}

func TestRescueJobsReturnsOnlyStuckJobs(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	org := newOrganization(t, db, "acme")
	stuck := jobInState(t, db, org.ID, storage.JobRunning, 25)
	spent := jobInState(t, db, org.ID, storage.JobRunning, 1)
	fresh := jobInState(t, db, org.ID, storage.JobRunning, 25)
	for _, id := range []uuid.UUID{stuck.ID, spent.ID} {
		if _, err := db.Exec(`UPDATE jobs SET attempted_at = now() - interval '1 hour' WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
	}
	n, err := storage.RescueJobs(ctx, db, time.Now().Add(-5*time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("RescueJobs = %d, %v; want 2", n, err)
	}
	for _, tt := range []struct {
		job        *storage.Job
		state      string
		rescueNote bool
	}{
		{stuck, storage.JobRetryable, true},
		{spent, storage.JobDiscarded, true},
		{fresh, storage.JobRunning, false},
	} {
		got := readJob(t, db, tt.job.ID)
		errs := jobErrors(t, got)
		if got.State != tt.state || (len(errs) == 1) != tt.rescueNote {
			t.Errorf("job %s: state %s, errors %s; want %s with a rescue note = %v", tt.job.ID, got.State, got.Errors, tt.state, tt.rescueNote)
		}
		if tt.state == storage.JobRetryable && got.ScheduledAt.After(time.Now()) {
			t.Errorf("rescued job scheduled at %v, want now", got.ScheduledAt)
		}
	}
}
