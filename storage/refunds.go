package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Refund is (part of) a paid order given back to its customer through the processor that
// took the payment.
type Refund struct {
	ID             uuid.UUID    `db:"id"`
	CreatedAt      time.Time    `db:"created_at"`
	ModifiedAt     *time.Time   `db:"modified_at"`
	OrganizationID uuid.UUID    `db:"organization_id"`
	OrderID        uuid.UUID    `db:"order_id"`
	SubscriptionID *uuid.UUID   `db:"subscription_id"`
	CustomerID     uuid.UUID    `db:"customer_id"`
	PaymentID      *uuid.UUID   `db:"payment_id"`
	Status         RefundStatus `db:"status"`
	Reason         RefundReason `db:"reason"`
	Amount         int64        `db:"amount"`
	TaxAmount      int64        `db:"tax_amount"`
	Currency       string       `db:"currency"`
	Comment        *string      `db:"comment"`
	RevokeBenefits bool         `db:"revoke_benefits"`
	Processor      string       `db:"processor"`
	ProcessorID    *string      `db:"processor_id"`
	Metadata       JSONMap      `db:"metadata"`
}

const refundColumns = `id, created_at, modified_at, organization_id, order_id, subscription_id, customer_id,
	payment_id, status, reason, amount, tax_amount, currency, comment, revoke_benefits, processor, processor_id,
	metadata`

var refundColumnsR = qualify("r", refundColumns)

// RefundWrite is a refund the processor accepted, as the use case stores it. ID is chosen
// before the processor is called: the processor's idempotency key is derived from it.
type RefundWrite struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	OrderID        uuid.UUID
	SubscriptionID *uuid.UUID
	CustomerID     uuid.UUID
	PaymentID      uuid.UUID
	Status         RefundStatus
	Reason         RefundReason
	Amount         int64
	TaxAmount      int64
	Currency       string
	Comment        *string
	RevokeBenefits bool
	Processor      string
	ProcessorID    string
	Metadata       JSONMap
}

// InsertRefund stores a refund.
func InsertRefund(ctx context.Context, q sqlx.ExtContext, now time.Time, w RefundWrite) (*Refund, error) {
	if w.Metadata == nil {
		w.Metadata = JSONMap{}
	}
	var r Refund
	err := sqlx.GetContext(ctx, q, &r, `INSERT INTO refunds (id, created_at, organization_id, order_id,
		subscription_id, customer_id, payment_id, status, reason, amount, tax_amount, currency, comment,
		revoke_benefits, processor, processor_id, metadata)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
		RETURNING `+refundColumns,
		w.ID, now, w.OrganizationID, w.OrderID, w.SubscriptionID, w.CustomerID, w.PaymentID, w.Status, w.Reason,
		w.Amount, w.TaxAmount, w.Currency, w.Comment, w.RevokeBenefits, w.Processor, w.ProcessorID, w.Metadata)
	return &r, mapErr(err)
}

// GetRefund reads a refund of the given organizations.
func GetRefund(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*Refund, error) {
	var r Refund
	err := sqlx.GetContext(ctx, q, &r, `SELECT `+refundColumns+` FROM refunds
		WHERE id = $1 AND organization_id = ANY($2)`, id, pq.Array(orgs))
	return &r, mapErr(err)
}

// AddOrderRefund adds a succeeded refund to an order the caller has locked: the refunded
// amounts grow by the refund's, and the status becomes refunded once nothing is left to
// refund (upstream's Order.update_refunds), partially_refunded before.
func AddOrderRefund(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, amount, taxAmount int64, now time.Time) (*Order, error) {
	var o Order
	err := sqlx.GetContext(ctx, q, &o, `UPDATE orders SET refunded_amount = refunded_amount + $2,
		refunded_tax_amount = refunded_tax_amount + $3, modified_at = $4,
		status = CASE WHEN refunded_amount + $2 >= net_amount + applied_balance_amount THEN 'refunded'
			ELSE 'partially_refunded' END
		WHERE id = $1 RETURNING `+orderColumns, id, amount, taxAmount, now)
	return &o, mapErr(err)
}

// Charge is the succeeded payment of an order, as a refund names it at the processor.
type Charge struct {
	ID          uuid.UUID `db:"id"`
	Processor   string    `db:"processor"`
	ProcessorID string    `db:"processor_id"`
}

// SucceededCharge reads the latest succeeded payment of an order that the processor knows
// by an id; ErrNotFound when the order was never charged (a free order, say).
func SucceededCharge(ctx context.Context, q sqlx.ExtContext, orderID uuid.UUID) (*Charge, error) {
	var c Charge
	err := sqlx.GetContext(ctx, q, &c, `SELECT id, processor, processor_id FROM payments
		WHERE order_id = $1 AND status = 'succeeded' AND processor_id IS NOT NULL
		ORDER BY created_at DESC, id DESC LIMIT 1`, orderID)
	return &c, mapErr(err)
}

