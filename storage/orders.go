package storage

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// orderColumns are the columns of the Order record; soft-deleted orders (deleted_at) are
// filtered in SQL and never read.
const orderColumns = `id, created_at, modified_at, organization_id, customer_id, product_id,
	discount_id, subscription_id, checkout_id, status, billing_reason, currency, subtotal_amount,
	discount_amount, net_amount, tax_amount, total_amount, applied_balance_amount, due_amount,
	refunded_amount, refunded_tax_amount, platform_fee_amount, platform_fee_currency, billing_name,
	billing_address, description, seats, invoice_number, invoice_path, invoice_checksum, receipt_number,
	receipt_path, next_payment_attempt_at, custom_field_data, metadata`

// orderColumnsO is orderColumns for queries that join other tables as o.
var orderColumnsO = qualify("o", orderColumns)

// OrderWrite holds the fields of a new order; the amounts are already computed by the use
// case (subtotal = sum of items, net = subtotal - discount, total = net + tax).
type OrderWrite struct {
	CustomerID      uuid.UUID
	ProductID       *uuid.UUID
	DiscountID      *uuid.UUID
	SubscriptionID  *uuid.UUID
	CheckoutID      *uuid.UUID
	Status          OrderStatus
	BillingReason   OrderBillingReason
	Currency        string
	SubtotalAmount  int64
	DiscountAmount  int64
	NetAmount       int64
	TaxAmount       int64
	TotalAmount     int64
	BillingName     *string
	BillingAddress  *Address
	Description     string
	Seats           *int
	CustomFieldData JSONMap
	Metadata        JSONMap
}

// insertOrderSQL inserts an order of a live organization, for a customer and product of that
// organization. Its numbers are drawn when the transaction commits (migration
// 00028_number_orders_at_commit): <SLUG>-<NNNN> for invoices and RCPT-<SLUG>-<NNNN> for
// receipts, at least four digits, as upstream's customer_invoice_prefix (the upper-cased
// slug) and receipt numbers read.
const insertOrderSQL = `INSERT INTO orders (organization_id, customer_id, product_id, discount_id, subscription_id,
		checkout_id, status, billing_reason, currency, subtotal_amount, discount_amount, net_amount,
		tax_amount, total_amount, billing_name, billing_address, description, seats, custom_field_data,
		metadata, created_at)
	SELECT $1, $2, $3, $4, $6, $7, $5, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21
	WHERE EXISTS (SELECT 1 FROM organizations WHERE id = $1 AND deleted_at IS NULL)
		AND EXISTS (SELECT 1 FROM customers WHERE id = $2 AND organization_id = $1)
		AND ($3::uuid IS NULL OR EXISTS (SELECT 1 FROM products WHERE id = $3 AND organization_id = $1))
	RETURNING ` + orderColumns

// InsertOrder inserts an order of the organization. Its invoice number (and its receipt
// number when it is created paid) is drawn at commit, in the organization's gapless
// sequence, so the order returned has none yet: the organization's counter row is locked
// for the commit only, not for the rest of the purchase. created_at is the use case's clock
// (a test clock may run ahead of the database's). A customer or product of another
// organization is ErrNotFound.
func InsertOrder(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, now time.Time, w OrderWrite) (*Order, error) {
	var o Order
	err := sqlx.GetContext(ctx, q, &o, insertOrderSQL, orgID, w.CustomerID, w.ProductID, w.DiscountID,
		w.Status, w.SubscriptionID, w.CheckoutID, w.BillingReason, w.Currency, w.SubtotalAmount,
		w.DiscountAmount, w.NetAmount, w.TaxAmount, w.TotalAmount, w.BillingName, w.BillingAddress,
		w.Description, w.Seats, w.CustomFieldData, w.Metadata, now)
	return &o, mapErr(err)
}

// OrderItemWrite is one line of a new order.
type OrderItemWrite struct {
	Label          string
	Amount         int64
	TaxAmount      int64
	Proration      bool
	ProductPriceID *uuid.UUID
}

const orderItemColumns = `id, created_at, modified_at, order_id, label, amount, tax_amount, proration,
	product_price_id`

// InsertOrderItems inserts an order's lines in one statement, in the given order: created_at
// rises by a microsecond per line so reading by created_at keeps it.
func InsertOrderItems(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, order *Order, items []OrderItemWrite) ([]*OrderItem, error) {
	labels := make([]string, len(items))
	amounts := make([]int64, len(items))
	taxes := make([]int64, len(items))
	prorations := make([]bool, len(items))
	prices := make([]string, len(items))
	for i, it := range items {
		labels[i], amounts[i], taxes[i], prorations[i] = it.Label, it.Amount, it.TaxAmount, it.Proration
		if it.ProductPriceID != nil {
			prices[i] = it.ProductPriceID.String()
		}
	}
	out := []*OrderItem{}
	err := sqlx.SelectContext(ctx, q, &out, `INSERT INTO order_items (organization_id, order_id, created_at,
		label, amount, tax_amount, proration, product_price_id)
		SELECT $1, $2, $3::timestamptz + (i.n - 1) * interval '1 microsecond', i.label, i.amount, i.tax,
			i.proration, NULLIF(i.price, '')::uuid
		FROM unnest($4::text[], $5::bigint[], $6::bigint[], $7::boolean[], $8::text[])
			WITH ORDINALITY AS i (label, amount, tax, proration, price, n)
		ORDER BY i.n
		RETURNING `+orderItemColumns,
		orgID, order.ID, order.CreatedAt, pq.Array(labels), pq.Array(amounts), pq.Array(taxes),
		pq.Array(prorations), pq.Array(prices))
	return out, mapErr(err)
}

