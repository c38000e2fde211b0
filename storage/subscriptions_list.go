package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// SubscriptionListFilter narrows a subscription list (GET /v1/subscriptions/ and the portal's
// list). Multi-value fields are IN filters; nil or empty fields do not filter.
type SubscriptionListFilter struct {
	// CustomerID scopes the list to one customer (the portal session's).
	CustomerID          *uuid.UUID
	OrganizationIDs     []uuid.UUID
	ProductIDs          []uuid.UUID
	CustomerIDs         []uuid.UUID
	ExternalCustomerIDs []string
	DiscountIDs         []uuid.UUID
	// Active true is status trialing or active, false is canceled or unpaid; past_due,
	// paused and incomplete* match neither, as upstream.
	Active                     *bool
	Statuses                   []SubscriptionStatus
	CancelAtPeriodEnd          *bool
	CustomerCancellationReason []CustomerCancellationReason
	CanceledAtAfter            *time.Time // inclusive
	CanceledAtBefore           *time.Time // inclusive
	StartedAfter               *time.Time // strict
	StartedBefore              *time.Time // strict
	Metadata                   map[string][]string
	// ProductQuery matches the product name (escaped ILIKE), the portal's query filter.
	ProductQuery *string
}

// subscriptionListFrom joins what the sort keys and filters read: the customer's email and
// external id, the product's name, the discount's name and the organization's slug.
const subscriptionListFrom = `subscriptions s
	JOIN customers c ON c.id = s.customer_id
	JOIN products p ON p.id = s.product_id
	JOIN organizations o ON o.id = s.organization_id
	LEFT JOIN discounts d ON d.id = s.discount_id`

// ListSubscriptions returns one window of started, live subscriptions of the given
// organizations, with the total count. Sort columns come from the use case's whitelist.
func ListSubscriptions(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f SubscriptionListFilter,
	sorts []Sort, w Window) (Paged[*Subscription], error) {
	return listWindow[*Subscription](ctx, q, subscriptionList(orgs, f, sorts), w)
}

// SubscriptionWindowsByCustomers returns one window of each customer's subscriptions, in key
// order, with the filters and sorting of ListSubscriptions, in one statement.
func SubscriptionWindowsByCustomers(ctx context.Context, q sqlx.ExtContext, orgs, customers []uuid.UUID,
	f SubscriptionListFilter, sorts []Sort, w Window) ([]Paged[*Subscription], error) {
	return listWindows(ctx, q, subscriptionList(orgs, f, sorts), "s.customer_id", customers, w,
		func(s *Subscription) uuid.UUID { return s.CustomerID })
}

// SubscriptionWindowsByProducts returns one window of each product's subscriptions, in key
// order, with the filters and sorting of ListSubscriptions, in one statement.
func SubscriptionWindowsByProducts(ctx context.Context, q sqlx.ExtContext, orgs, products []uuid.UUID,
	f SubscriptionListFilter, sorts []Sort, w Window) ([]Paged[*Subscription], error) {
	return listWindows(ctx, q, subscriptionList(orgs, f, sorts), "s.product_id", products, w,
		func(s *Subscription) uuid.UUID { return s.ProductID })
}

// subscriptionList is the subscription list query: started, live subscriptions only.
func subscriptionList(orgs []uuid.UUID, f SubscriptionListFilter, sorts []Sort) listSQL {
	w := orgFilters("s.organization_id", orgs, "s.deleted_at IS NULL", "s.started_at IS NOT NULL")
	ifSet(w, "s.customer_id = $%d", f.CustomerID)
	anyOf(w, "s.organization_id", f.OrganizationIDs)
	anyOf(w, "s.product_id", f.ProductIDs)
	anyOf(w, "s.customer_id", f.CustomerIDs)
	// Unlike the order list's, this matches deleted customers' external ids too: the join keeps them.
	anyOf(w, "c.external_id", f.ExternalCustomerIDs)
	anyOf(w, "s.discount_id", f.DiscountIDs)
	if f.Active != nil {
		if *f.Active {
			w.where = append(w.where, "s.status IN ('trialing', 'active')")
		} else {
			w.where = append(w.where, "s.status IN ('canceled', 'unpaid')")
		}
	}
	anyOf(w, "s.status", f.Statuses)
	ifSet(w, "s.cancel_at_period_end = $%d", f.CancelAtPeriodEnd)
	anyOf(w, "s.customer_cancellation_reason", f.CustomerCancellationReason)
	ifSet(w, "s.canceled_at >= $%d", f.CanceledAtAfter)
	ifSet(w, "s.canceled_at <= $%d", f.CanceledAtBefore)
	ifSet(w, "s.started_at > $%d", f.StartedAfter)
	ifSet(w, "s.started_at < $%d", f.StartedBefore)
	w.contains("p.name ILIKE $%d", f.ProductQuery)
	w.metadata("s.metadata", f.Metadata)
	return listSQL{Columns: subscriptionColumnsS, From: subscriptionListFrom, ID: "s.id", Where: w.where,
		Args: w.args, Sorts: sorts, Default: []Sort{{Column: "s.started_at", Desc: true}}}
}

// ListClaimedSeatSubscriptions returns one window of the live subscriptions in which the
// customer (memberID nil) or the member holds a claimed seat. Upstream applies no ordering;
// the id order here only keeps windows stable.
func ListClaimedSeatSubscriptions(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, customerID uuid.UUID,
	memberID *uuid.UUID, w Window) (Paged[*Subscription], error) {
	holder := "cs.customer_id = $2"
	args := []any{pq.Array(orgs), customerID}
	if memberID != nil {
		holder = "cs.member_id = $2"
		args[1] = *memberID
	}
	where := []string{"s.organization_id = ANY($1)", "s.deleted_at IS NULL",
		"EXISTS (SELECT 1 FROM customer_seats cs WHERE cs.subscription_id = s.id AND cs.status = 'claimed' AND " + holder + ")"}
	return listWindow[*Subscription](ctx, q, listSQL{Columns: subscriptionColumnsS, From: "subscriptions s",
		ID: "s.id", Where: where, Args: args}, w)
}
