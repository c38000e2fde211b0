package storage

import (
	"context"
	"database/sql"
	"errors"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/payment"
)

// TestPayments keeps the built-in test processor's memory in PostgreSQL
// (payment.TestState), so that every process of an installation charges a saved test card
// the same way. Its pool should be its own: the processor is called while a use case holds
// a connection of the main pool, and must not wait for another one of it.
type TestPayments struct {
	DB *sqlx.DB
}

// SaveTestMethod implements payment.TestState.
func (s TestPayments) SaveTestMethod(ctx context.Context, m payment.TestMethod) error {
	_, err := s.DB.ExecContext(ctx, `INSERT INTO test_payment_methods (id, token, customer_id)
		VALUES ($1, $2, nullif($3, ''))`, m.ID, m.Token, m.Customer)
	return mapErr(err)
}

// testCharge is a row of test_payment_charges.
type testCharge struct {
	ChargeID     sql.NullString `db:"charge_id"`
	Amount       int64          `db:"amount"`
	DeclineCode  sql.NullString `db:"decline_code"`
	Currency     string         `db:"currency"`
	Token        string         `db:"token"`
	Status       string         `db:"status"`
	IntentID     sql.NullString `db:"intent_id"`
	ClientSecret sql.NullString `db:"client_secret"`
}

const testChargeColumns = `charge_id, amount, decline_code, currency, token, status, intent_id, client_secret`

func (c testCharge) outcome() payment.TestOutcome {
	return payment.TestOutcome{ChargeID: c.ChargeID.String, Amount: c.Amount, DeclineCode: c.DeclineCode.String,
		Currency: c.Currency, Token: c.Token, Status: c.Status, IntentID: c.IntentID.String, ClientSecret: c.ClientSecret.String}
}

// ChargeTestMethod implements payment.TestState. A transaction-scoped advisory lock on the
// key makes concurrent charges with one key wait for the first, which then answers them
// all; the method's row lock orders charges of one method. A charge without a key is kept
// under a key of its own, so it can be refunded and settled like any other.
func (s TestPayments) ChargeTestMethod(ctx context.Context, key, methodID string, decide func(m payment.TestMethod, known bool) (payment.TestOutcome, error)) (payment.TestOutcome, error) {
	var out payment.TestOutcome
	err := InTx(ctx, s.DB, func(tx *sqlx.Tx) error {
		if key != "" {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('till test charge ' || $1, 0))`, key); err != nil {
				return err
			}
			var prev testCharge
			err := sqlx.GetContext(ctx, tx, &prev, `SELECT `+testChargeColumns+` FROM test_payment_charges
				WHERE idempotency_key = $1`, key)
			if err == nil {
				out = prev.outcome()
				return nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		} else {
			key = "unkeyed " + uuid.NewString()
		}
		var method struct {
			Token    string `db:"token"`
			Customer string `db:"customer_id"`
			Charged  int    `db:"charged"`
		}
		err := sqlx.GetContext(ctx, tx, &method, `SELECT token, coalesce(customer_id, '') AS customer_id, charged
			FROM test_payment_methods WHERE id = $1 FOR UPDATE`, methodID)
		known := err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if out, err = decide(payment.TestMethod{ID: methodID, Token: method.Token, Customer: method.Customer,
			Charged: method.Charged}, known); err != nil {
			return err
		}
		if known {
			if _, err := tx.ExecContext(ctx, `UPDATE test_payment_methods SET charged = charged + 1 WHERE id = $1`, methodID); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO test_payment_charges (idempotency_key, `+testChargeColumns+`)
			VALUES ($1, nullif($2, ''), $3, nullif($4, ''), $5, $6, $7, nullif($8, ''), nullif($9, ''))`,
			key, out.ChargeID, out.Amount, out.DeclineCode, out.Currency, out.Token, out.Status, out.IntentID, out.ClientSecret)
		return err
	})
	return out, mapErr(err)
}

// SettleTestIntent implements payment.TestState, under the charge's row lock.
func (s TestPayments) SettleTestIntent(ctx context.Context, clientSecret string, decide func(payment.TestOutcome) payment.TestOutcome) (payment.TestOutcome, error) {
	var out payment.TestOutcome
	err := InTx(ctx, s.DB, func(tx *sqlx.Tx) error {
		var row testCharge
		err := sqlx.GetContext(ctx, tx, &row, `SELECT `+testChargeColumns+` FROM test_payment_charges
			WHERE client_secret = $1 FOR UPDATE`, clientSecret)
		if errors.Is(err, sql.ErrNoRows) {
			return payment.ErrUnknownIntent
		}
		if err != nil {
			return err
		}
		if out = row.outcome(); out.Status != payment.TestRequiresAction {
			return nil
		}
		out = decide(out)
		_, err = tx.ExecContext(ctx, `UPDATE test_payment_charges SET charge_id = nullif($2, ''), amount = $3,
			decline_code = nullif($4, ''), status = $5 WHERE client_secret = $1`,
			clientSecret, out.ChargeID, out.Amount, out.DeclineCode, out.Status)
		return err
	})
	if errors.Is(err, payment.ErrUnknownIntent) {
		return out, err
	}
	return out, mapErr(err)
}

// RefundTestCharge implements payment.TestState. The charge's own row lock orders the
// refunds of one charge, so concurrent refunds never give back more than it took; a refund
// without a key takes a key of its own, so what it gave back still counts.
func (s TestPayments) RefundTestCharge(ctx context.Context, key, chargeID string, decide func(known bool, amount, refunded int64) payment.TestRefund) (payment.TestRefund, error) {
	var out payment.TestRefund
	err := InTx(ctx, s.DB, func(tx *sqlx.Tx) error {
		var amount int64
		err := sqlx.GetContext(ctx, tx, &amount, `SELECT amount FROM test_payment_charges WHERE charge_id = $1 FOR UPDATE`, chargeID)
		known := err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if key != "" {
			var prev struct {
				RefundID sql.NullString `db:"refund_id"`
				Amount   int64          `db:"amount"`
				Refusal  sql.NullString `db:"refusal"`
			}
			err := sqlx.GetContext(ctx, tx, &prev, `SELECT refund_id, amount, refusal FROM test_payment_refunds
				WHERE idempotency_key = $1`, key)
			if err == nil {
				out = payment.TestRefund{RefundID: prev.RefundID.String, Amount: prev.Amount, Refusal: prev.Refusal.String}
				return nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		} else {
			key = "unkeyed " + uuid.NewString()
		}
		var refunded int64
		if err := sqlx.GetContext(ctx, tx, &refunded, `SELECT coalesce(sum(amount), 0) FROM test_payment_refunds
			WHERE charge_id = $1`, chargeID); err != nil {
			return err
		}
		out = decide(known, amount, refunded)
		_, err = tx.ExecContext(ctx, `INSERT INTO test_payment_refunds (idempotency_key, charge_id, refund_id, amount, refusal)
			VALUES ($1, $2, nullif($3, ''), $4, nullif($5, ''))`, key, chargeID, out.RefundID, out.Amount, out.Refusal)
		return err
	})
	return out, mapErr(err)
}
