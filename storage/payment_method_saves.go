package storage

import (
	"context"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// GetPaymentMethod reads a live saved payment method of a customer of the given organizations.
func GetPaymentMethod(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*PaymentMethod, error) {
	var pm PaymentMethod
	err := sqlx.GetContext(ctx, q, &pm, paymentMethodSelect+`
		WHERE pm.id = $1 AND pm.organization_id = ANY($2) AND pm.deleted_at IS NULL AND c.deleted_at IS NULL AND `+savedMethod,
		id, pq.Array(orgs))
	return &pm, mapErr(err)
}

// SetDefaultPaymentMethod makes a payment method its customer's default. When onlyIfNone,
// it does so only for a customer without a live default, which is how a first method
// becomes the default without a read-then-write race. It reports whether it changed.
func SetDefaultPaymentMethod(ctx context.Context, q sqlx.ExtContext, customerID, id uuid.UUID, onlyIfNone bool) (bool, error) {
	res, err := q.ExecContext(ctx, `UPDATE customers c SET default_payment_method_id = $2, modified_at = now()
		WHERE c.id = $1 AND c.default_payment_method_id IS DISTINCT FROM $2 AND (NOT $3 OR c.default_payment_method_id IS NULL
			OR NOT EXISTS (SELECT 1 FROM payment_methods d WHERE d.id = c.default_payment_method_id AND d.deleted_at IS NULL))`,
		customerID, id, onlyIfNone)
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// DeletePaymentMethod soft-deletes a live saved payment method of a customer and clears the
// customer's default when it was this method. It returns the method as it now reads and
// whether the default was cleared.
func DeletePaymentMethod(ctx context.Context, q sqlx.ExtContext, customerID, id uuid.UUID) (*PaymentMethod, bool, error) {
	res, err := q.ExecContext(ctx, `UPDATE payment_methods pm SET deleted_at = now(), modified_at = now()
		WHERE pm.id = $1 AND pm.customer_id = $2 AND pm.deleted_at IS NULL AND `+savedMethod, id, customerID)
	if err != nil {
		return nil, false, mapErr(err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err == nil {
			err = ErrNotFound
		}
		return nil, false, err
	}
	res, err = q.ExecContext(ctx, `UPDATE customers SET default_payment_method_id = NULL, modified_at = now()
		WHERE id = $1 AND default_payment_method_id = $2`, customerID, id)
	if err != nil {
		return nil, false, mapErr(err)
	}
	cleared, err := res.RowsAffected()
	if err != nil {
		return nil, false, err
	}
	var pm PaymentMethod
	err = sqlx.GetContext(ctx, q, &pm, paymentMethodSelect+` WHERE pm.id = $1`, id)
	return &pm, cleared == 1, mapErr(err)
}
