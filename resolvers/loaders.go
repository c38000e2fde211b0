package resolvers

import (
	"context"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/graph-gophers/dataloader/v7"
	"github.com/jmoiron/sqlx"
	"github.com/vektah/gqlparser/v2/ast"

	"till/storage"
)

// Loaders batch the relation lookups of one operation so a nested query costs a constant
// number of SQL statements whatever the page size. A fresh set is made per operation, so
// nothing is cached across requests or principals.
type Loaders struct {
	Organization             *loader[*storage.Organization]
	Customer                 *loader[*storage.Customer]
	Product                  *loader[*storage.Product]
	PricesByProduct          *loader[[]*storage.ProductPrice]
	BenefitsByProduct        *loader[[]*storage.Benefit]
	PaymentMethodsByCustomer *loader[[]*storage.PaymentMethod]
	Member                   *loader[*storage.Member]
	Benefit                  *loader[*storage.Benefit]
	Discount                 *loader[*storage.Discount]
	Subscription             *loader[*storage.Subscription]
	OrderItemsByOrder        *loader[[]*storage.OrderItem]
	PricesBySubscription     *loader[[]*storage.ProductPrice]
	PendingUpdates           *loader[[]*storage.PendingSubscriptionUpdate]
	DiscountProducts         *loader[[]*storage.Product]
	ProductsByCheckout       *loader[[]*storage.Product]
	Price                    *loader[*storage.ProductPrice]
	PriceMeter               *loader[*storage.PriceMeter]
	LicenseKey               *loader[*storage.LicenseKey]
	ActivationsByLicenseKey  *loader[[]*storage.LicenseKeyActivation]
	SubscriptionMeters       *loader[[]*storage.SubscriptionMeter]
	DeliveriesByWebhookEvent *loader[[]*storage.WebhookDelivery]

	levels *levels
	// mu serialises every loader's enqueue-and-flush (see loader).
	mu *sync.Mutex
	// windows holds the loaders made on first use (oneOf, manyOf, windowsOf), by name and
	// arguments.
	windows sync.Map
	// plans holds, per relation and place in the document (windowField), the loader key and
	// columns windowsOf worked out for the first parent of a level, for its siblings.
	plans sync.Map
}

type loadersKey struct{}

// noWait is the batch window of every loader: in effect none, since each load flushes its
// batch itself (loader.key, related); a batch never waits on the clock.
const noWait = 24 * time.Hour

func newLoaders(db *sqlx.DB) *Loaders {
	mu := &sync.Mutex{}
	return &Loaders{
		levels:                   &levels{of: map[any]*level{}},
		mu:                       mu,
		Organization:             one(db, mu, storage.OrganizationsByIDs, "Organization not found"),
		Customer:                 one(db, mu, storage.CustomersByIDs, "Customer not found"),
		Product:                  one(db, mu, storage.ProductsByIDs, "Product not found"),
		PricesByProduct:          many(db, mu, storage.PricesByProducts),
		BenefitsByProduct:        many(db, mu, storage.ProductBenefitsByProducts),
		PaymentMethodsByCustomer: many(db, mu, storage.PaymentMethodsByCustomers),
		Member:                   one(db, mu, storage.MembersByIDs, "Member not found"),
		Benefit:                  one(db, mu, storage.BenefitsByIDs, "Benefit not found"),
		Discount:                 one(db, mu, storage.DiscountsByIDs, "Discount not found"),
		Subscription:             one(db, mu, storage.SubscriptionsByIDs, "Subscription not found"),
		OrderItemsByOrder:        many(db, mu, storage.OrderItemsByOrders),
		PricesBySubscription:     many(db, mu, storage.SubscriptionPricesBySubscriptions),
		PendingUpdates:           many(db, mu, storage.PendingUpdatesBySubscriptions),
		DiscountProducts:         many(db, mu, storage.DiscountProductsByDiscounts),
		ProductsByCheckout:       many(db, mu, storage.ProductsByCheckouts),
		Price:                    one(db, mu, storage.PricesByIDs, "Price not found"),
		PriceMeter:               one(db, mu, storage.PriceMetersByIDs, "Meter not found"),
		LicenseKey:               one(db, mu, storage.LicenseKeysByIDs, "License key not found"),
		ActivationsByLicenseKey:  many(db, mu, storage.ActivationsByLicenseKeys),
		SubscriptionMeters:       many(db, mu, storage.SubscriptionMetersBySubscriptions),
		DeliveriesByWebhookEvent: many(db, mu, storage.WebhookDeliveriesByEvents),
	}
}

