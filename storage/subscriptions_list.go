package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// SubscriptionListFilter narrows a subscription list (GET /v1/subscriptions/ and the portal's
// list). Multi-value fields are IN filters; nil or empty fields do not filter.
type SubscriptionListFilter struct {
	OrganizationIDs     []uuid.UUID
	ProductIDs          []uuid.UUID
	CustomerIDs         []uuid.UUID
	ExternalCustomerIDs []string
	DiscountIDs         []uuid.UUID
	// Active true is status trialing or active, false is canceled or unpaid; past_due,
	// paused and incomplete* match neither, as upstream.
	Active                     *bool
	Statuses                   []string
	CancelAtPeriodEnd          *bool
	CustomerCancellationReason []string
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
const subscriptionListFrom = ` FROM subscriptions s
	JOIN customers c ON c.id = s.customer_id
	JOIN products p ON p.id = s.product_id
	JOIN organizations o ON o.id = s.organization_id
	LEFT JOIN discounts d ON d.id = s.discount_id`

// ListSubscriptions returns one page of started, live subscriptions of the given
// organizations (and of one customer when customerID is set), with the total count. Sort
// columns come from the use case's whitelist.
func ListSubscriptions(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, customerID *uuid.UUID,
	f SubscriptionListFilter, sorts []Sort, p Page) ([]*Subscription, int, error) {
	where := []string{"s.organization_id = ANY($1)", "s.deleted_at IS NULL", "s.started_at IS NOT NULL"}
	args := []any{pq.Array(orgs)}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if customerID != nil {
		add("s.customer_id = $%d", *customerID)
	}
	if len(f.OrganizationIDs) > 0 {
		add("s.organization_id = ANY($%d)", pq.Array(f.OrganizationIDs))
	}
	if len(f.ProductIDs) > 0 {
		add("s.product_id = ANY($%d)", pq.Array(f.ProductIDs))
	}
	if len(f.CustomerIDs) > 0 {
		add("s.customer_id = ANY($%d)", pq.Array(f.CustomerIDs))
	}
	if len(f.ExternalCustomerIDs) > 0 {
		add("c.external_id = ANY($%d)", pq.Array(f.ExternalCustomerIDs))
	}
	if len(f.DiscountIDs) > 0 {
		add("s.discount_id = ANY($%d)", pq.Array(f.DiscountIDs))
	}
	if f.Active != nil {
		if *f.Active {
			where = append(where, "s.status IN ('trialing', 'active')")
		} else {
			where = append(where, "s.status IN ('canceled', 'unpaid')")
		}
	}
	if len(f.Statuses) > 0 {
		add("s.status = ANY($%d)", pq.Array(f.Statuses))
	}
	if f.CancelAtPeriodEnd != nil {
		add("s.cancel_at_period_end = $%d", *f.CancelAtPeriodEnd)
	}
	if len(f.CustomerCancellationReason) > 0 {
		add("s.customer_cancellation_reason = ANY($%d)", pq.Array(f.CustomerCancellationReason))
	}
	if f.CanceledAtAfter != nil {
		add("s.canceled_at >= $%d", *f.CanceledAtAfter)
	}
	if f.CanceledAtBefore != nil {
		add("s.canceled_at <= $%d", *f.CanceledAtBefore)
	}
	if f.StartedAfter != nil {
		add("s.started_at > $%d", *f.StartedAfter)
	}
	if f.StartedBefore != nil {
		add("s.started_at < $%d", *f.StartedBefore)
	}
	if f.ProductQuery != nil && *f.ProductQuery != "" {
		add("p.name ILIKE $%d", "%"+escapeLike(*f.ProductQuery)+"%")
	}
	where, args = metadataWhere("s.metadata", f.Metadata, where, args)
	return listPage[*Subscription](ctx, q, "SELECT "+subscriptionColumnsS+subscriptionListFrom, where, args,
		orderBy(sorts, "s.started_at DESC"), p)
}

// ListClaimedSeatSubscriptions returns one page of the live subscriptions in which the
// customer (memberID nil) or the member holds a claimed seat. Upstream applies no ordering;
// the id order here only keeps pages stable.
func ListClaimedSeatSubscriptions(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, customerID uuid.UUID,
	memberID *uuid.UUID, p Page) ([]*Subscription, int, error) {
	holder := "cs.customer_id = $2"
	args := []any{pq.Array(orgs), customerID}
	if memberID != nil {
		holder = "cs.member_id = $2"
		args[1] = *memberID
	}
	where := []string{"s.organization_id = ANY($1)", "s.deleted_at IS NULL",
		"EXISTS (SELECT 1 FROM customer_seats cs WHERE cs.subscription_id = s.id AND cs.status = 'claimed' AND " + holder + ")"}
	return listPage[*Subscription](ctx, q, "SELECT "+subscriptionColumnsS+" FROM subscriptions s", where, args,
		" ORDER BY s.id", p)
}
