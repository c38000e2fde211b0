package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
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

// subscriptionPage loads the page's selected relations in one statement each (prime), down
// to the product's prices, benefits and organization, so the page costs the same number of
// statements at any size.
func (r *Resolver) subscriptionPage(ctx context.Context, items []*storage.Subscription, total int, p storage.Page) (*model.SubscriptionPage, error) {
	ids := make([]uuid.UUID, len(items))
	customers := make([]uuid.UUID, len(items))
	products := make([]uuid.UUID, len(items))
	orgs := make([]uuid.UUID, len(items))
	var discounts []uuid.UUID
	for i, s := range items {
		ids[i], customers[i], products[i], orgs[i] = s.ID, s.CustomerID, s.ProductID, s.OrganizationID
		if s.DiscountID != nil {
			discounts = append(discounts, *s.DiscountID)
		}
	}
	l := loaders(ctx)
	page := selection{"SubscriptionPage", "items"}
	item := func(field string) []selection { return []selection{page, {"Subscription", field}} }
	product := func(field string) []selection {
		return []selection{page, {"Subscription", "product"}, {"Product", field}}
	}
	// GraphQL's prices and the /v1 documents' wirePrices read the same loader.
	subPrices := selectedPath(ctx, item("prices"), item("wirePrices"))
	productPrices := selectedPath(ctx, product("prices"), product("wirePrices"))
	steps := []func() error{
		func() error {
			return prime(ctx, r.DB, l.Customer, storage.CustomersByIDs, customers, item("customer")...)
		},
		func() error { return prime(ctx, r.DB, l.Product, storage.ProductsByIDs, products, item("product")...) },
		func() error {
			return prime(ctx, r.DB, l.Discount, storage.DiscountsByIDs, discounts, item("discount")...)
		},
		func() error {
			return prime(ctx, r.DB, l.PricesBySubscription, storage.SubscriptionPricesBySubscriptions, ids, subPrices...)
		},
		func() error {
			return prime(ctx, r.DB, l.PendingUpdates, storage.PendingUpdatesBySubscriptions, ids, item("pendingUpdate")...)
		},
		func() error {
			return prime(ctx, r.DB, l.SubscriptionMeters, storage.SubscriptionMetersBySubscriptions, ids, item("meters")...)
		},
		func() error {
			return prime(ctx, r.DB, l.PricesByProduct, storage.PricesByProducts, products, productPrices...)
		},
		func() error {
			return prime(ctx, r.DB, l.BenefitsByProduct, storage.ProductBenefitsByProducts, products, product("benefits")...)
		},
		func() error {
			return prime(ctx, r.DB, l.Organization, storage.OrganizationsByIDs, orgs, product("organization")...)
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return &model.SubscriptionPage{Items: items, Pagination: pagination(total, p)}, nil
}

// selectedPath returns the first of paths (each starting at the same type) that the
// operation selects, or the first path when none is, for prime to skip.
func selectedPath(ctx context.Context, paths ...[]selection) []selection {
	fields := graphql.CollectFieldsCtx(ctx, []string{paths[0][0].typ})
	for _, p := range paths {
		if selects(ctx, fields, p) {
			return p
		}
	}
	return paths[0]
}

// subscriptionPendingUpdate is the open change of a subscription, or nil.
func (r *Resolver) subscriptionPendingUpdate(ctx context.Context, s *storage.Subscription) (*storage.PendingSubscriptionUpdate, error) {
	rows, err := loaders(ctx).PendingUpdates.Load(ctx, s.ID)()
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return rows[0], nil
}
