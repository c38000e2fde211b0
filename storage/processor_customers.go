package storage

import (
	"context"
	"database/sql"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// ProcessorCustomerID reads the payment processor's id of a customer's record there, ""
// when none is recorded yet. It reads the row rather than taking a loaded Customer, since
// the id is recorded by saves that may run after the customer was loaded (or cached).
func ProcessorCustomerID(ctx context.Context, q sqlx.ExtContext, customerID uuid.UUID) (string, error) {
	var id sql.NullString
	err := sqlx.GetContext(ctx, q, &id, `SELECT processor_customer_id FROM customers WHERE id = $1`, customerID)
	return id.String, mapErr(err)
}

// RecordProcessorCustomerID records id as the processor's record of a customer unless one
// is recorded already, and returns the one recorded: the first wins. It is one statement
// that always locks the row, so a concurrent recording waits for the first and then reads
// the first's id rather than overwriting it.
func RecordProcessorCustomerID(ctx context.Context, q sqlx.ExtContext, customerID uuid.UUID, id string) (string, error) {
	var recorded string
	err := sqlx.GetContext(ctx, q, &recorded, `UPDATE customers SET processor_customer_id = coalesce(processor_customer_id, $2)
		WHERE id = $1 RETURNING processor_customer_id`, customerID, id)
	return recorded, mapErr(err)
}
