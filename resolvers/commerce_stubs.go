package resolvers

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
)

// createOrder stores an order with its items, numbering it in the organization's invoice
// sequence, and emits order.created (and order.paid when created paid).
func (r *Resolver) createOrder(ctx context.Context, tx *sqlx.Tx, spec orderSpec) (*storage.Order, error) {
	return nil, errNotImplemented
}

// createSubscription stores a subscription for a recurring product: trialing until
// spec.TrialEnd or active for its first period; emits subscription.created (and .active).
func (r *Resolver) createSubscription(ctx context.Context, tx *sqlx.Tx, spec subscriptionSpec) (*storage.Subscription, error) {
	return nil, errNotImplemented
}

// grantBenefits grants every benefit of the product for the scope (idempotent: a benefit
// already granted for the same scope is left alone); license-key benefits issue a key.
func (r *Resolver) grantBenefits(ctx context.Context, tx *sqlx.Tx, scope grantScope) error {
	return errNotImplemented
}

// revokeBenefits revokes the grants of the scope (idempotent); license keys are revoked.
func (r *Resolver) revokeBenefits(ctx context.Context, tx *sqlx.Tx, scope grantScope) error {
	return errNotImplemented
}

// applyDiscount resolves a discount by id or code for a customer buying productID at a
// base amount in currency, checks validity window, product restriction, redemption limits
// (total and per customer) and currency, and returns the amount taken off. It does not
// redeem: redeemDiscount does, when the purchase commits. Arguments: organization,
// discount id, code, customer, product, base amount, currency.
func (r *Resolver) applyDiscount(ctx context.Context, tx *sqlx.Tx, orgID uuid.UUID, discountID *uuid.UUID, code *string,
	customerID, productID uuid.UUID, amount int64, currency string) (*discountUse, error) {
	return nil, errNotImplemented
}

// redeemDiscount counts one redemption of a discount for a customer, race-free: the limit
// checks and the increment are one statement, so concurrent purchases never exceed
// max_redemptions or max_redemptions_per_customer. An exhausted discount is an error.
func (r *Resolver) redeemDiscount(ctx context.Context, tx *sqlx.Tx, discountID, customerID uuid.UUID, checkoutID, orderID, subscriptionID *uuid.UUID) error {
	return errNotImplemented
}

// markOrderPaid turns a pending order paid (allocating its receipt number) and emits
// order.updated and order.paid; an order already paid is returned unchanged.
func (r *Resolver) markOrderPaid(ctx context.Context, tx *sqlx.Tx, orderID uuid.UUID) (*storage.Order, error) {
	return nil, errNotImplemented
}

// scheduleOrderPayment records when a pending order's payment will be retried (nil: no
// more retries) and emits order.updated.
func (r *Resolver) scheduleOrderPayment(ctx context.Context, tx *sqlx.Tx, orderID uuid.UUID, next *time.Time) error {
	return errNotImplemented
}
