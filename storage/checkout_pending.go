package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/payment"
)

// PendingPayment is what a confirmed checkout whose payment finishes later keeps until the
// processor settles it: the intent it waits for, and the payment method it is paid with
// (one the processor saved from the buyer's token, or one the customer had saved). Without
// an intent, the processor could not be reached and Till asks again until it answers.
type PendingPayment struct {
	IntentID string          `json:"intent_id"`
	Method   *payment.Method `json:"method,omitempty"`
	MethodID *uuid.UUID      `json:"method_id,omitempty"`
	Trialing bool            `json:"trialing"`
}

// The keys of payment_processor_metadata the buyer's page reads to finish a payment with
// the processor, as upstream names them.
const (
	intentClientSecretKey = "intent_client_secret"
	intentStatusKey       = "intent_status"
)

// SetCheckoutPendingPayment makes a confirmed checkout wait for p's intent, showing the
// buyer's page the intent's status and, when it has one to give, its client secret.
func SetCheckoutPendingPayment(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, p PendingPayment, clientSecret, status string) error {
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	shown := map[string]string{intentStatusKey: status}
	if clientSecret != "" {
		shown[intentClientSecretKey] = clientSecret
	}
	meta, err := json.Marshal(shown)
	if err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, `UPDATE checkouts SET pending_intent_id = nullif($2, ''), pending_payment = $3,
		payment_processor_metadata = payment_processor_metadata || $4::jsonb, modified_at = now()
		WHERE id = $1`, id, p.IntentID, string(raw), string(meta))
	return mapErr(err)
}

// LockCheckoutByPendingIntent locks the checkout waiting for intentID and returns it with
// what it waits for; ErrNotFound when none waits for it.
func LockCheckoutByPendingIntent(ctx context.Context, q sqlx.ExtContext, intentID string, now time.Time) (*Checkout, *PendingPayment, error) {
	var row struct {
		ID      uuid.UUID `db:"id"`
		Pending []byte    `db:"pending_payment"`
	}
	err := sqlx.GetContext(ctx, q, &row, `SELECT id, pending_payment FROM checkouts WHERE pending_intent_id = $1 FOR UPDATE`, intentID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, ErrNotFound
	}
	if err != nil {
		return nil, nil, mapErr(err)
	}
	var p PendingPayment
	if err := json.Unmarshal(row.Pending, &p); err != nil {
		return nil, nil, err
	}
	c, err := getCheckout(ctx, q, "c.id = $2", row.ID, now, false)
	return c, &p, err
}

// EndCheckoutPendingPayment stops a checkout waiting: succeeded keeps the client secret and
// shows the intent succeeded, as upstream does; otherwise both keys go, so the buyer's page
// offers the payment form again.
func EndCheckoutPendingPayment(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, succeeded bool) error {
	meta := `payment_processor_metadata - '` + intentClientSecretKey + `' - '` + intentStatusKey + `'`
	if succeeded {
		meta = `payment_processor_metadata || '{"` + intentStatusKey + `": "succeeded"}'`
	}
	_, err := q.ExecContext(ctx, `UPDATE checkouts SET pending_intent_id = NULL, pending_payment = NULL,
		payment_processor_metadata = `+meta+`, modified_at = now() WHERE id = $1`, id)
	return mapErr(err)
}

// CheckoutPendingPayment is what the checkout waits for; nil when it waits for nothing.
func CheckoutPendingPayment(ctx context.Context, q sqlx.QueryerContext, id uuid.UUID) (*PendingPayment, error) {
	var raw []byte
	err := sqlx.GetContext(ctx, q, &raw, `SELECT pending_payment FROM checkouts WHERE id = $1`, id)
	if err != nil || raw == nil {
		return nil, mapErr(err)
	}
	var p PendingPayment
	return &p, json.Unmarshal(raw, &p)
}
