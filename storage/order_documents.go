package storage

import (
	"context"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// SetOrderInvoice records where an order's rendered invoice is stored and the fingerprint of
// the details it shows, which tells a later request whether it must be rendered again.
func SetOrderInvoice(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, path, checksum string) (*Order, error) {
	var o Order
	err := sqlx.GetContext(ctx, q, &o, `UPDATE orders SET invoice_path = $2, invoice_checksum = $3, modified_at = now()
		WHERE id = $1 AND deleted_at IS NULL RETURNING `+orderColumns, id, path, checksum)
	return &o, mapErr(err)
}

// SetOrderReceipt records where an order's rendered receipt is stored.
func SetOrderReceipt(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, path string) (*Order, error) {
	var o Order
	err := sqlx.GetContext(ctx, q, &o, `UPDATE orders SET receipt_path = $2, modified_at = now()
		WHERE id = $1 AND deleted_at IS NULL RETURNING `+orderColumns, id, path)
	return &o, mapErr(err)
}
