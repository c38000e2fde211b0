package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// OrderPayment is what a payment of a pending order reads of it, under its row lock: enough
// to charge it, and what decides whether it may be charged now.
type OrderPayment struct {
	ID                   uuid.UUID   `db:"id"`
	OrganizationID       uuid.UUID   `db:"organization_id"`
	CustomerID           uuid.UUID   `db:"customer_id"`
	SubscriptionID       *uuid.UUID  `db:"subscription_id"`
	Status               OrderStatus `db:"status"`
	DueAmount            int64       `db:"due_amount"`
	Currency             string      `db:"currency"`
	Description          string      `db:"description"`
	NextPaymentAttemptAt *time.Time  `db:"next_payment_attempt_at"`
	// PaymentLocked says a manual retry holds the payment at the time asked about.
	PaymentLocked bool `db:"payment_locked"`
	// CustomerRetries counts the customer's retries of the order that reached an outcome,
	// which is what upstream's ceiling counts: it keeps no payment for an intent still
	// waiting for the customer.
	CustomerRetries int `db:"customer_retries"`
	// CustomerAttempts counts every retry the customer made, waiting ones included, so each
	// new one charges under a key of its own.
	CustomerAttempts int `db:"customer_attempts"`
}

// OrderPaymentKey names the order to lock. Orgs and CustomerID, when set, also require the
// order to belong to them (a portal session's request); a use case that found the order
// through its own rows leaves them nil.
type OrderPaymentKey struct {
	ID         uuid.UUID
	Orgs       []uuid.UUID
	CustomerID *uuid.UUID
}

// LockOrderPayment reads a live order for a payment of it at the time at and locks its row
// until the transaction ends; ErrNotFound when there is none (or not of Orgs, CustomerID).
func LockOrderPayment(ctx context.Context, q sqlx.ExtContext, k OrderPaymentKey, at time.Time) (*OrderPayment, error) {
	var o OrderPayment
	var orgs any
	if k.Orgs != nil {
		orgs = pq.Array(k.Orgs)
	}
	err := sqlx.GetContext(ctx, q, &o, `SELECT o.id, o.organization_id, o.customer_id, o.subscription_id, o.status,
		o.due_amount, o.currency, o.description, o.next_payment_attempt_at,
		`+paymentLockHeld("o", "$4::timestamptz")+` AS payment_locked,
		(SELECT count(*) FROM payments p WHERE p.order_id = o.id AND p.trigger = 'retry_customer'
			AND NOT `+awaitingCustomer+`) AS customer_retries,
		(SELECT count(*) FROM payments p WHERE p.order_id = o.id AND p.trigger = 'retry_customer') AS customer_attempts
		FROM orders o WHERE o.id = $1 AND o.deleted_at IS NULL
		AND ($2::uuid[] IS NULL OR o.organization_id = ANY($2)) AND ($3::uuid IS NULL OR o.customer_id = $3)
		FOR UPDATE OF o`, k.ID, orgs, k.CustomerID, at)
	return &o, mapErr(err)
}

// awaitingCustomer is whether the payment p waits for the customer to finish a step at the
// processor (an SQL expression): Till records such an attempt, upstream records nothing
// until the processor reports its outcome, so reads that answer as upstream leave it out.
const awaitingCustomer = `(p.status = 'pending' AND p.intent_id IS NOT NULL)`

// SetOrderPaymentLock takes (at) or releases (nil) the manual retry lock of an order whose
// row the caller has locked.
func SetOrderPaymentLock(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, at *time.Time) error {
	_, err := q.ExecContext(ctx, `UPDATE orders SET payment_lock_acquired_at = $2 WHERE id = $1`, id, at)
	return mapErr(err)
}

// PaymentState is the status of a payment and why it failed, when it did.
type PaymentState struct {
	Status         string  `db:"status"`
	DeclineMessage *string `db:"decline_message"`
}

// LatestOrderPayment reads the newest payment of an order that has an outcome or is still
// under way at the processor; ErrNotFound when none.
func LatestOrderPayment(ctx context.Context, q sqlx.ExtContext, orderID uuid.UUID) (*PaymentState, error) {
	var p PaymentState
	err := sqlx.GetContext(ctx, q, &p, `SELECT p.status, p.decline_message FROM payments p
		WHERE p.order_id = $1 AND NOT `+awaitingCustomer+`
		ORDER BY p.created_at DESC, p.id DESC LIMIT 1`, orderID)
	return &p, mapErr(err)
}

// IntentPayment is the payment a processor's intent was recorded with, and its order.
type IntentPayment struct {
	PaymentID       uuid.UUID  `db:"payment_id"`
	PaymentMethodID *uuid.UUID `db:"payment_method_id"`
	OrderID         uuid.UUID  `db:"order_id"`
	OrganizationID  uuid.UUID  `db:"organization_id"`
	SubscriptionID  *uuid.UUID `db:"subscription_id"`
	// Status is the payment's own (pending while it waits; failed for a renewal that
	// asked for 3-D Secure and already counts as declined), Trigger who made it.
	Status  string          `db:"status"`
	Trigger *PaymentTrigger `db:"trigger"`
}

// PaymentOfIntent reads the newest payment recorded with the processor's intent whose order
// is still pending; ErrNotFound when none. It locks nothing: the caller locks the
// subscription, then the order (LockOrderPayment), the order in which renewals lock them.
func PaymentOfIntent(ctx context.Context, q sqlx.ExtContext, processor, intentID string) (*IntentPayment, error) {
	var p IntentPayment
	err := sqlx.GetContext(ctx, q, &p, `SELECT p.id AS payment_id, p.payment_method_id, o.id AS order_id, o.organization_id,
		o.subscription_id, p.status, p.trigger
		FROM payments p JOIN orders o ON o.id = p.order_id
		WHERE p.processor = $1 AND p.intent_id = $2 AND o.status = 'pending' AND o.deleted_at IS NULL
		ORDER BY p.created_at DESC, p.id DESC LIMIT 1`, processor, intentID)
	return &p, mapErr(err)
}

// PaymentOutcome is the final state of a payment the processor reported later.
type PaymentOutcome struct {
	Status         string  // succeeded or failed
	ProcessorID    *string // the charge, when it succeeded
	DeclineReason  *string
	DeclineMessage *string
}

// SettlePayment writes the final outcome of a payment.
func SettlePayment(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, now time.Time, o PaymentOutcome) error {
	_, err := q.ExecContext(ctx, `UPDATE payments SET status = $2, processor_id = $3, decline_reason = $4,
		decline_message = $5, modified_at = $6 WHERE id = $1`,
		id, o.Status, o.ProcessorID, o.DeclineReason, o.DeclineMessage, now)
	return mapErr(err)
}

// CountDunningOrders counts the pending orders of a subscription whose payment dunning still
// retries: while one is left the subscription stays past_due.
func CountDunningOrders(ctx context.Context, q sqlx.ExtContext, subscriptionID uuid.UUID) (int, error) {
	var n int
	err := sqlx.GetContext(ctx, q, &n, `SELECT count(*) FROM orders WHERE subscription_id = $1
		AND status = 'pending' AND next_payment_attempt_at IS NOT NULL AND deleted_at IS NULL`, subscriptionID)
	return n, mapErr(err)
}
