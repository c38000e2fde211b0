package storage

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// OrderExport is one order as an export writes it: the order and what the export reads from
// its customer and product.
type OrderExport struct {
	Order
	CustomerEmail *string `db:"customer_email"`
	CustomerName  *string `db:"customer_name"`
	ProductName   *string `db:"product_name"`
}

// SubscriptionExport is one subscription as an export writes it: the subscription and what
// the export reads from its customer, product and discount.
type SubscriptionExport struct {
	Subscription
	CustomerEmail          *string `db:"customer_email"`
	CustomerName           *string `db:"customer_name"`
	CustomerBillingName    *string `db:"customer_billing_name"`
	CustomerBillingCountry *string `db:"customer_billing_country"`
	ProductName            string  `db:"product_name"`
	DiscountCode           *string `db:"discount_code"`
	DiscountName           *string `db:"discount_name"`
}

// CustomerExport is one customer as an export writes it, with its metadata as PostgreSQL
// prints it (keys in jsonb order), which upstream's CSV reproduces.
type CustomerExport struct {
	Customer
	MetadataText string `db:"metadata_text"`
}

// StreamOrders hands each live order of the organizations that the list filter keeps to
// each, in the list's order, one row held at a time: an export of millions of orders costs
// the memory of one.
func StreamOrders(ctx context.Context, q sqlx.QueryerContext, orgs []uuid.UUID, f OrderListFilter, sorts []Sort,
	each func(*OrderExport) error) error {
	return streamList(ctx, q, orderList(orgs, f, sorts),
		"c.email AS customer_email, c.name AS customer_name, p.name AS product_name", each)
}

// StreamSubscriptions hands each started, live subscription of the organizations that the
// list filter keeps to each, in the list's order, one row held at a time.
func StreamSubscriptions(ctx context.Context, q sqlx.QueryerContext, orgs []uuid.UUID, f SubscriptionListFilter,
	sorts []Sort, each func(*SubscriptionExport) error) error {
	return streamList(ctx, q, subscriptionList(orgs, f, sorts), `c.email AS customer_email,
		c.name AS customer_name, c.billing_name AS customer_billing_name,
		c.billing_address->>'country' AS customer_billing_country, p.name AS product_name,
		d.code AS discount_code, d.name AS discount_name`, each)
}

// StreamCustomers hands each live customer of the organizations that the list filter keeps
// to each, in the list's order, one row held at a time.
func StreamCustomers(ctx context.Context, q sqlx.QueryerContext, orgs []uuid.UUID, f CustomerListFilter,
	sorts []Sort, each func(*CustomerExport) error) error {
	return streamList(ctx, q, customerList(orgs, f, sorts), "metadata::text AS metadata_text", each)
}

// StreamEvents hands each event of the organizations that the list keeps to each, in the
// list's order, reading keyset windows of page events: an event list has no total to count,
// so each window costs what the first does, and one window is held at a time.
func StreamEvents(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, lq EventListQuery, page int,
	each func(*Event) error) error {
	lq.Window = Window{Limit: page}
	for {
		p, err := ListEvents(ctx, q, orgs, lq)
		if err != nil {
			return err
		}
		for _, e := range p.Items {
			if err := each(e); err != nil {
				return err
			}
		}
		if !p.More || len(p.Cursors) == 0 {
			return nil
		}
		lq.Window.After = &p.Cursors[len(p.Cursors)-1]
	}
}

// streamList runs a list's query whole, in its order, with extra select expressions, and
// hands each row, scanned into one reused T, to each. The rows come from the server as they
// are read, so memory does not grow with the result. When each fails (the client is gone),
// the query is canceled before its rows are closed: closing unread rows would otherwise read
// the rest of the result.
func streamList[T any](ctx context.Context, q sqlx.QueryerContext, l listSQL, extra string, each func(*T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	query := "SELECT " + l.Columns + ", " + extra + " FROM " + l.From + " WHERE " + strings.Join(l.Where, " AND ") +
		" ORDER BY " + orderSQL(l.order(), false)
	rows, err := q.QueryxContext(ctx, query, l.Args...)
	if err != nil {
		return mapErr(err)
	}
	defer func() {
		cancel()
		_ = rows.Close()
	}()
	var row T
	for rows.Next() {
		var zero T
		row = zero
		if err := rows.StructScan(&row); err != nil {
			return mapErr(err)
		}
		if err := each(&row); err != nil {
			return err
		}
	}
	return mapErr(rows.Err())
}
