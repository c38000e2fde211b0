package resolvers_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// jobRow is a job a test stores directly, in the state it needs.
type jobRow struct {
	org       *uuid.UUID // nil for the server's own jobs
	kind      string
	state     string
	createdAt time.Time
	attempt   int
	max       int    // 25 when zero
	errors    string // [] when empty
	uniqueKey *string
}

// insertJobs stores jobs and returns their ids in order. Finished states get finished_at, as
// the table requires.
func insertJobs(tb testing.TB, s *resolverstest.Server, rows ...jobRow) []uuid.UUID {
	tb.Helper()
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		errs, max := r.errors, r.max
		if errs == "" {
			errs = "[]"
		}
		if max == 0 {
			max = 25
		}
		s.Get(tb, &ids[i], `INSERT INTO jobs (organization_id, kind, state, created_at, attempt, max_attempts, errors,
				args, unique_key, attempted_at, finished_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, jsonb_build_object('n', $8::int), $9,
				CASE WHEN $5 > 0 THEN $4::timestamptz END,
				CASE WHEN $3 IN ('completed', 'discarded', 'cancelled') THEN $4::timestamptz END)
			RETURNING id`, r.org, r.kind, r.state, r.createdAt, r.attempt, max, errs, i, r.uniqueKey)
	}
	return ids
}

const jobFields = `id createdAt kind state attempt maxAttempts scheduledAt attemptedAt finishedAt
	errors { at attempt error } args`

type jobOut struct {
	ID          uuid.UUID
	CreatedAt   string
	Kind        string
	State       string
	Attempt     int
	MaxAttempts int
	ScheduledAt string
	AttemptedAt *string
	FinishedAt  *string
	Errors      []struct {
		At      string
		Attempt int
		Error   string
	}
	Args json.RawMessage
}

type jobPage struct {
	Items      []jobOut
	Pagination struct{ TotalCount, MaxPage int }
}

func jobIDs(items []jobOut) []uuid.UUID {
	out := []uuid.UUID{}
	for _, j := range items {
		out = append(out, j.ID)
	}
	return out
}

// jobWorld is an organization with six jobs, one a minute (newest last), another
// organization with one and a job of the server's own.
type jobWorld struct {
	s     *resolverstest.Server
	org   resolverstest.Org
	other resolverstest.Org
	ids   []uuid.UUID // the organization's, oldest first
	alien uuid.UUID   // the other organization's
	owned uuid.UUID   // the server's
}

func newJobWorld(t *testing.T) *jobWorld {
	t.Helper()
	s := resolverstest.New(t)
	w := &jobWorld{s: s, org: s.NewOrg(t, resolverstest.AllScopes), other: s.NewOrg(t, resolverstest.AllScopes)}
	at := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	minute := func(i int) time.Time { return at.Add(time.Duration(i) * time.Minute) }
	w.ids = insertJobs(t, s,
		jobRow{org: &w.org.ID, kind: "invoice.render", state: "completed", createdAt: minute(0), attempt: 1},
		jobRow{org: &w.org.ID, kind: "invoice.render", state: "discarded", createdAt: minute(1), attempt: 2, max: 2,
			errors: `[{"at": "2026-01-02T03:04:05Z", "attempt": 1, "error": "boom"},
				{"at": "2026-01-02T03:05:05Z", "attempt": 2, "error": "boom again"}]`},
		jobRow{org: &w.org.ID, kind: "subscription.renew", state: "running", createdAt: minute(2), attempt: 1},
		jobRow{org: &w.org.ID, kind: "subscription.renew", state: "available", createdAt: minute(3)},
		jobRow{org: &w.org.ID, kind: "invoice.render", state: "retryable", createdAt: minute(4), attempt: 1},
		jobRow{org: &w.org.ID, kind: "receipt.render", state: "cancelled", createdAt: minute(5)},
	)
	w.alien = insertJobs(t, s, jobRow{org: &w.other.ID, kind: "invoice.render", state: "discarded", createdAt: minute(6)})[0]
	w.owned = insertJobs(t, s, jobRow{kind: "events.partitions", state: "discarded", createdAt: minute(7)})[0]
	return w
}

func (w *jobWorld) list(t *testing.T, token string, args vars) jobPage {
	t.Helper()
	var out struct{ Jobs jobPage }
	w.s.Query(t, token, `query($kind: [String!], $state: [JobState!], $page: Int, $limit: Int) {
		jobs(kind: $kind, state: $state, page: $page, limit: $limit) { items { `+jobFields+` }
			pagination { totalCount maxPage } } }`, args, &out)
	return out.Jobs
}

