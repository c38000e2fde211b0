package resolvers

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/storage"
)

// jobsPage lists the organization's jobs, newest first.
func (r *Resolver) jobsPage(ctx context.Context, kinds []string, states []model.JobState, a listArgs) (*model.JobPage, error) {
	f := storage.JobFilter{Kinds: kinds, States: make([]string, len(states))}
	for i, s := range states {
		f.States[i] = string(s)
	}
	p, w, err := rootWindow(ctx, a, nil, func(_ []storage.Sort, w storage.Window) (storage.Paged[*storage.Job], error) {
		return storage.ListJobs(ctx, r.db, organizations(ctx), f, w)
	})
	if err != nil {
		return nil, err
	}
	return &model.JobPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}

// job reads one of the organization's jobs; jobs of other organizations and the server's
// own jobs (no organization) are not found.
func (r *Resolver) job(ctx context.Context, id uuid.UUID) (*storage.Job, error) {
	j, err := storage.GetJob(ctx, r.db, organizations(ctx), id)
	if err != nil {
		return nil, notFoundOr(err, jobNotFound)
	}
	return j, nil
}

// retryJob runs a finished-unsuccessfully or waiting job again now.
func (r *Resolver) retryJob(ctx context.Context, id uuid.UUID) (*storage.Job, error) {
	j, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.Job, error) {
		return storage.RetryJob(ctx, q, organizations(ctx), id)
	})
	return j, jobChangeError(err, "retried", "discarded, cancelled or retryable")
}

// cancelJob stops a waiting job from ever running.
func (r *Resolver) cancelJob(ctx context.Context, id uuid.UUID) (*storage.Job, error) {
	j, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.Job, error) {
		return storage.CancelJob(ctx, q, organizations(ctx), id)
	})
	return j, jobChangeError(err, "cancelled", "available or retryable")
}

const jobNotFound = "Job not found"

// jobChangeError turns the storage refusals of a retry or cancel into the API's: a job the
// caller cannot see is not found, and a state that forbids the change is a 409 whose cause
// is the state the job is in, so a client can tell "already running" from "already done".
func jobChangeError(err error, verb, allowed string) error {
	if err == nil {
		return nil
	}
	var se *storage.JobStateError
	if errors.As(err, &se) {
		return &Error{Code: CodeInvalidJobState, Cause: strings.ToUpper(se.State),
			Detail: "The job is " + se.State + "; only " + allowed + " jobs can be " + verb + "."}
	}
	if errors.Is(err, storage.ErrConflict) {
		return &Error{Code: CodeInvalidJobState, Cause: "DUPLICATE",
			Detail: "An equal job is already waiting to run."}
	}
	return notFoundOr(err, jobNotFound)
}

// jobErrors decodes why the job's attempts failed.
func jobErrors(j *storage.Job) ([]*storage.JobError, error) {
	list, err := j.ErrorList()
	if err != nil {
		return nil, err
	}
	list = list[max(0, len(list)-MaxJobErrors):]
	out := make([]*storage.JobError, len(list))
	for i := range list {
		out[i] = &list[i]
	}
	return out, nil
}
