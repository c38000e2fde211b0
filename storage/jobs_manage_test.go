package storage_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/storage"
	"till/storage/storagetest"
)

func TestRetryAndCancelFollowTheJobState(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	org := newOrganization(t, db, "acme")
	orgs := []uuid.UUID{org.ID}
	tests := []struct {
		from            string
		retried         bool // else refused with a JobStateError
		cancelled       bool
		wantMaxAttempts int // after a retry of a job made with max_attempts 1
	}{
		{storage.JobAvailable, false, true, 0},
		{storage.JobRunning, false, false, 0},
		{storage.JobCompleted, false, false, 0},
		{storage.JobRetryable, true, true, 2},
		{storage.JobDiscarded, true, false, 2},
		{storage.JobCancelled, true, false, 1},
	}
	for _, tt := range tests {
		t.Run("a "+tt.from+" job", func(t *testing.T) {
			// Retrying a retryable job that has spent its attempts (as an operator may after
			// lowering max_attempts) still gives it one more.
			spend := tt.from == storage.JobRetryable
			maxAttempts := 1
			if spend {
				maxAttempts = 2
			}
			job := jobInState(t, db, org.ID, tt.from, maxAttempts)
			if spend {
				if _, err := db.Exec(`UPDATE jobs SET max_attempts = 1 WHERE id = $1`, job.ID); err != nil {
					t.Fatal(err)
				}
			}
			retried, err := storage.RetryJob(ctx, db, orgs, job.ID)
			checkStateChange(t, "retry", err, tt.retried, tt.from)
			if tt.retried && (retried.State != storage.JobAvailable || retried.FinishedAt != nil ||
				retried.MaxAttempts != tt.wantMaxAttempts || retried.ScheduledAt.After(time.Now())) {
				t.Errorf("after retry: %+v, want available now with max_attempts %d", retried, tt.wantMaxAttempts)
			}
			job = jobInState(t, db, org.ID, tt.from, maxAttempts)
			cancelled, err := storage.CancelJob(ctx, db, orgs, job.ID)
			checkStateChange(t, "cancel", err, tt.cancelled, tt.from)
			if tt.cancelled && (cancelled.State != storage.JobCancelled || cancelled.FinishedAt == nil) {
				t.Errorf("after cancel: %s, finished %v", cancelled.State, cancelled.FinishedAt)
			}
		})
	}
	t.Run("a job of another organization is not found", func(t *testing.T) {
		job := jobInState(t, db, org.ID, storage.JobDiscarded, 1)
		other := []uuid.UUID{newOrganization(t, db, "other").ID}
		if _, err := storage.RetryJob(ctx, db, other, job.ID); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("retry: err = %v, want ErrNotFound", err)
		}
		if _, err := storage.CancelJob(ctx, db, other, job.ID); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("cancel: err = %v, want ErrNotFound", err)
		}
	})
}

func checkStateChange(t *testing.T, action string, err error, allowed bool, from string) {
	t.Helper()
	var stateErr *storage.JobStateError
	switch {
	case allowed && err != nil:
		t.Errorf("%s: %v", action, err)
	case !allowed && (!errors.As(err, &stateErr) || stateErr.State != from || !errors.Is(err, storage.ErrJobState)):
		t.Errorf("%s: err = %v, want a JobStateError for %s", action, err, from)
	}
}

func TestListJobsFiltersAndPages(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	acme, other := newOrganization(t, db, "acme"), newOrganization(t, db, "other")
	var want []uuid.UUID // acme's "a" jobs, newest first
	for i := range 5 {
		j := insertJob(t, db, storage.JobInsert{Kind: "a", OrganizationID: &acme.ID})
		want = append([]uuid.UUID{j.ID}, want...)
		if _, err := db.Exec(`UPDATE jobs SET created_at = now() + $1 * interval '1 second' WHERE id = $2`, i, j.ID); err != nil {
			t.Fatal(err)
		}
	}
	insertJob(t, db, storage.JobInsert{Kind: "b", OrganizationID: &acme.ID})
	insertJob(t, db, storage.JobInsert{Kind: "a", OrganizationID: &other.ID})
	insertJob(t, db, storage.JobInsert{Kind: "a"})
	jobInState(t, db, acme.ID, storage.JobCompleted, 1)
	tests := []struct {
		name      string
		filter    storage.JobFilter
		page      storage.Page
		wantIDs   []uuid.UUID
		wantTotal int
	}{
		{"a kind, paged", storage.JobFilter{Kinds: []string{"a"}}, storage.Page{Page: 2, Limit: 2}, want[2:4], 5},
		{"a kind, last page", storage.JobFilter{Kinds: []string{"a"}}, storage.Page{Page: 3, Limit: 2}, want[4:], 5},
		{"no filter sees the organization's jobs only", storage.JobFilter{}, storage.Page{Page: 1, Limit: 100}, nil, 7},
		{"a state", storage.JobFilter{States: []string{storage.JobCompleted}}, storage.Page{Page: 1, Limit: 10}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := storage.ListJobs(ctx, db, []uuid.UUID{acme.ID}, tt.filter, storage.Window{Page: tt.page.Page, Limit: tt.page.Limit})
			jobs, total := p.Items, p.Total
			if err != nil || total != tt.wantTotal {
				t.Fatalf("total = %d, %v; want %d", total, err, tt.wantTotal)
			}
			if tt.wantIDs == nil {
				return
			}
			var ids []uuid.UUID
			for _, j := range jobs {
				ids = append(ids, j.ID)
			}
			if diff := cmp.Diff(tt.wantIDs, ids); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
	if j, err := storage.GetJob(ctx, db, []uuid.UUID{other.ID}, want[0]); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("GetJob from another organization = %v, %v; want ErrNotFound", j, err)
	}
}

func TestPruneJobsDeletesOnlyOldFinishedJobs(t *testing.T) {
	db := storagetest.New(t)
	org := newOrganization(t, db, "acme")
	old := jobInState(t, db, org.ID, storage.JobCompleted, 1)
	if _, err := db.Exec(`UPDATE jobs SET finished_at = now() - interval '40 days' WHERE id = $1`, old.ID); err != nil {
		t.Fatal(err)
	}
	recent := jobInState(t, db, org.ID, storage.JobDiscarded, 1)
	pending := jobInState(t, db, org.ID, storage.JobAvailable, 1)
	n, err := storage.PruneJobs(t.Context(), db, time.Now().AddDate(0, 0, -30))
	if err != nil || n != 1 {
		t.Fatalf("PruneJobs = %d, %v; want 1", n, err)
	}
	if _, err := storage.JobByID(t.Context(), db, old.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("old job: %v, want deleted", err)
	}
	readJob(t, db, recent.ID)
	readJob(t, db, pending.ID)
}