// RefundListFilter narrows a refund list: the filters of GET /v1/refunds/. Values of one
// field are OR-ed, fields AND-ed; empty fields do not filter.
type RefundListFilter struct {
	IDs                 []uuid.UUID
	OrganizationIDs     []uuid.UUID
	OrderIDs            []uuid.UUID
	SubscriptionIDs     []uuid.UUID
	CustomerIDs         []uuid.UUID
	ExternalCustomerIDs []string
	// Succeeded keeps only succeeded refunds when true, only the others when false.
	Succeeded *bool
}

// RefundSortColumns maps the sort properties of GET /v1/refunds/ to SQL.
var RefundSortColumns = map[string]string{
	"created_at": "r.created_at",
	"amount":     "r.amount",
}

// ListRefunds returns one window of refunds of the given organizations, with the total.
func ListRefunds(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f RefundListFilter, sorts []Sort, w Window) (Paged[*Refund], error) {
	return listWindow[*Refund](ctx, q, refundList(orgs, f, sorts), w)
}

// RefundWindowsByOrders returns one window of each order's refunds, in key order, with the
// same filters and sorting as ListRefunds, in one statement.
func RefundWindowsByOrders(ctx context.Context, q sqlx.ExtContext, orgs, orders []uuid.UUID, f RefundListFilter, sorts []Sort, w Window) ([]Paged[*Refund], error) {
	return listWindows(ctx, q, refundList(orgs, f, sorts), "r.order_id", orders, w,
		func(r *Refund) uuid.UUID { return r.OrderID })
}

// refundList is the refund list query; the customer join serves the external id filter.
func refundList(orgs []uuid.UUID, f RefundListFilter, sorts []Sort) listSQL {
	w := orgFilters("r.organization_id", orgs)
	anyOf(w, "r.id", f.IDs)
	anyOf(w, "r.organization_id", f.OrganizationIDs)
	anyOf(w, "r.order_id", f.OrderIDs)
	anyOf(w, "r.subscription_id", f.SubscriptionIDs)
	anyOf(w, "r.customer_id", f.CustomerIDs)
	if len(f.ExternalCustomerIDs) > 0 {
		w.add("c.external_id = ANY($%d)", pq.Array(f.ExternalCustomerIDs))
	}
	if f.Succeeded != nil {
		if *f.Succeeded {
			w.where = append(w.where, "r.status = 'succeeded'")
		} else {
			w.where = append(w.where, "r.status <> 'succeeded'")
		}
	}
	return listSQL{Columns: refundColumnsR, From: `refunds r LEFT JOIN customers c ON c.id = r.customer_id`,
		ID: "r.id", Where: w.where, Args: w.args, Sorts: sorts, Default: []Sort{{Column: "r.created_at", Desc: true}}}
}

// LockRefundAtProcessor reads the refund that is the processor's refund processorID, with
// its order locked first and then the refund, as a refund's creation locks them, so a
// status change and a new refund of the same order take their turns.
func LockRefundAtProcessor(ctx context.Context, tx *sqlx.Tx, processor, processorID string) (*Refund, error) {
	var orderID uuid.UUID
	if err := sqlx.GetContext(ctx, tx, &orderID, `SELECT order_id FROM refunds WHERE processor = $1 AND processor_id = $2`,
		processor, processorID); err != nil {
		return nil, mapErr(err)
	}
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM orders WHERE id = $1 FOR UPDATE`, orderID); err != nil {
		return nil, mapErr(err)
	}
	var r Refund
	err := sqlx.GetContext(ctx, tx, &r, `SELECT `+refundColumns+` FROM refunds
		WHERE processor = $1 AND processor_id = $2 FOR UPDATE`, processor, processorID)
	return &r, mapErr(err)
}

// SetRefundStatus records a refund's new status.
func SetRefundStatus(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, status RefundStatus, now time.Time) (*Refund, error) {
	var r Refund
	err := sqlx.GetContext(ctx, q, &r, `UPDATE refunds SET status = $2, modified_at = $3 WHERE id = $1
		RETURNING `+refundColumns, id, status, now)
	return &r, mapErr(err)
}

// CountOrderRefunds is how many refunds of an order Till has stored, whatever their status.
func CountOrderRefunds(ctx context.Context, q sqlx.ExtContext, orderID uuid.UUID) (int, error) {
	var n int
	err := sqlx.GetContext(ctx, q, &n, `SELECT count(*) FROM refunds WHERE order_id = $1`, orderID)
	return n, mapErr(err)
}
