package storage

import (
	"context"
	"database/sql"
	"errors"

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
func (s TestPayments) SaveTestMethod(ctx context.Context, id, token string) error {
	_, err := s.DB.ExecContext(ctx, `INSERT INTO test_payment_methods (id, token) VALUES ($1, $2)`, id, token)
	return mapErr(err)
}

// ChargeTestMethod implements payment.TestState. A transaction-scoped advisory lock on the
// key makes concurrent charges with one key wait for the first, which then answers them
// all; the method's row lock orders charges of one method.
func (s TestPayments) ChargeTestMethod(ctx context.Context, key, methodID string, decide func(token string, known bool, charged int) payment.TestOutcome) (payment.TestOutcome, error) {
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
			Token   string `db:"token"`
			Charged int    `db:"charged"`
		}
		err := sqlx.GetContext(ctx, tx, &method, `SELECT token, charged FROM test_payment_methods WHERE id = $1 FOR UPDATE`, methodID)
		known := err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		out = decide(method.Token, known, method.Charged)
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
