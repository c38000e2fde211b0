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

// ChargeTestMethod implements payment.TestState. A transaction-scoped advisory lock on the
// key makes concurrent charges with one key wait for the first, which then answers them
// all; the method's row lock orders charges of one method.
func (s TestPayments) ChargeTestMethod(ctx context.Context, key, methodID string, decide func(m payment.TestMethod, known bool) (payment.TestOutcome, error)) (payment.TestOutcome, error) {
	var out payment.TestOutcome
	err := InTx(ctx, s.DB, func(tx *sqlx.Tx) error {
		if key != "" {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('till test charge ' || $1, 0))`, key); err != nil {
				return err
			}
			var prev struct {
				ChargeID    sql.NullString `db:"charge_id"`
				Amount      int64          `db:"amount"`
				DeclineCode sql.NullString `db:"decline_code"`
			}
			err := sqlx.GetContext(ctx, tx, &prev, `SELECT charge_id, amount, decline_code FROM test_payment_charges
				WHERE idempotency_key = $1`, key)
			if err == nil {
				out = payment.TestOutcome{ChargeID: prev.ChargeID.String, Amount: prev.Amount, DeclineCode: prev.DeclineCode.String}
				return nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
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
		if key == "" {
			return nil
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO test_payment_charges (idempotency_key, charge_id, amount, decline_code)
			VALUES ($1, nullif($2, ''), $3, nullif($4, ''))`, key, out.ChargeID, out.Amount, out.DeclineCode)
		return err
	})
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
