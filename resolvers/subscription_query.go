package resolvers

import (
	"context"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

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
	s, err := storage.GetSubscription(ctx, r.db, organizations(ctx), id)
	return s, notFoundOr(err, "")
}

// subscriptionsPage lists the organizations' started subscriptions.
func (r *Resolver) subscriptionsPage(ctx context.Context, a listArgs, f *model.SubscriptionFilter) (*model.SubscriptionPage, error) {
	return r.listSubscriptions(ctx, a, subscriptionSorts, subscriptionFilterOf(f), storage.SubscriptionWith{})
}

// subscriptionFilterOf turns the GraphQL filter into the storage one.
func subscriptionFilterOf(f *model.SubscriptionFilter) storage.SubscriptionListFilter {
	if f == nil {
		return storage.SubscriptionListFilter{}
	}
	return storage.SubscriptionListFilter{OrganizationIDs: f.OrganizationID, ProductIDs: f.ProductID,
		CustomerIDs: f.CustomerID, ExternalCustomerIDs: f.ExternalCustomerID, DiscountIDs: f.DiscountID,
		Active: f.Active, Statuses: f.Status, CancelAtPeriodEnd: f.CancelAtPeriodEnd,
		CustomerCancellationReason: f.CustomerCancellationReason, CanceledAtAfter: f.CanceledAtAfter,
		CanceledAtBefore: f.CanceledAtBefore, StartedAfter: f.StartedAfter, StartedBefore: f.StartedBefore,
		Metadata: metadataOf(f.Metadata)}
}

// portalSubscriptionsPage lists the session customer's started subscriptions.
func (r *Resolver) portalSubscriptionsPage(ctx context.Context, a listArgs, f *model.PortalSubscriptionFilter) (*model.SubscriptionPage, error) {
	customerID := auth.FromContext(ctx).CustomerID
	lf := storage.SubscriptionListFilter{CustomerID: &customerID}
	if f != nil {
		lf.ProductIDs, lf.Active, lf.ProductQuery = f.ProductID, f.Active, f.Query
	}
	sel := selectedItemFields(ctx, "SubscriptionPage", "Subscription")
	return r.listSubscriptions(ctx, a, portalSubscriptionSorts, lf, storage.SubscriptionWith{Product: sel["product"]})
}

// listSubscriptions runs either subscription list with the sorting its whitelist allows,
// carrying the relations with asks for, and notes the subscriptions as read together so the
// relations it did not carry load in one statement each.
func (r *Resolver) listSubscriptions(ctx context.Context, a listArgs, columns map[string]string,
	f storage.SubscriptionListFilter, with storage.SubscriptionWith) (*model.SubscriptionPage, error) {
	w, sorts, err := a.windowAndSorts(columns)
	if err != nil {
		return nil, err
	}
	w = selectionWindow[storage.Subscription](ctx, w)
	p, rels, err := storage.ListSubscriptionsWith(ctx, r.db, organizations(ctx), f, sorts, w, with)
	if err != nil {
		return nil, cursorErr(err, a)
	}
	record(ctx, p.Items)
	products := make([]*storage.Product, len(rels))
	for i, rel := range rels {
		products[i] = rel.Product
	}
	primeLevel(ctx, loaders(ctx).Product, products, func(p *storage.Product) uuid.UUID { return p.ID })
	return subscriptionPageOf(p, w), nil
}

// claimedSeatSubscriptionsPage lists the subscriptions in which the session's customer (or,
// for member sessions, the member) holds a claimed seat.
func (r *Resolver) claimedSeatSubscriptionsPage(ctx context.Context, a listArgs) (*model.SubscriptionPage, error) {
	w, err := a.window()
	if err != nil {
		return nil, err
	}
	pr := auth.FromContext(ctx)
	p, err := storage.ListClaimedSeatSubscriptions(ctx, r.db, organizations(ctx), pr.CustomerID, sessionMember(pr), w)
	if err != nil {
		return nil, cursorErr(err, a)
	}
	record(ctx, p.Items)
	return subscriptionPageOf(p, w), nil
}

// customerSubscriptions is Customer.subscriptions: a window of each customer's
// subscriptions of the level, in one statement.
func (r *Resolver) customerSubscriptions(ctx context.Context, c *storage.Customer, a listArgs, f *model.SubscriptionFilter) (*model.SubscriptionPage, error) {
	return subscriptionWindow(ctx, r, "Customer.subscriptions", c, func(c *storage.Customer) uuid.UUID { return c.ID },
		storage.SubscriptionWindowsByCustomers, a, f)
}

// productSubscriptions is Product.subscriptions: a window of each product's subscriptions
// of the level, in one statement.
func (r *Resolver) productSubscriptions(ctx context.Context, p *storage.Product, a listArgs, f *model.SubscriptionFilter) (*model.SubscriptionPage, error) {
	return subscriptionWindow(ctx, r, "Product.subscriptions", p, func(p *storage.Product) uuid.UUID { return p.ID },
		storage.SubscriptionWindowsByProducts, a, f)
}

// subscriptionWindows reads one window of subscriptions per parent.
type subscriptionWindows func(context.Context, sqlx.ExtContext, []uuid.UUID, []uuid.UUID,
	storage.SubscriptionListFilter, []storage.Sort, storage.Window) ([]storage.Paged[*storage.Subscription], error)

// subscriptionWindow is a paginated subscription relation named name: obj's window, read
// with the windows of every parent of its level by fetch.
func subscriptionWindow[P any](ctx context.Context, r *Resolver, name string, obj *P, key func(*P) uuid.UUID,
	fetch subscriptionWindows, a listArgs, f *model.SubscriptionFilter) (*model.SubscriptionPage, error) {
	w, sorts, err := a.windowAndSorts(subscriptionSorts)
	if err != nil {
		return nil, err
	}
	lf, orgs := subscriptionFilterOf(f), organizations(ctx)
	l, err := windowsOf(ctx, name, []any{a.key(), f}, &w, func(ctx context.Context, ids []uuid.UUID) ([]storage.Paged[*storage.Subscription], error) {
		return fetch(ctx, r.db, orgs, ids, lf, sorts, w)
	})
	if err != nil {
		return nil, err
	}
	p, err := related(ctx, l, obj, key)
	if err != nil {
		return nil, cursorErr(err, a)
	}
	return subscriptionPageOf(p, w), nil
}

// subscriptionPageOf is the GraphQL page of a window of subscriptions.
func subscriptionPageOf(p storage.Paged[*storage.Subscription], w storage.Window) *model.SubscriptionPage {
	return &model.SubscriptionPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}
}

// subscriptionPendingUpdate is the open change of a subscription, or nil.
func (r *Resolver) subscriptionPendingUpdate(ctx context.Context, s *storage.Subscription) (*storage.PendingSubscriptionUpdate, error) {
	rows, err := related(ctx, loaders(ctx).PendingUpdates, s, func(s *storage.Subscription) uuid.UUID { return s.ID })
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return rows[0], nil
}
