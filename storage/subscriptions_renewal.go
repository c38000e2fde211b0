package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// ClaimDueSubscription locks one live subscription that needs the renewal worker at now and
// returns its id (ErrNotFound when none is due). Due means: the current period of a trialing
// or active subscription (or of a past_due one set to cancel) has ended, or a past_due
// subscription has a pending order whose payment retry is due. SKIP LOCKED lets concurrent
// workers claim different subscriptions; the lock holds until the caller's transaction ends,
// so one subscription is renewed by one worker at a time. With orgID nil, organizations
// running on a test clock are left out: their time only moves when the clock is advanced.
func ClaimDueSubscription(ctx context.Context, tx sqlx.ExtContext, orgID *uuid.UUID, now time.Time, skip []uuid.UUID) (uuid.UUID, error) {
	var id uuid.UUID
	err := sqlx.GetContext(ctx, tx, &id, `SELECT s.id FROM subscriptions s
		WHERE NOT (s.id = ANY(coalesce($3::uuid[], '{}')))
		AND (s.organization_id = $2 OR ($2::uuid IS NULL AND NOT EXISTS (
			SELECT 1 FROM test_clocks t WHERE t.organization_id = s.organization_id)))
		AND `+renewalDueAt("$1")+`
		ORDER BY s.current_period_end LIMIT 1 FOR UPDATE OF s SKIP LOCKED`, now, orgID, pq.Array(skip))
	return id, mapErr(err)
}

// renewalDueAt is the condition under which the subscription s has renewal work due at the
// time at (an SQL expression): a period that ended, or a payment retry that fell due on an
// order no manual retry holds (see paymentLockHeld).
func renewalDueAt(at string) string {
	return `s.deleted_at IS NULL AND ((s.current_period_end <= ` + at + ` AND (s.status IN ('trialing', 'active')
				OR (s.status = 'past_due' AND s.cancel_at_period_end)))
			OR (s.status = 'past_due' AND EXISTS (SELECT 1 FROM orders o WHERE o.subscription_id = s.id
				AND o.status = 'pending' AND o.next_payment_attempt_at <= ` + at + `
				AND NOT ` + paymentLockHeld("o", at) + `)))`
}

// paymentLockHeld is whether a manual payment retry holds the payment of the order alias at
// the time at (an SQL expression). A retry takes the lock before it charges and keeps it
// while the customer completes a 3-D Secure step; the outcome releases it. A lock older than
// an hour (upstream's PAYMENT_LOCK_STALE_THRESHOLD) is stale, left by a retry that never
// ended, and holds nothing.
func paymentLockHeld(alias, at string) string {
	return `(` + alias + `.payment_lock_acquired_at IS NOT NULL AND ` + alias + `.payment_lock_acquired_at + interval '1 hour' > ` + at + `)`
}

// StrandedTestClocks lists the test clocks that were last advanced before since and still
// have renewal work due at their time: an advance renews everything due before it answers,
// so such work was left by a process that died during an advance.
func StrandedTestClocks(ctx context.Context, q sqlx.QueryerContext, since time.Time) ([]TestClock, error) {
	var out []TestClock
	err := sqlx.SelectContext(ctx, q, &out, `SELECT `+prefixed("t", testClockColumns)+` FROM test_clocks t
		WHERE coalesce(t.modified_at, t.created_at) < $1
		AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.organization_id = t.organization_id AND `+
		renewalDueAt("t.frozen_at")+`)
		ORDER BY t.organization_id`, since)
	return out, mapErr(err)
}

// UnpaidOrder is the pending order of a subscription that dunning keeps retrying.
type UnpaidOrder struct {
	ID                   uuid.UUID  `db:"id"`
	DueAmount            int64      `db:"due_amount"`
	Currency             string     `db:"currency"`
	NextPaymentAttemptAt *time.Time `db:"next_payment_attempt_at"`
	// FailedAttempts counts the declined charges dunning made for the order so far; the
	// customer's own retries from the portal are not dunning's and do not count.
	FailedAttempts int `db:"failed_attempts"`
	// PaymentLocked says a manual retry holds the order's payment at the time asked about.
	PaymentLocked bool `db:"payment_locked"`
}

// LatestUnpaidOrder reads the newest pending order of a subscription, as it stands at `at`;
// ErrNotFound when none.
func LatestUnpaidOrder(ctx context.Context, q sqlx.ExtContext, subscriptionID uuid.UUID, at time.Time) (*UnpaidOrder, error) {
	var o UnpaidOrder
	err := sqlx.GetContext(ctx, q, &o, `SELECT o.id, o.due_amount, o.currency, o.next_payment_attempt_at,
		(SELECT count(*) FROM payments p WHERE p.order_id = o.id AND p.status = 'failed'
			AND p.trigger IS DISTINCT FROM 'retry_customer') AS failed_attempts,
		`+paymentLockHeld("o", "$2::timestamptz")+` AS payment_locked
		FROM orders o WHERE o.subscription_id = $1 AND o.status = 'pending'
		ORDER BY o.created_at DESC LIMIT 1`, subscriptionID, at)
	return &o, mapErr(err)
}