// one builds a loader over a batch function that returns one record per key, nil if missing.
// The records of one batch are read together: they are the next level of the query.
func one[T any](db *sqlx.DB, mu *sync.Mutex, fetch func(context.Context, sqlx.ExtContext, []uuid.UUID) ([]*T, error), missing string) *loader[*T] {
	return &loader[*T]{mu: mu, dl: dataloader.NewBatchedLoader(func(ctx context.Context, keys []uuid.UUID) []*dataloader.Result[*T] {
		rows, err := fetch(ctx, db, keys)
		record(ctx, rows)
		out := make([]*dataloader.Result[*T], len(keys))
		for i := range keys {
			switch {
			case err != nil:
				out[i] = &dataloader.Result[*T]{Error: err}
			case rows[i] == nil:
				out[i] = &dataloader.Result[*T]{Error: NotFound(missing)}
			default:
				out[i] = &dataloader.Result[*T]{Data: rows[i]}
			}
		}
		return out
	}, dataloader.WithWait[uuid.UUID, *T](noWait))}
}

// many builds a loader over a batch function that returns a slice per key.
// Every record of one batch, whatever its key, is of the same next level of the query.
func many[T any](db *sqlx.DB, mu *sync.Mutex, fetch func(context.Context, sqlx.ExtContext, []uuid.UUID) ([][]*T, error)) *loader[[]*T] {
	return &loader[[]*T]{mu: mu, dl: dataloader.NewBatchedLoader(func(ctx context.Context, keys []uuid.UUID) []*dataloader.Result[[]*T] {
		rows, err := fetch(ctx, db, keys)
		if err == nil {
			record(ctx, flatten(rows))
		}
		out := make([]*dataloader.Result[[]*T], len(keys))
		for i := range keys {
			if err != nil {
				out[i] = &dataloader.Result[[]*T]{Error: err}
			} else {
				out[i] = &dataloader.Result[[]*T]{Data: rows[i]}
			}
		}
		return out
	}, dataloader.WithWait[uuid.UUID, []*T](noWait))}
}

// flatten joins the slices of a batch into one.
func flatten[T any](groups [][]*T) []*T {
	var out []*T
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// uniqueIDs drops repeated ids, keeping the first occurrence's order: a batch query needs
// each key once, however many rows of a page point at it.
func uniqueIDs(ids []uuid.UUID) []uuid.UUID {
	seen := make(map[uuid.UUID]bool, len(ids))
	out := make([]uuid.UUID, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// loaders returns the operation's loaders, making them on first use.
func loaders(ctx context.Context) *Loaders {
	return ctx.Value(loadersKey{}).(func() *Loaders)()
}

// withLoaders gives ctx a set of loaders of its own, made only when a resolver first asks
// for one: a subscription's event that selects no relation, sent to each of many
// subscribers, would otherwise spend a fifth of the server's time making loaders it never
// uses.
func withLoaders(ctx context.Context, db *sqlx.DB) context.Context {
	return context.WithValue(ctx, loadersKey{}, sync.OnceValue(func() *Loaders { return newLoaders(db) }))
}

// LoadersExtension installs fresh loaders around every operation, for /graphql and for the
// /v1 routes alike since both run through the same executor.
type LoadersExtension struct{ DB *sqlx.DB }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
	graphql.ResponseInterceptor
} = LoadersExtension{}

// ExtensionName implements graphql.HandlerExtension.
func (LoadersExtension) ExtensionName() string { return "Loaders" }

// Validate implements graphql.HandlerExtension.
func (LoadersExtension) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation implements graphql.OperationInterceptor.
func (e LoadersExtension) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	return next(withLoaders(ctx, e.DB))
}

// InterceptResponse implements graphql.ResponseInterceptor: each event of a subscription is
// read with loaders of its own, so an object that changed between two events is read anew.
// A request refused before it became an operation (a body that is not JSON, a mutation over
// GET) has no operation context, and asking for one would panic.
func (e LoadersExtension) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	if op := graphql.GetOperationContext(ctx); op.Operation != nil && op.Operation.Operation == ast.Subscription {
		ctx = withLoaders(ctx, e.DB)
	}
	return next(ctx)
}
