package resolvers

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/jmoiron/sqlx"

	"till/internal/jobs"
	"till/internal/mail"
	"till/storage"
)

// JobMailSend delivers one mail. Use cases enqueue it in the transaction of the change the
// mail tells about, so a sign-in code or an invitation is sent exactly when it exists, and a
// mail server that is down delays it instead of losing it.
const JobMailSend = "mail.send"

// mailAttempts bounds the retries of an undeliverable mail: a sign-in code is worthless after
// its lifetime anyway, and an invitation can be sent again.
const mailAttempts = 8

// enqueueMail queues m for delivery when tx commits.
func (r *Resolver) enqueueMail(ctx context.Context, tx *sqlx.Tx, m mail.Message) error {
	if strings.TrimSpace(m.To) == "" {
		return errors.New("mail: a message needs a recipient")
	}
	_, _, err := storage.InsertJob(ctx, tx, storage.JobInsert{Kind: JobMailSend, Args: m, MaxAttempts: mailAttempts})
	return err
}

// sendMailJob hands a queued message to the configured sender; with none configured the
// message is logged, so nothing is silently dropped.
func (r *Resolver) sendMailJob(ctx context.Context, _ *sqlx.Tx, job *storage.Job) error {
	var m mail.Message
	if err := json.Unmarshal(job.Args, &m); err != nil || m.To == "" {
		return jobs.Discard(errors.New("mail job without a message"))
	}
	sender := r.mail
	if sender == nil {
		sender = mail.Log{Logger: r.logger}
	}
	return sender.Send(ctx, m)
}
