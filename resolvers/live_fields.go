package resolvers

import (
	"context"
	"errors"

	"till/internal/auth"
	"till/storage"
)

// The changed object of a live event is read when the event is delivered, as the subscriber
// would read it with a query, so every field keeps its own guard. An object that is gone, or
// an event of another kind, gives null.

func (r *Resolver) liveOrder(ctx context.Context, e *storage.LiveEvent) (*storage.Order, error) {
	if !r.liveObjectVisible(ctx, e, "order") {
		return nil, nil
	}
	return nullIfGone(r.order(ctx, e.ObjectID))
}

func (r *Resolver) liveSubscription(ctx context.Context, e *storage.LiveEvent) (*storage.Subscription, error) {
	if !r.liveObjectVisible(ctx, e, "subscription") {
		return nil, nil
	}
	return nullIfGone(r.subscriptionByID(ctx, e.ObjectID))
}

func (r *Resolver) liveCheckout(ctx context.Context, e *storage.LiveEvent) (*storage.Checkout, error) {
	if !r.liveObjectVisible(ctx, e, "checkout") {
		return nil, nil
	}
	return nullIfGone(r.checkout(ctx, e.ObjectID))
}

func (r *Resolver) liveCustomer(ctx context.Context, e *storage.LiveEvent) (*storage.Customer, error) {
	if !r.liveObjectVisible(ctx, e, "customer") {
		return nil, nil
	}
	return nullIfGone(r.customerByRef(ctx, &e.ObjectID, nil))
}

// liveObjectVisible reports whether e is of family and its object one the principal reads
// through this field: any of its organizations' for organization tokens and users, only its
// own customer's for a portal session (orders and subscriptions only with the billing role,
// as in the portal's lists).
func (r *Resolver) liveObjectVisible(ctx context.Context, e *storage.LiveEvent, family string) bool {
	if liveFamily(e.Type) != family {
		return false
	}
	p := auth.FromContext(ctx)
	switch p.Kind {
	case auth.KindCustomerSession, auth.KindMemberSession:
		if e.CustomerID == nil || *e.CustomerID != p.CustomerID || e.OrganizationID != p.OrganizationID || family == "checkout" {
			return false
		}
		return family == "customer" || r.requireBillingRole(ctx) == nil
	}
	return true
}

// nullIfGone turns a not-found read into null.
func nullIfGone[T any](v *T, err error) (*T, error) {
	if te, ok := errors.AsType[*Error](err); ok && te.Code == CodeNotFound {
		return nil, nil
	}
	return v, err
}
