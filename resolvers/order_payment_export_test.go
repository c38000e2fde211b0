package resolvers

import (
	"context"

	"github.com/jmoiron/sqlx"

	"till/internal/payment"
	"till/storage"
)

// SettleOrderIntentForTest runs settleOrderIntent in its own transaction, as the processor
// event that reports the outcome would.
func (r *Resolver) SettleOrderIntentForTest(ctx context.Context, processor string, in payment.IntentOutcome) (handled bool, err error) {
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		handled, err = r.settleOrderIntent(ctx, tx, processor, in)
		return err
	})
	return handled, err
}
