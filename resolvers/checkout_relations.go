package resolvers

import (
	"context"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/storage"
)

// customerCheckouts is Customer.checkouts: a window of each customer's checkouts of the
// level, as of now, in one statement.
func (r *Resolver) customerCheckouts(ctx context.Context, c *storage.Customer, a listArgs, f *model.CheckoutFilter) (*model.CheckoutPage, error) {
	w, sorts, err := a.windowAndSorts(storage.CheckoutSortColumn)
	if err != nil {
		return nil, err
	}
	lf, orgs, now := checkoutFilterOf(f), organizations(ctx), r.Now()
	l, err := windowsOf(ctx, "Customer.checkouts", []any{a.key(), f}, &w, func(ctx context.Context, ids []uuid.UUID) ([]storage.Paged[*storage.Checkout], error) {
		return storage.CheckoutWindowsByCustomers(ctx, r.db, orgs, ids, lf, sorts, w, now)
	})
	if err != nil {
		return nil, err
	}
	p, err := related(ctx, l, c, func(c *storage.Customer) uuid.UUID { return c.ID })
	if err != nil {
		return nil, cursorErr(err, a)
	}
	return checkoutPageOf(p, w), nil
}

// orderCheckout is Order.checkout: the checkouts of the level's orders, in one statement.
func (r *Resolver) orderCheckout(ctx context.Context, o *storage.Order) (*storage.Checkout, error) {
	orgs, now := organizations(ctx), r.Now()
	l := oneOf(ctx, r.db, "Order.checkout", func(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([]*storage.Checkout, error) {
		return storage.CheckoutsByIDs(ctx, q, orgs, ids, now)
	}, "Checkout not found")
	return relatedOpt(ctx, l, o, func(o *storage.Order) *uuid.UUID { return o.CheckoutID })
}

// checkoutOrder is Checkout.order: the order each checkout of the level made, in one
// statement; nil for a checkout that made none.
func (r *Resolver) checkoutOrder(ctx context.Context, c *storage.Checkout) (*storage.Order, error) {
	orgs := organizations(ctx)
	l := manyOf(ctx, r.db, "Checkout.order", func(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([][]*storage.Order, error) {
		return storage.OrdersByCheckouts(ctx, q, orgs, ids)
	})
	orders, err := related(ctx, l, c, func(c *storage.Checkout) uuid.UUID { return c.ID })
	if err != nil || len(orders) == 0 {
		return nil, err
	}
	return orders[0], nil
}

// checkoutSubscription is Checkout.subscription: the subscription it started, if any.
func (r *Resolver) checkoutSubscription(ctx context.Context, c *storage.Checkout) (*storage.Subscription, error) {
	return relatedOpt(ctx, loaders(ctx).Subscription, c, func(c *storage.Checkout) *uuid.UUID { return c.SubscriptionID })
}

// checkoutBuyerOf is Checkout.customer: the buyer, once known.
func (r *Resolver) checkoutBuyerOf(ctx context.Context, c *storage.Checkout) (*storage.Customer, error) {
	return relatedOpt(ctx, loaders(ctx).Customer, c, func(c *storage.Checkout) *uuid.UUID { return c.CustomerID })
}
