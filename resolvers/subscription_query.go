package resolvers

import (
	"context"

	"github.com/google/uuid"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// subscriptionSorts whitelists GET /v1/subscriptions/'s sorting, over the list query's
// aliases (s subscriptions, c customers, p products, d discounts). status and amount use the
// SQL functions the indexes are built on.
var subscriptionSorts = map[string]string{
	"customer":           "c.email",
	"status":             "subscription_status_rank(s.status, s.cancel_at_period_end)",
	"started_at":         "s.started_at",
	"current_period_end": "s.current_period_end",
	"ended_at":           "s.ended_at",
	"ends_at":            "s.ends_at",
	"amount":             "subscription_monthly_amount(s.amount, s.recurring_interval)",
	"product":            "p.name",
	"discount":           "d.name",
}

// portalSubscriptionSorts whitelists the portal list's sorting: the raw amount, the status
// as text and the organization's slug, as upstream's portal sorts them.
var portalSubscriptionSorts = map[string]string{
	"started_at":   "s.started_at",
	"amount":       "s.amount",
	"status":       "s.status",
	"organization": "o.slug",
	"product":      "p.name",
}

// subscriptionByID reads a subscription of the caller's organizations.
func (r *Resolver) subscriptionByID(ctx context.Context, id uuid.UUID) (*storage.Subscription, error) {
	s, err := storage.GetSubscription(ctx, r.DB, organizations(ctx), id)
	return s, notFoundOr(err, "")
}

// subscriptionsPage lists the organizations' started subscriptions.
func (r *Resolver) subscriptionsPage(ctx context.Context, page, limit *int, sorting []string, f *model.SubscriptionFilter) (*model.SubscriptionPage, error) {
	var lf storage.SubscriptionListFilter
	if f != nil {
		lf = storage.SubscriptionListFilter{OrganizationIDs: f.OrganizationID, ProductIDs: f.ProductID,
			CustomerIDs: f.CustomerID, ExternalCustomerIDs: f.ExternalCustomerID, DiscountIDs: f.DiscountID,
			Active: f.Active, Statuses: f.Status, CancelAtPeriodEnd: f.CancelAtPeriodEnd,
			CustomerCancellationReason: f.CustomerCancellationReason, CanceledAtAfter: f.CanceledAtAfter,
			CanceledAtBefore: f.CanceledAtBefore, StartedAfter: f.StartedAfter, StartedBefore: f.StartedBefore,
			Metadata: metadataOf(f.Metadata)}
	}
	return r.listSubscriptions(ctx, page, limit, sorting, subscriptionSorts, nil, lf)
}

// portalSubscriptionsPage lists the session customer's started subscriptions.
func (r *Resolver) portalSubscriptionsPage(ctx context.Context, page, limit *int, sorting []string, f *model.PortalSubscriptionFilter) (*model.SubscriptionPage, error) {
	var lf storage.SubscriptionListFilter
	if f != nil {
		lf = storage.SubscriptionListFilter{ProductIDs: f.ProductID, Active: f.Active, ProductQuery: f.Query}
	}
	customerID := auth.FromContext(ctx).CustomerID
	return r.listSubscriptions(ctx, page, limit, sorting, portalSubscriptionSorts, &customerID, lf)
}

// listSubscriptions runs either subscription list (customerID scopes it to the portal's
// customer) with the sorting its whitelist allows, and loads the page's relations.
func (r *Resolver) listSubscriptions(ctx context.Context, page, limit *int, sorting []string, columns map[string]string,
	customerID *uuid.UUID, f storage.SubscriptionListFilter) (*model.SubscriptionPage, error) {
	p, sorts, err := pageAndSorts(page, limit, sorting, columns)
	if err != nil {
		return nil, err
	}
	items, total, err := storage.ListSubscriptions(ctx, r.DB, organizations(ctx), customerID, f, sorts, p)
	if err != nil {
		return nil, err
	}
	return r.subscriptionPage(ctx, items, total, p)
}

// claimedSeatSubscriptionsPage lists the subscriptions in which the session's customer (or,
// for member sessions, the member) holds a claimed seat.
func (r *Resolver) claimedSeatSubscriptionsPage(ctx context.Context, page, limit *int) (*model.SubscriptionPage, error) {
	p, err := pageOf(page, limit)
	if err != nil {
		return nil, err
	}
	pr := auth.FromContext(ctx)
	items, total, err := storage.ListClaimedSeatSubscriptions(ctx, r.DB, organizations(ctx), pr.CustomerID, sessionMember(pr), p)
	if err != nil {
		return nil, err
	}
	return r.subscriptionPage(ctx, items, total, p)
}

// subscriptionPage wraps a page of subscriptions, noting them as read together so their
// relations load in one statement each.
func (r *Resolver) subscriptionPage(ctx context.Context, items []*storage.Subscription, total int, p storage.Page) (*model.SubscriptionPage, error) {
	record(ctx, items)
	return &model.SubscriptionPage{Items: items, Pagination: pagination(total, p)}, nil
}

// subscriptionPendingUpdate is the open change of a subscription, or nil.
func (r *Resolver) subscriptionPendingUpdate(ctx context.Context, s *storage.Subscription) (*storage.PendingSubscriptionUpdate, error) {
	rows, err := related(ctx, loaders(ctx).PendingUpdates, s, func(s *storage.Subscription) uuid.UUID { return s.ID })
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return rows[0], nil
}
