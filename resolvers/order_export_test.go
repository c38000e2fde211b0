package resolvers

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
)

// Test hooks for the order contracts, which only the purchase flow calls in production: the
// orders tests reach them here, each in a transaction of its own as a purchase would be.

// OrderSpec and OrderItemSpec expose the contract types to package resolvers_test.
type (
	OrderSpec     = orderSpec
	OrderItemSpec = orderItemSpec
)

// CreateOrderForTest runs createOrder in its own transaction and reads the order as it was
// committed, numbers included.
func (r *Resolver) CreateOrderForTest(ctx context.Context, spec OrderSpec) (o *storage.Order, err error) {
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		o, err = r.createOrder(ctx, tx, spec)
		return err
	})
	if err != nil {
		return nil, err
	}
	return storage.GetOrderByID(ctx, r.db, o.ID)
}

// MarkOrderPaidForTest runs markOrderPaid in its own transaction and reads the order as it
// was committed, receipt number included.
func (r *Resolver) MarkOrderPaidForTest(ctx context.Context, id uuid.UUID) (o *storage.Order, err error) {
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		o, err = r.markOrderPaid(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return storage.GetOrderByID(ctx, r.db, o.ID)
}

// ScheduleOrderPaymentForTest runs scheduleOrderPayment in its own transaction.
func (r *Resolver) ScheduleOrderPaymentForTest(ctx context.Context, id uuid.UUID, next *time.Time) error {
	return storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		return r.scheduleOrderPayment(ctx, tx, id, next)
	})
}

// CreateOrderInTx runs createOrder in the caller's transaction, for tests that hold a
// purchase open or roll it back.
func (r *Resolver) CreateOrderInTx(ctx context.Context, tx *sqlx.Tx, spec OrderSpec) (*storage.Order, error) {
	return r.createOrder(ctx, tx, spec)
}

// MarkOrderPaidInTx runs markOrderPaid in the caller's transaction.
func (r *Resolver) MarkOrderPaidInTx(ctx context.Context, tx *sqlx.Tx, id uuid.UUID) (*storage.Order, error) {
	return r.markOrderPaid(ctx, tx, id)
}
