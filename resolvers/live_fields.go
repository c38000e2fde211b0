package resolvers

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

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
	return liveObject(e, func(ctx context.Context, orgs []uuid.UUID) (*storage.Order, error) {
		o, _, err := storage.GetOrderWith(ctx, r.db, orgs, nil, e.ObjectID, storage.OrderWith{})
		return o, err
	})
}

func (r *Resolver) liveSubscription(ctx context.Context, e *storage.LiveEvent) (*storage.Subscription, error) {
	if !r.liveObjectVisible(ctx, e, "subscription") {
		return nil, nil
	}
	return liveObject(e, func(ctx context.Context, orgs []uuid.UUID) (*storage.Subscription, error) {
		return storage.GetSubscription(ctx, r.db, orgs, e.ObjectID)
	})
}

func (r *Resolver) liveCheckout(ctx context.Context, e *storage.LiveEvent) (*storage.Checkout, error) {
	if !r.liveObjectVisible(ctx, e, "checkout") {
		return nil, nil
	}
	return liveObject(e, func(ctx context.Context, orgs []uuid.UUID) (*storage.Checkout, error) {
		return storage.GetCheckout(ctx, r.db, orgs, e.ObjectID, r.Now())
	})
}

func (r *Resolver) liveCustomer(ctx context.Context, e *storage.LiveEvent) (*storage.Customer, error) {
	if !r.liveObjectVisible(ctx, e, "customer") {
		return nil, nil
	}
	return liveObject(e, func(ctx context.Context, orgs []uuid.UUID) (*storage.Customer, error) {
		return storage.GetCustomer(ctx, r.db, orgs, e.ObjectID)
	})
}

// liveObject reads e's object once for every subscriber e is delivered to (the feed hands
// them the same event): the record of the event's organization, which each subscriber then
// shows through its own field guards and loaders. The read belongs to no one subscriber, so
// one that leaves meanwhile does not fail it for the others. A gone object is null.
func liveObject[T any](e *storage.LiveEvent, read func(context.Context, []uuid.UUID) (*T, error)) (*T, error) {
	v, err := e.Object.Do(func() (any, error) {
		ctx, cancel := context.WithTimeout(context.Background(), liveObjectTimeout)
		defer cancel()
		o, err := read(ctx, []uuid.UUID{e.OrganizationID})
		if errors.Is(err, storage.ErrNotFound) {
			return (*T)(nil), nil
		}
		return o, err
	})
	if err != nil {
		return nil, err
	}
	return v.(*T), nil
}

// liveObjectTimeout bounds the shared read of an event's object.
const liveObjectTimeout = 10 * time.Second

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
