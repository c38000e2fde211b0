package resolvers

import (
	"context"

	"github.com/google/uuid"

	"till/graph/model"
	"till/storage"
)

// customerMeters is Customer.meters: a window of each customer's meter balances of the level,
// computed in two statements (storage.CustomerMeterWindowsByCustomers). The level's customers
// are handed to the customer loader first, so CustomerMeter.customer reads nothing.
func (r *Resolver) customerMeters(ctx context.Context, c *storage.Customer, a listArgs, f *model.CustomerMeterFilter) (*model.CustomerMeterPage, error) {
	for _, s := range siblings(ctx, c) {
		loaders(ctx).Customer.prime(ctx, s.ID, s)
	}
	var lf storage.CustomerMeterListFilter
	if f != nil {
		lf = storage.CustomerMeterListFilter{MeterIDs: f.MeterID, Query: f.Query}
	}
	p, w, err := relatedWindow(ctx, r.db, "Customer.meters", c, func(c *storage.Customer) uuid.UUID { return c.ID },
		a, storage.CustomerMeterSortColumns, lf, storage.CustomerMeterWindowsByCustomers)
	if err != nil {
		return nil, err
	}
	return &model.CustomerMeterPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}
