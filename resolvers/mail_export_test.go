package resolvers

import (
	"context"

	"github.com/jmoiron/sqlx"

	"till/internal/mail"
)

// EnqueueMail exposes enqueueMail to the package's external tests.
func (r *Resolver) EnqueueMail(ctx context.Context, tx *sqlx.Tx, m mail.Message) error {
	return r.enqueueMail(ctx, tx, m)
}