func TestJobsListsTheOrganizationsJobsNewestFirst(t *testing.T) {
	t.Parallel()
	w := newJobWorld(t)
	id := w.ids
	cases := []struct {
		name      string
		args      vars
		want      []uuid.UUID
		wantTotal int
	}{
		{"without filters", vars{}, []uuid.UUID{id[5], id[4], id[3], id[2], id[1], id[0]}, 6},
		{"by kind", vars{"kind": []string{"invoice.render"}}, []uuid.UUID{id[4], id[1], id[0]}, 3},
		{"by kinds", vars{"kind": []string{"receipt.render", "subscription.renew"}}, []uuid.UUID{id[5], id[3], id[2]}, 3},
		{"by state", vars{"state": []string{"discarded", "retryable"}}, []uuid.UUID{id[4], id[1]}, 2},
		{"by kind and state", vars{"kind": []string{"invoice.render"}, "state": []string{"completed"}}, []uuid.UUID{id[0]}, 1},
		{"second page", vars{"page": 2, "limit": 4}, []uuid.UUID{id[1], id[0]}, 6},
		{"past the last page", vars{"page": 3, "limit": 4}, []uuid.UUID{}, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := w.list(t, w.org.Token, c.args)
			if diff := cmp.Diff(c.want, jobIDs(got.Items)); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if got.Pagination.TotalCount != c.wantTotal {
				t.Errorf("totalCount = %d, want %d", got.Pagination.TotalCount, c.wantTotal)
			}
		})
	}
	t.Run("an unknown state is a validation error", func(t *testing.T) {
		if res := w.s.Do(t, w.org.Token, `{ jobs(state: [lost]) { items { id } } }`, nil); len(res.Errors) == 0 {
			t.Errorf("jobs(state: [lost]) = HTTP %d %s, want an error", res.Status, res.Body)
		}
	})
}

func TestJobShowsItsAttemptsAndInput(t *testing.T) {
	t.Parallel()
	w := newJobWorld(t)
	var out struct{ Job jobOut }
	w.s.Query(t, w.org.Token, `query($id: UUID!) { job(id: $id) { `+jobFields+` } }`, vars{"id": w.ids[1]}, &out)
	j := out.Job
	if j.Kind != "invoice.render" || j.State != "discarded" || j.Attempt != 2 || j.MaxAttempts != 2 ||
		j.AttemptedAt == nil || j.FinishedAt == nil {
		t.Errorf("job = %+v, want a discarded invoice.render after 2 of 2 attempts", j)
	}
	if len(j.Errors) != 2 || j.Errors[0].Error != "boom" || j.Errors[1].Attempt != 2 ||
		j.Errors[1].At != "2026-01-02T03:05:05Z" {
		t.Errorf("errors = %+v, want both attempts' errors, oldest first", j.Errors)
	}
	var args map[string]any
	if err := json.Unmarshal(j.Args, &args); err != nil || !cmp.Equal(args, map[string]any{"n": 1.0}) {
		t.Errorf("args = %s, want {\"n\": 1}", j.Args)
	}
}

func TestJobsOfOtherOrganizationsAreNotFound(t *testing.T) {
	t.Parallel()
	w := newJobWorld(t)
	for _, c := range []struct{ name, doc string }{
		{"job", `query($id: UUID!) { job(id: $id) { id } }`},
		{"retryJob", `mutation($id: UUID!) { retryJob(id: $id) { id } }`},
		{"cancelJob", `mutation($id: UUID!) { cancelJob(id: $id) { id } }`},
	} {
		for name, id := range map[string]uuid.UUID{"another organization's": w.alien, "the server's own": w.owned,
			"a missing": uuid.New()} {
			t.Run(c.name+" of "+name+" job", func(t *testing.T) {
				e := w.s.QueryError(t, w.org.Token, c.doc, vars{"id": id})
				if e.Extensions.Code != "NOT_FOUND" || e.Extensions.Reason != "ResourceNotFound" {
					t.Errorf("error = %+v, want NOT_FOUND ResourceNotFound", e.Extensions)
				}
			})
		}
	}
	t.Run("a member's user token sees only its organizations' jobs", func(t *testing.T) {
		tok := w.s.NewUser(t, resolverstest.UserSpec{Scope: "organizations:read", Orgs: []uuid.UUID{w.other.ID}}).Token
		if got := jobIDs(w.list(t, tok, vars{}).Items); !cmp.Equal(got, []uuid.UUID{w.alien}) {
			t.Errorf("jobs = %v, want only %v", got, w.alien)
		}
	})
}

