package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// OrderListFilter narrows an order list: the filters of GET /v1/orders/ and of the portal's
// GET /v1/customer-portal/orders/. Values of one field are OR-ed, fields AND-ed; empty
// fields do not filter.
type OrderListFilter struct {
	// CustomerID scopes the list to one customer (the portal session's).
	CustomerID          *uuid.UUID
	OrganizationIDs     []uuid.UUID
	ProductIDs          []uuid.UUID
	ProductBillingTypes []string // one_time, recurring: matched on the product, so orders without one never match
	DiscountIDs         []uuid.UUID
	CustomerIDs         []uuid.UUID
	ExternalCustomerIDs []string // matched on live customers only
	CheckoutIDs         []uuid.UUID
	SubscriptionIDs     []uuid.UUID
	Statuses            []OrderStatus
	CreatedAfter        *time.Time // strict
	CreatedBefore       *time.Time // strict
	Query               *string    // product name, ILIKE with wildcards escaped
	Metadata            map[string][]string
}

// OrderSortColumns maps the sort properties of both order lists to SQL over ListOrders'
// aliases (o orders, c customers, p products, d discounts).
var OrderSortColumns = map[string]string{
	"created_at":     "o.created_at",
	"status":         "order_status_rank(o.status)",
	"invoice_number": "o.invoice_number",
	"amount":         "o.net_amount",
	"net_amount":     "o.net_amount",
	"customer":       "c.email",
	"product":        "p.name",
	"discount":       "d.name",
	"subscription":   "o.subscription_id",
}

// ListOrders returns one window of live orders of the given organizations, with the total
// count.
func ListOrders(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f OrderListFilter, sorts []Sort, w Window) (Paged[*Order], error) {
	return listWindow[*Order](ctx, q, orderList(orgs, f, sorts), w)
}

// OrderWindowsByCustomers returns one window of each customer's orders, in key order, with
// the same filters and sorting as ListOrders, in one statement.
func OrderWindowsByCustomers(ctx context.Context, q sqlx.ExtContext, orgs, customers []uuid.UUID, f OrderListFilter, sorts []Sort, w Window) ([]Paged[*Order], error) {
	return listWindows(ctx, q, orderList(orgs, f, sorts), "o.customer_id", customers, w,
		func(o *Order) uuid.UUID { return o.CustomerID })
}

// OrderWindowsBySubscriptions returns one window of each subscription's orders, in key
// order, with the same filters and sorting as ListOrders, in one statement.
func OrderWindowsBySubscriptions(ctx context.Context, q sqlx.ExtContext, orgs, subscriptions []uuid.UUID, f OrderListFilter, sorts []Sort, w Window) ([]Paged[*Order], error) {
	return listWindows(ctx, q, orderList(orgs, f, sorts), "o.subscription_id", subscriptions, w,
		func(o *Order) uuid.UUID { return *o.SubscriptionID })
}

// OrderWindowsByProducts returns one window of each product's orders, in key order, with the
// same filters and sorting as ListOrders, in one statement.
func OrderWindowsByProducts(ctx context.Context, q sqlx.ExtContext, orgs, products []uuid.UUID, f OrderListFilter, sorts []Sort, w Window) ([]Paged[*Order], error) {
	return listWindows(ctx, q, orderList(orgs, f, sorts), "o.product_id", products, w,
		func(o *Order) uuid.UUID { return *o.ProductID })
}

// OrdersByCheckouts loads the live order each checkout made, of the given organizations, for
// a dataloader: a slice per key in key order, empty where the checkout made none. A checkout
// makes one order; should there be more, the first is its purchase and the only one read.
func OrdersByCheckouts(ctx context.Context, q sqlx.ExtContext, orgs, checkouts []uuid.UUID) ([][]*Order, error) {
	var rows []*Order
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT DISTINCT ON (o.checkout_id) `+orderColumnsO+` FROM orders o
		WHERE o.checkout_id = ANY($1) AND o.organization_id = ANY($2) AND o.deleted_at IS NULL
		ORDER BY o.checkout_id, o.created_at, o.id`, pq.Array(checkouts), pq.Array(orgs)); err != nil {
		return nil, mapErr(err)
	}
	return groupBy(checkouts, rows, func(o *Order) uuid.UUID { return *o.CheckoutID }), nil
}

// orderList is the order list query. The joins serve the filters and sorts on customers,
// products and discounts; PostgreSQL drops those a query does not use.
func orderList(orgs []uuid.UUID, f OrderListFilter, sorts []Sort) listSQL {
	w := orgFilters("o.organization_id", orgs, "o.deleted_at IS NULL")
	ifSet(w, "o.customer_id = $%d", f.CustomerID)
	anyOf(w, "o.organization_id", f.OrganizationIDs)
	anyOf(w, "o.product_id", f.ProductIDs)
	anyOf(w, "o.discount_id", f.DiscountIDs)
	anyOf(w, "o.customer_id", f.CustomerIDs)
	anyOf(w, "o.checkout_id", f.CheckoutIDs)
	anyOf(w, "o.subscription_id", f.SubscriptionIDs)
	if len(f.ProductBillingTypes) > 0 {
		w.add(`p.id IS NOT NULL AND CASE WHEN p.recurring_interval IS NULL THEN 'one_time' ELSE 'recurring' END = ANY($%d)`,
			pq.Array(f.ProductBillingTypes))
	}
	if len(f.ExternalCustomerIDs) > 0 {
		w.add("c.external_id = ANY($%d) AND c.deleted_at IS NULL", pq.Array(f.ExternalCustomerIDs))
	}
	anyOf(w, "o.status", f.Statuses)
	ifSet(w, "o.created_at > $%d", f.CreatedAfter)
	ifSet(w, "o.created_at < $%d", f.CreatedBefore)
	w.contains("p.name ILIKE $%d", f.Query)
	w.metadata("o.metadata", f.Metadata)
	return listSQL{Columns: orderColumnsO, From: `orders o
		LEFT JOIN customers c ON c.id = o.customer_id
		LEFT JOIN products p ON p.id = o.product_id
		LEFT JOIN discounts d ON d.id = o.discount_id`, ID: "o.id", Where: w.where, Args: w.args,
		Sorts: sorts, Default: []Sort{{Column: "o.created_at", Desc: true}}}
}