// GetOrder reads a live order of the given organizations; customerID, when set, also
// requires the order to be that customer's (the portal's view).
func GetOrder(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, customerID *uuid.UUID, id uuid.UUID) (*Order, error) {
	o, _, err := GetOrderWith(ctx, q, orgs, customerID, id, OrderWith{})
	return o, err
}

// LockOrder is GetOrder that also locks the row until the transaction ends, so concurrent
// updates of one order take turns and check their rules against its latest state.
func LockOrder(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, customerID *uuid.UUID, id uuid.UUID) (*Order, error) {
	var o Order
	err := sqlx.GetContext(ctx, q, &o, `SELECT `+orderColumns+` FROM orders
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL
		AND ($3::uuid IS NULL OR customer_id = $3) FOR UPDATE`, id, pq.Array(orgs), customerID)
	return &o, mapErr(err)
}

// GetOrderByID reads a live order by id alone, for use cases that hold the id from their own
// transaction (a checkout it just created the order of), never from a request.
func GetOrderByID(ctx context.Context, q sqlx.ExtContext, id uuid.UUID) (*Order, error) {
	var o Order
	err := sqlx.GetContext(ctx, q, &o, `SELECT `+orderColumns+` FROM orders
		WHERE id = $1 AND deleted_at IS NULL`, id)
	return &o, mapErr(err)
}

// OrderUpdate is a change to an order's billing details: each set field writes its column,
// the others keep what they hold. Amounts and status change only through their own calls.
type OrderUpdate struct {
	BillingName    Omittable[*string]
	BillingAddress Omittable[*Address]
}

func (u OrderUpdate) assignments() []assignment {
	return []assignment{u.BillingName.to("billing_name"), u.BillingAddress.to("billing_address")}
}

// IsZero reports whether u changes nothing, so a caller can skip the write.
func (u OrderUpdate) IsZero() bool { return isZero(u) }

// UpdateOrder writes the set fields of u to an order the caller has locked; modified_at is
// the use case's clock.
func UpdateOrder(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, now time.Time, u OrderUpdate) (*Order, error) {
	sets, args := setClause("modified_at = $2", u, []any{id, now})
	var o Order
	err := sqlx.GetContext(ctx, q, &o, `UPDATE orders SET `+sets+` WHERE id = $1 RETURNING `+orderColumns, args...)
	return &o, mapErr(err)
}

// MarkOrderPaid turns a pending order paid; its receipt number is drawn when the
// transaction commits, as InsertOrder's numbers are. The row lock makes a concurrent second
// call find it paid. It reports false (and no order) when the order was not pending. A paid
// order is no longer retried, by dunning or by hand, so both are cleared.
func MarkOrderPaid(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, now time.Time) (*Order, bool, error) {
	var o Order
	err := sqlx.GetContext(ctx, q, &o, `UPDATE orders SET status = 'paid', modified_at = $2, next_payment_attempt_at = NULL,
		payment_lock_acquired_at = NULL
		WHERE id = $1 AND status = 'pending' AND deleted_at IS NULL
		RETURNING `+orderColumns, id, now)
	if err = mapErr(err); errors.Is(err, ErrNotFound) {
		return nil, false, nil
	}
	return &o, err == nil, err
}

// SetOrderNextPaymentAttempt records when a pending order's payment is retried next (nil:
// never). Orders that are not pending are left alone: ErrNotFound.
func SetOrderNextPaymentAttempt(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, now time.Time, next *time.Time) (*Order, error) {
	var o Order
	err := sqlx.GetContext(ctx, q, &o, `UPDATE orders SET next_payment_attempt_at = $2, modified_at = $3
		WHERE id = $1 AND status = 'pending' AND deleted_at IS NULL RETURNING `+orderColumns, id, next, now)
	return &o, mapErr(err)
}

// OrderItemsByOrders loads the lines of each order for a dataloader, in order, one slice per key.
func OrderItemsByOrders(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([][]*OrderItem, error) {
	var rows []*OrderItem
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+orderItemColumns+` FROM order_items
		WHERE order_id = ANY($1) ORDER BY `+orderItemsOrder, pq.Array(ids)); err != nil {
		return nil, mapErr(err)
	}
	return groupBy(ids, rows, func(r *OrderItem) uuid.UUID { return r.OrderID }), nil
}