func TestRetryAndCancelJob(t *testing.T) {
	t.Parallel()
	const (
		retry  = `mutation($id: UUID!) { retryJob(id: $id) { ` + jobFields + ` } }`
		cancel = `mutation($id: UUID!) { cancelJob(id: $id) { ` + jobFields + ` } }`
	)
	cases := []struct {
		name      string
		doc       string
		job       int // index into jobWorld.ids
		wantState string
		wantMax   int
		wantCause string // a refusal's cause; empty when the change succeeds
	}{
		{"retrying a discarded job allows one more attempt", retry, 1, "available", 3, ""},
		{"retrying a retryable job runs it now", retry, 4, "available", 25, ""},
		{"retrying a cancelled job revives it", retry, 5, "available", 25, ""},
		{"retrying a running job is refused", retry, 2, "", 0, "RUNNING"},
		{"retrying a completed job is refused", retry, 0, "", 0, "COMPLETED"},
		{"retrying an available job is refused", retry, 3, "", 0, "AVAILABLE"},
		{"cancelling an available job", cancel, 3, "cancelled", 25, ""},
		{"cancelling a retryable job", cancel, 4, "cancelled", 25, ""},
		{"cancelling a running job is refused", cancel, 2, "", 0, "RUNNING"},
		{"cancelling a discarded job is refused", cancel, 1, "", 0, "DISCARDED"},
		{"cancelling a cancelled job is refused", cancel, 5, "", 0, "CANCELLED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newJobWorld(t)
			id := w.ids[c.job]
			if c.wantCause != "" {
				var before string
				w.s.Get(t, &before, `SELECT state FROM jobs WHERE id = $1`, id)
				e := w.s.QueryError(t, w.org.Token, c.doc, vars{"id": id})
				if e.Extensions.Code != "CONFLICT" || e.Extensions.Reason != "InvalidJobState" || e.Extensions.Cause != c.wantCause {
					t.Errorf("error = %+v, want CONFLICT InvalidJobState with cause %s", e.Extensions, c.wantCause)
				}
				var after string
				w.s.Get(t, &after, `SELECT state FROM jobs WHERE id = $1`, id)
				if after != before {
					t.Errorf("state changed from %s to %s by a refused change", before, after)
				}
				return
			}
			var out map[string]jobOut
			w.s.Query(t, w.org.Token, c.doc, vars{"id": id}, &out)
			for _, j := range out {
				if j.ID != id || j.State != c.wantState || j.MaxAttempts != c.wantMax {
					t.Errorf("job = %+v, want %s with %d attempts allowed", j, c.wantState, c.wantMax)
				}
				if finished := j.FinishedAt != nil; finished != (c.wantState == "cancelled") {
					t.Errorf("finishedAt = %v for a %s job", j.FinishedAt, j.State)
				}
			}
		})
	}
}

func TestRetryingAJobWhoseTwinIsPendingIsRefused(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	key := "invoice:" + uuid.NewString()
	now := time.Now().UTC()
	ids := insertJobs(t, s,
		jobRow{org: &org.ID, kind: "invoice.render", state: "discarded", createdAt: now.Add(-time.Minute), uniqueKey: &key},
		jobRow{org: &org.ID, kind: "invoice.render", state: "available", createdAt: now, uniqueKey: &key})
	e := s.QueryError(t, org.Token, `mutation($id: UUID!) { retryJob(id: $id) { id } }`, vars{"id": ids[0]})
	if e.Extensions.Code != "CONFLICT" || e.Extensions.Reason != "InvalidJobState" || e.Extensions.Cause != "DUPLICATE" {
		t.Errorf("error = %+v, want CONFLICT InvalidJobState with cause DUPLICATE", e.Extensions)
	}
}

func TestJobsNeedAnOrganizationsScope(t *testing.T) {
	t.Parallel()
	w := newJobWorld(t)
	reader := w.s.NewToken(t, w.org.ID, "organizations:read")
	webhooks := w.s.NewToken(t, w.org.ID, "webhooks:read webhooks:write")
	cases := []struct {
		name, token, doc     string
		wantCode, wantReason string
	}{
		{"listing without an organizations scope", webhooks, `{ jobs { items { id } } }`, "FORBIDDEN", "insufficient_scope"},
		{"reading without an organizations scope", webhooks, fmt.Sprintf(`{ job(id: %q) { id } }`, w.ids[0]), "FORBIDDEN", "insufficient_scope"},
		{"retrying with organizations:read", reader, fmt.Sprintf(`mutation { retryJob(id: %q) { id } }`, w.ids[1]), "FORBIDDEN", "insufficient_scope"},
		{"cancelling with organizations:read", reader, fmt.Sprintf(`mutation { cancelJob(id: %q) { id } }`, w.ids[3]), "FORBIDDEN", "insufficient_scope"},
		{"listing without a token", "", `{ jobs { items { id } } }`, "UNAUTHENTICATED", "Unauthorized"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := w.s.QueryError(t, c.token, c.doc, nil)
			if e.Extensions.Code != c.wantCode || e.Extensions.Reason != c.wantReason {
				t.Errorf("code = %q (%q), want %q (%q)", e.Extensions.Code, e.Extensions.Reason, c.wantCode, c.wantReason)
			}
		})
	}
	t.Run("organizations:read lists", func(t *testing.T) {
		if got := w.list(t, reader, vars{}); got.Pagination.TotalCount != 6 {
			t.Errorf("totalCount = %d, want 6", got.Pagination.TotalCount)
		}
	})
}
