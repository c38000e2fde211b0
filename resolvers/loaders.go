package resolvers

import (
	"context"
	"reflect"
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
	Member                   *dataloader.Loader[uuid.UUID, *storage.Member]
	Benefit                  *dataloader.Loader[uuid.UUID, *storage.Benefit]
	Discount                 *dataloader.Loader[uuid.UUID, *storage.Discount]
	Subscription             *dataloader.Loader[uuid.UUID, *storage.Subscription]
	OrderItemsByOrder        *dataloader.Loader[uuid.UUID, []*storage.OrderItem]
	PricesBySubscription     *dataloader.Loader[uuid.UUID, []*storage.ProductPrice]
	PendingUpdates           *dataloader.Loader[uuid.UUID, []*storage.PendingSubscriptionUpdate]
	DiscountProducts         *dataloader.Loader[uuid.UUID, []*storage.Product]
	ProductsByCheckout       *dataloader.Loader[uuid.UUID, []*storage.Product]
	Price                    *dataloader.Loader[uuid.UUID, *storage.ProductPrice]
	PriceMeter               *dataloader.Loader[uuid.UUID, *storage.PriceMeter]
	LicenseKey               *dataloader.Loader[uuid.UUID, *storage.LicenseKey]
	ActivationsByLicenseKey  *dataloader.Loader[uuid.UUID, []*storage.LicenseKeyActivation]
	SubscriptionMeters       *dataloader.Loader[uuid.UUID, []*storage.SubscriptionMeter]
	DeliveriesByWebhookEvent *dataloader.Loader[uuid.UUID, []*storage.WebhookDelivery]
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
		Member:                   one(db, storage.MembersByIDs, "Member not found"),
		Benefit:                  one(db, storage.BenefitsByIDs, "Benefit not found"),
		Discount:                 one(db, storage.DiscountsByIDs, "Discount not found"),
		Subscription:             one(db, storage.SubscriptionsByIDs, "Subscription not found"),
		OrderItemsByOrder:        many(db, storage.OrderItemsByOrders),
		PricesBySubscription:     many(db, storage.SubscriptionPricesBySubscriptions),
		PendingUpdates:           many(db, storage.PendingUpdatesBySubscriptions),
		DiscountProducts:         many(db, storage.DiscountProductsByDiscounts),
		ProductsByCheckout:       many(db, storage.ProductsByCheckouts),
		Price:                    one(db, storage.PricesByIDs, "Price not found"),
		PriceMeter:               one(db, storage.PriceMetersByIDs, "Meter not found"),
		LicenseKey:               one(db, storage.LicenseKeysByIDs, "License key not found"),
		ActivationsByLicenseKey:  many(db, storage.ActivationsByLicenseKeys),
		SubscriptionMeters:       many(db, storage.SubscriptionMetersBySubscriptions),
		DeliveriesByWebhookEvent: many(db, storage.WebhookDeliveriesByEvents),
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

// prime loads a relation for a whole page from the list resolver when the operation selects
// it (sel) and puts the results in the loader's cache, where the items' own Loads find them.
// The batch window alone does not make a page one batch: when the item resolvers start more
// than batchWait apart (a busy machine, the OS preempting the process) the page is split and
// the statement count of a nested query drifts with load. Loading here costs exactly one
// statement per selected relation. Keys without a row are left to the loader, which reports
// them as not found.
func prime[V any](ctx context.Context, db *sqlx.DB, l *dataloader.Loader[uuid.UUID, V],
	fetch func(context.Context, sqlx.ExtContext, []uuid.UUID) ([]V, error), keys []uuid.UUID, sel ...selection) error {
	if len(keys) == 0 || !selects(ctx, graphql.CollectFieldsCtx(ctx, []string{sel[0].typ}), sel) {
		return nil
	}
	unique := uniqueIDs(keys)
	rows, err := fetch(ctx, db, unique)
	if err != nil {
		return err
	}
	for i, k := range unique {
		if v := reflect.ValueOf(rows[i]); v.Kind() == reflect.Pointer && v.IsNil() {
			continue
		}
		l.Prime(ctx, k, rows[i])
	}
	return nil
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

// selection is one step of a path below the current field: a field of a type.
type selection struct{ typ, field string }

// selects reports whether fields (of path[0].typ) select the path, through aliases and
// fragments.
func selects(ctx context.Context, fields []graphql.CollectedField, path []selection) bool {
	for _, f := range fields {
		if f.Name != path[0].field {
			continue
		}
		if len(path) == 1 {
			return true
		}
		next := graphql.CollectFields(graphql.GetOperationContext(ctx), f.Selections, []string{path[1].typ})
		if selects(ctx, next, path[1:]) {
			return true
		}
	}
	return false
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
