package resolvers

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"till/storage"
)

// Test hooks for the subscription contracts: createSubscription runs inside a checkout's
// transaction in production; the subscription tests call it here in a transaction of its own,
// so they do not depend on the checkout flow.

// SubscriptionSpec exposes the contract type to package resolvers_test.
type SubscriptionSpec = subscriptionSpec

// CreateSubscriptionForTest runs createSubscription in its own transaction.
func (r *Resolver) CreateSubscriptionForTest(ctx context.Context, spec SubscriptionSpec) (s *storage.Subscription, err error) {
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		s, err = r.createSubscription(ctx, tx, spec)
		return err
	})
	return s, err
}

// SubscriptionPeriodEnd exposes the period arithmetic.
func SubscriptionPeriodEnd(origin, start time.Time, interval storage.Interval, count int) time.Time {
	return subscriptionPeriodEnd(origin, start, interval, count)
}
