package storage

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Job states. A job is pending while available or retryable, and finished (finished_at set)
// once completed, discarded or cancelled.
const (
	JobAvailable = "available"
	JobRunning   = "running"
	JobCompleted = "completed"
	JobRetryable = "retryable"
	JobDiscarded = "discarded"
	JobCancelled = "cancelled"
)

var (
	// ErrJobLost means a worker tried to finish a job that is no longer running the attempt it
	// claimed: the job was rescued and perhaps claimed again elsewhere, or finished already.
	// The worker must roll back the job's effect, which the current attempt owns.
	ErrJobLost = errors.New("storage: job no longer held by this attempt")
	// ErrJobState means the job's state does not allow the action, such as retrying a running
	// or completed job; a *JobStateError says which state it was in.
	ErrJobState = errors.New("storage: job state does not allow this")
)

// JobStateError reports the state that refused a retry or cancel.
type JobStateError struct{ State string }

func (e *JobStateError) Error() string { return "storage: job is " + e.State }

// Unwrap lets errors.Is(err, ErrJobState) match.
func (e *JobStateError) Unwrap() error { return ErrJobState }

// Job is a unit of durable background work (see migrations/00009_jobs.sql). Args holds the
// kind's own JSON shape; Errors is an array of JobError, one per failed attempt.
type Job struct {
	ID             uuid.UUID  `db:"id"`
	CreatedAt      time.Time  `db:"created_at"`
	ModifiedAt     *time.Time `db:"modified_at"`
	OrganizationID *uuid.UUID `db:"organization_id"`
	Kind           string     `db:"kind"`
	Queue          string     `db:"queue"`
	Args           RawJSON    `db:"args"`
	State          string     `db:"state"`
	Priority       int        `db:"priority"`
	Attempt        int        `db:"attempt"`
	MaxAttempts    int        `db:"max_attempts"`
	ScheduledAt    time.Time  `db:"scheduled_at"`
	AttemptedAt    *time.Time `db:"attempted_at"`
	AttemptedBy    *string    `db:"attempted_by"`
	FinishedAt     *time.Time `db:"finished_at"`
	Errors         RawJSON    `db:"errors"`
	UniqueKey      *string    `db:"unique_key"`
	Metadata       JSONMap    `db:"metadata"`
}

// JobError is one entry of a job's errors: why an attempt failed.
type JobError struct {
	At      time.Time `json:"at"`
	Attempt int       `json:"attempt"`
	Error   string    `json:"error"`
}

// ErrorList decodes the job's errors, oldest first.
func (j *Job) ErrorList() ([]JobError, error) {
	var out []JobError
	if len(j.Errors) == 0 {
		return out, nil
	}
	return out, json.Unmarshal(j.Errors, &out)
}

const jobColumns = `id, created_at, modified_at, organization_id, kind, queue, args, state,
	priority, attempt, max_attempts, scheduled_at, attempted_at, attempted_by, finished_at,
	errors, unique_key, metadata`

// JobInsert describes a job to enqueue. Zero values mean the defaults: queue "default",
// priority 1 (the most urgent of 1–4), 25 attempts, runnable now. Args is marshalled to JSON
// unless it is JSON already (RawJSON, json.RawMessage); nil is {}.
type JobInsert struct {
	Kind           string
	Args           any
	OrganizationID *uuid.UUID
	Queue          string
	Priority       int
	MaxAttempts    int
	ScheduledAt    *time.Time
	UniqueKey      *string
}

// InsertJob enqueues a job in the caller's transaction, so the job exists exactly when the
// change that causes it commits. With a UniqueKey, an equal job that is still pending or
// running makes this a no-op: it returns nil and false.
func InsertJob(ctx context.Context, q sqlx.ExtContext, j JobInsert) (*Job, bool, error) {
	if j.Kind == "" {
		return nil, false, errors.New("storage: a job needs a kind")
	}
	args, err := jobArgs(j.Args)
	if err != nil {
		return nil, false, err
	}
	queue := cmp.Or(j.Queue, "default")
	rows := []*Job{}
	err = sqlx.SelectContext(ctx, q, &rows, `INSERT INTO jobs (kind, args, organization_id, queue,
		priority, max_attempts, scheduled_at, unique_key)
		VALUES ($1, $2, $3, $4, $5, $6, coalesce($7, now()), $8)
		ON CONFLICT (unique_key) WHERE state IN ('available', 'running', 'retryable') DO NOTHING
		RETURNING `+jobColumns,
		j.Kind, args, j.OrganizationID, queue, cmp.Or(j.Priority, 1), cmp.Or(j.MaxAttempts, 25),
		j.ScheduledAt, j.UniqueKey)
	if err != nil || len(rows) == 0 {
		return nil, false, mapErr(err)
	}
	return rows[0], true, nil
}

