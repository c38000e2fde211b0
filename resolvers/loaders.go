package resolvers

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/graph-gophers/dataloader/v7"
	"github.com/jmoiron/sqlx"

	"till/storage"
)

// Loaders batch the relation lookups of one operation so a nested query costs a constant
// number of SQL statements whatever the page size. A fresh set is made per operation, so
// nothing is cached across requests or principals.
type Loaders struct {
	Organization             *dataloader.Loader[uuid.UUID, *storage.Organization]
	Customer                 *dataloader.Loader[uuid.UUID, *storage.Customer]
	Product                  *dataloader.Loader[uuid.UUID, *storage.Product]
	PricesByProduct          *dataloader.Loader[uuid.UUID, []*storage.ProductPrice]
	BenefitsByProduct        *dataloader.Loader[uuid.UUID, []*storage.Benefit]
	PaymentMethodsByCustomer *dataloader.Loader[uuid.UUID, []*storage.PaymentMethod]
}

type loadersKey struct{}

// batchWait is how long a loader collects keys; resolvers of one level run concurrently and
// enqueue within microseconds, so a short wait batches a whole page.
const batchWait = 2 * time.Millisecond

func newLoaders(db *sqlx.DB) *Loaders {
	return &Loaders{
		Organization:             one(db, storage.OrganizationsByIDs, "Organization not found"),
		Customer:                 one(db, storage.CustomersByIDs, "Customer not found"),
		Product:                  one(db, storage.ProductsByIDs, "Product not found"),
		PricesByProduct:          many(db, storage.PricesByProducts),
		BenefitsByProduct:        many(db, storage.ProductBenefitsByProducts),
		PaymentMethodsByCustomer: many(db, storage.PaymentMethodsByCustomers),
	}
}

// one builds a loader over a batch function that returns one record per key, nil if missing.
func one[T any](db *sqlx.DB, fetch func(context.Context, sqlx.ExtContext, []uuid.UUID) ([]*T, error), missing string) *dataloader.Loader[uuid.UUID, *T] {
	return dataloader.NewBatchedLoader(func(ctx context.Context, keys []uuid.UUID) []*dataloader.Result[*T] {
		rows, err := fetch(ctx, db, keys)
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
	}, dataloader.WithWait[uuid.UUID, *T](batchWait))
}

// many builds a loader over a batch function that returns a slice per key.
func many[T any](db *sqlx.DB, fetch func(context.Context, sqlx.ExtContext, []uuid.UUID) ([][]*T, error)) *dataloader.Loader[uuid.UUID, []*T] {
	return dataloader.NewBatchedLoader(func(ctx context.Context, keys []uuid.UUID) []*dataloader.Result[[]*T] {
		rows, err := fetch(ctx, db, keys)
		out := make([]*dataloader.Result[[]*T], len(keys))
		for i := range keys {
			if err != nil {
				out[i] = &dataloader.Result[[]*T]{Error: err}
			} else {
				out[i] = &dataloader.Result[[]*T]{Data: rows[i]}
			}
		}
		return out
	}, dataloader.WithWait[uuid.UUID, []*T](batchWait))
}

// loaders returns the operation's loaders.
func loaders(ctx context.Context) *Loaders {
	return ctx.Value(loadersKey{}).(*Loaders)
}

// LoadersExtension installs fresh loaders around every operation, for /graphql and for the
// /v1 routes alike since both run through the same executor.
type LoadersExtension struct{ DB *sqlx.DB }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
} = LoadersExtension{}

// ExtensionName implements graphql.HandlerExtension.
func (LoadersExtension) ExtensionName() string { return "Loaders" }

// Validate implements graphql.HandlerExtension.
func (LoadersExtension) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation implements graphql.OperationInterceptor.
func (e LoadersExtension) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	return next(context.WithValue(ctx, loadersKey{}, newLoaders(e.DB)))
}
