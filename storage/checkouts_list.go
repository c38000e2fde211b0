package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// CheckoutListFilter narrows a checkout list (GET /v1/checkouts/).
type CheckoutListFilter struct {
	OrganizationIDs     []uuid.UUID
	ProductIDs          []uuid.UUID
	CustomerIDs         []uuid.UUID
	ExternalCustomerIDs []string
	Statuses            []CheckoutStatus
	// Query matches customer_email with ILIKE '%query%' without escaping, as upstream does.
	Query *string
}

// CheckoutSortColumn maps the sort properties of GET /v1/checkouts/ to SQL.
var CheckoutSortColumn = map[string]string{"created_at": "c.created_at", "expires_at": "c.expires_at",
	"status": effectiveStatus(1)}

// ListCheckouts returns one window of checkouts as of now, with the total count.
func ListCheckouts(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f CheckoutListFilter, sorts []Sort,
	w Window, now time.Time) (Paged[*Checkout], error) {
	return listWindow[*Checkout](ctx, q, checkoutList(orgs, f, sorts, now), w)
}

// CheckoutWindowsByCustomers returns one window of each customer's checkouts as of now, in
// key order, with the filters and sorting of ListCheckouts, in one statement.
func CheckoutWindowsByCustomers(ctx context.Context, q sqlx.ExtContext, orgs, customers []uuid.UUID,
	f CheckoutListFilter, sorts []Sort, w Window, now time.Time) ([]Paged[*Checkout], error) {
	return listWindows(ctx, q, checkoutList(orgs, f, sorts, now), "c.customer_id", customers, w,
		func(c *Checkout) uuid.UUID { return *c.CustomerID })
}

// CheckoutsByIDs loads checkouts of the given organizations as of now for a dataloader, one
// per key in key order, nil where missing.
func CheckoutsByIDs(ctx context.Context, q sqlx.ExtContext, orgs, ids []uuid.UUID, now time.Time) ([]*Checkout, error) {
	var rows []*Checkout
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+checkoutColumns(1)+` FROM checkouts c
		WHERE c.id = ANY($2) AND c.organization_id = ANY($3)`, now, pq.Array(ids), pq.Array(orgs)); err != nil {
		return nil, mapErr(err)
	}
	return inKeyOrder(ids, rows, func(c *Checkout) uuid.UUID { return c.ID }), nil
}

// checkoutList is the checkout list query; $1 is now, which the effective status reads.
func checkoutList(orgs []uuid.UUID, f CheckoutListFilter, sorts []Sort, now time.Time) listSQL {
	// $1 is named in a condition too, so that the count, which reads no column, can type it.
	w := newFilters([]string{"$1::timestamptz IS NOT NULL"}, now)
	w.inOrgs("c.organization_id", orgs)
	// Unlike anyOf, an id or status filter given as an empty list matches no checkout: only
	// an absent one does not filter.
	if f.OrganizationIDs != nil {
		w.add("c.organization_id = ANY($%d)", pq.Array(f.OrganizationIDs))
	}
	if f.ProductIDs != nil {
		w.add("c.product_id = ANY($%d)", pq.Array(f.ProductIDs))
	}
	if f.CustomerIDs != nil {
		w.add("c.customer_id = ANY($%d)", pq.Array(f.CustomerIDs))
	}
	if f.Statuses != nil {
		w.add(effectiveStatus(1)+" = ANY($%d)", pq.Array(f.Statuses))
	}
	if f.ExternalCustomerIDs != nil {
		w.add("EXISTS (SELECT 1 FROM customers cu WHERE cu.id = c.customer_id AND cu.external_id = ANY($%d))",
			pq.Array(f.ExternalCustomerIDs))
	}
	if f.Query != nil {
		w.add("c.customer_email ILIKE $%d", "%"+*f.Query+"%")
	}
	return listSQL{Columns: checkoutColumns(1), From: "checkouts c", ID: "c.id", Where: w.where, Args: w.args,
		Sorts: sorts, Default: []Sort{{Column: "c.created_at", Desc: true}}}
}