// jobArgs renders a job's arguments as JSON text.
func jobArgs(v any) (string, error) {
	switch a := v.(type) {
	case nil:
		return "{}", nil
	case RawJSON:
		return string(a), nil
	case json.RawMessage:
		return string(a), nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// ClaimJobs marks up to limit runnable jobs of a queue as running under workerID, counting
// the attempt, most urgent first. SKIP LOCKED lets many workers claim at once without
// waiting on or taking each other's jobs. Run it outside the job's own transaction: the
// claim must commit before the work starts, or a crash would hide that the job ran.
func ClaimJobs(ctx context.Context, q sqlx.ExtContext, queue, workerID string, limit int) ([]*Job, error) {
	jobs := []*Job{}
	err := sqlx.SelectContext(ctx, q, &jobs, `WITH picked AS (
			SELECT id FROM jobs WHERE state IN ('available', 'retryable') AND queue = $1
				AND scheduled_at <= now()
			ORDER BY priority, scheduled_at LIMIT $2 FOR UPDATE SKIP LOCKED)
		UPDATE jobs j SET state = 'running', attempt = j.attempt + 1, attempted_at = now(),
			attempted_by = $3, modified_at = now()
		FROM picked WHERE j.id = picked.id
		RETURNING `+prefixed("j", jobColumns), queue, limit, workerID)
	if err != nil {
		return nil, mapErr(err)
	}
	slices.SortFunc(jobs, func(a, b *Job) int {
		if a.Priority != b.Priority {
			return a.Priority - b.Priority
		}
		return a.ScheduledAt.Compare(b.ScheduledAt)
	})
	return jobs, nil
}

// errorEntry appends {"at", "attempt", "error"} to errors, the message being the statement's
// parameter $3.
const errorEntry = `errors = errors || jsonb_build_array(jsonb_build_object(
	'at', now(), 'attempt', attempt, 'error', $3::text))`

// finishAttempt applies set to a job only while it is running the given attempt, so a
// worker whose job was rescued cannot overwrite what the job's new attempt did.
func finishAttempt(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, attempt int, set string, args ...any) error {
	res, err := q.ExecContext(ctx, `UPDATE jobs SET modified_at = now(), `+set+`
		WHERE id = $1 AND state = 'running' AND attempt = $2`, append([]any{id, attempt}, args...)...)
	if err != nil {
		return mapErr(err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return cmp.Or(err, ErrJobLost)
	}
	return nil
}

// CompleteJob marks the attempt done. Call it in the transaction that holds the job's effect:
// ErrJobLost then means the effect must roll back, because another attempt owns the job.
func CompleteJob(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, attempt int) error {
	return finishAttempt(ctx, q, id, attempt, `state = 'completed', finished_at = now()`)
}

// FailJob records a failed attempt: the job retries at retryAt, or is discarded once it has
// used its attempts. ErrJobLost means the attempt was no longer the job's.
func FailJob(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, attempt int, message string, retryAt time.Time) error {
	return finishAttempt(ctx, q, id, attempt, errorEntry+`,
		state = CASE WHEN attempt >= max_attempts THEN 'discarded' ELSE 'retryable' END,
		finished_at = CASE WHEN attempt >= max_attempts THEN now() END,
		scheduled_at = CASE WHEN attempt >= max_attempts THEN scheduled_at ELSE $4::timestamptz END`,
		message, retryAt)
}

// DiscardJob records a failed attempt and gives up on the job whatever attempts it has left,
// for failures that retrying cannot fix.
func DiscardJob(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, attempt int, message string) error {
	return finishAttempt(ctx, q, id, attempt, errorEntry+`, state = 'discarded', finished_at = now()`, message)
}

// SnoozeJob puts a running job back to run at until without counting a failure: the attempt
// it used is given back as one more allowed attempt, so attempt numbers keep growing (which
// the running-attempt guard relies on) while the budget for real failures stays the same.
func SnoozeJob(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, attempt int, until time.Time) error {
	return finishAttempt(ctx, q, id, attempt, `state = 'available', scheduled_at = $3::timestamptz,
		max_attempts = max_attempts + 1`, until)
}

// RescueJobs returns jobs whose worker stopped before finishing (a crash, a lost connection)
// to the queue: running jobs attempted before stuckBefore become retryable now, or discarded
// when out of attempts, with an error entry saying so. stuckBefore must leave more time than
// a job may run, or a live attempt would be rescued and run twice.
func RescueJobs(ctx context.Context, q sqlx.ExtContext, stuckBefore time.Time) (int, error) {
	res, err := q.ExecContext(ctx, `UPDATE jobs SET modified_at = now(),
		errors = errors || jsonb_build_array(jsonb_build_object('at', now(), 'attempt', attempt,
			'error', 'rescued: worker ' || coalesce(attempted_by, 'unknown') || ' did not finish the attempt started at '
				|| attempted_at::text)),
		state = CASE WHEN attempt >= max_attempts THEN 'discarded' ELSE 'retryable' END,
		finished_at = CASE WHEN attempt >= max_attempts THEN now() END,
		scheduled_at = CASE WHEN attempt >= max_attempts THEN scheduled_at ELSE now() END
		WHERE state = 'running' AND attempted_at < $1`, stuckBefore)
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// GetJob reads a job of the given organizations.
func GetJob(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*Job, error) {
	var j Job
	err := sqlx.GetContext(ctx, q, &j, `SELECT `+jobColumns+` FROM jobs
		WHERE id = $1 AND organization_id = ANY($2)`, id, pq.Array(orgs))
	return &j, mapErr(err)
}

// JobByID reads any job, including those of no organization, for workers and operators.
func JobByID(ctx context.Context, q sqlx.ExtContext, id uuid.UUID) (*Job, error) {
	var j Job
	err := sqlx.GetContext(ctx, q, &j, `SELECT `+jobColumns+` FROM jobs WHERE id = $1`, id)
	return &j, mapErr(err)
}

// JobFilter narrows a job list; an empty slice does not filter.
type JobFilter struct {
	Kinds  []string
	States []string
}

// ListJobs returns one window of the jobs of the given organizations, newest first, with the
// total count.
func ListJobs(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f JobFilter, w Window) (Paged[*Job], error) {
	c := orgFilters("organization_id", orgs)
	anyOf(c, "kind", f.Kinds)
	anyOf(c, "state", f.States)
	return listWindow[*Job](ctx, q, listSQL{Columns: jobColumns, From: "jobs", ID: "id", Where: c.where,
		Args: c.args, Default: []Sort{{Column: "created_at", Desc: true}}}, w)
}

// RetryJob makes a discarded, cancelled or retryable job of the given organizations runnable
// now, allowing one more attempt if it had used them all. Running and completed jobs are
// refused with a *JobStateError. A ConflictError means an equal job (same unique key) is
// pending already.
func RetryJob(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*Job, error) {
	return changeState(ctx, q, orgs, id, `state = 'available', scheduled_at = now(), finished_at = NULL,
		max_attempts = greatest(max_attempts, attempt + 1)`, JobDiscarded, JobCancelled, JobRetryable)
}

// CancelJob cancels an available or retryable job of the given organizations so it never
// runs. Running and finished jobs are refused with a *JobStateError: a running attempt cannot
// be recalled.
func CancelJob(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*Job, error) {
	return changeState(ctx, q, orgs, id, `state = 'cancelled', finished_at = now()`, JobAvailable, JobRetryable)
}

// changeState applies set to a job of the given organizations when it is in one of from,
// telling a missing job (ErrNotFound) from one in another state (*JobStateError).
func changeState(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, set string, from ...string) (*Job, error) {
	rows := []*Job{}
	err := sqlx.SelectContext(ctx, q, &rows, `UPDATE jobs SET modified_at = now(), `+set+`
		WHERE id = $1 AND organization_id = ANY($2) AND state = ANY($3) RETURNING `+jobColumns,
		id, pq.Array(orgs), pq.Array(from))
	if err != nil {
		return nil, mapErr(err)
	}
	if len(rows) == 1 {
		return rows[0], nil
	}
	j, err := GetJob(ctx, q, orgs, id)
	if err != nil {
		return nil, err
	}
	return nil, &JobStateError{State: j.State}
}

// PruneJobs deletes jobs that finished before finishedBefore, keeping the table small.
func PruneJobs(ctx context.Context, q sqlx.ExtContext, finishedBefore time.Time) (int, error) {
	res, err := q.ExecContext(ctx, `DELETE FROM jobs WHERE finished_at < $1`, finishedBefore)
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