// ChargeAttempt is one charge of a saved payment method, successful or declined, as the
// payments table keeps it.
type ChargeAttempt struct {
	OrganizationID  uuid.UUID
	CustomerID      uuid.UUID
	OrderID         uuid.UUID
	PaymentMethodID *uuid.UUID
	Processor       string
	ProcessorID     *string // the processor's charge id when it succeeded
	Status          string  // succeeded or failed
	Amount          int64
	Currency        string
	DeclineReason   *string
	DeclineMessage  *string
	// Trigger is upstream's PaymentTrigger of the attempt; nil counts as dunning's.
	Trigger *PaymentTrigger
	// IntentID is the processor's payment intent when the attempt waits for the customer
	// (3-D Secure): its outcome arrives later under that id (see OrderAwaitingIntent).
	IntentID *string
}

// PaymentTrigger is what started a payment, in upstream's vocabulary.
type PaymentTrigger string

// PaymentTriggerRetryCustomer is a retry the customer made from the portal: it counts
// toward the order's manual retry ceiling, never toward dunning's.
const PaymentTriggerRetryCustomer PaymentTrigger = "retry_customer"

// RecordChargeAttempt stores a charge attempt of an order, made at now. An attempt is never
// dated before an earlier one of its order, so the latest attempt is the last one made even
// when a frozen test clock dates several at one instant.
func RecordChargeAttempt(ctx context.Context, q sqlx.ExtContext, now time.Time, a ChargeAttempt) error {
	_, err := q.ExecContext(ctx, `INSERT INTO payments (organization_id, customer_id, order_id,
		payment_method_id, processor, processor_id, status, amount, currency, decline_reason,
		decline_message, trigger, intent_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, GREATEST($14::timestamptz,
			(SELECT max(created_at) + interval '1 microsecond' FROM payments WHERE order_id = $3)))`,
		a.OrganizationID, a.CustomerID, a.OrderID, a.PaymentMethodID, a.Processor, a.ProcessorID, a.Status,
		a.Amount, a.Currency, a.DeclineReason, a.DeclineMessage, a.Trigger, a.IntentID, now)
	return mapErr(err)
}

// ChargeableMethod reads the live payment method a subscription charges: its own when set
// and still the customer's, otherwise the customer's default. A method held for a checkout
// (see PaymentMethodWrite.HeldForCheckoutID) is charged only by the subscription that
// checkout created, and that subscription never falls back to the customer's default: the
// customer did not bring the card that started it. ErrNotFound when nothing may be charged.
func ChargeableMethod(ctx context.Context, q sqlx.ExtContext, s *Subscription) (*PaymentMethod, error) {
	var pm PaymentMethod
	// The subquery keeps a held method even once deleted, so the COALESCE does not reach
	// the default; the deleted method then matches nothing.
	err := sqlx.GetContext(ctx, q, &pm, paymentMethodSelect+`
		WHERE pm.customer_id = $1 AND pm.deleted_at IS NULL
		AND (pm.held_for_checkout_id IS NULL OR pm.held_for_checkout_id = $3)
		AND pm.id = COALESCE((SELECT p.id FROM payment_methods p WHERE p.id = $2 AND p.customer_id = $1
			AND (p.deleted_at IS NULL OR p.held_for_checkout_id IS NOT NULL)), c.default_payment_method_id)`,
		s.CustomerID, s.PaymentMethodID, s.CheckoutID)
	return &pm, mapErr(err)
}

// TestClock is the frozen time of a test-mode organization.
type TestClock struct {
	OrganizationID uuid.UUID  `db:"organization_id"`
	CreatedAt      time.Time  `db:"created_at"`
	ModifiedAt     *time.Time `db:"modified_at"`
	FrozenAt       time.Time  `db:"frozen_at"`
}

const testClockColumns = `organization_id, created_at, modified_at, frozen_at`

// GetTestClock reads an organization's test clock; ErrNotFound when it has none.
func GetTestClock(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID) (*TestClock, error) {
	var c TestClock
	err := sqlx.GetContext(ctx, q, &c, `SELECT `+testClockColumns+` FROM test_clocks WHERE organization_id = $1`, orgID)
	return &c, mapErr(err)
}

// AdvanceTestClock sets an organization's clock to `to`, creating it when missing. The clock
// only moves forward: when it already reads `to` or later nothing changes and ErrNotFound is
// returned, decided in the one statement so concurrent advances cannot move it back.
func AdvanceTestClock(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, to time.Time) (*TestClock, error) {
	var c TestClock
	err := sqlx.GetContext(ctx, q, &c, `INSERT INTO test_clocks (organization_id, frozen_at) VALUES ($1, $2)
		ON CONFLICT (organization_id) DO UPDATE SET frozen_at = EXCLUDED.frozen_at, modified_at = now()
		WHERE test_clocks.frozen_at < EXCLUDED.frozen_at RETURNING `+testClockColumns, orgID, to)
	return &c, mapErr(err)
}
