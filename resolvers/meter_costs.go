package resolvers

import (
	"context"

	"github.com/google/uuid"

	"till/storage"
)

// MaxMeterCostMeters caps the meters one meterCosts names. The schema declares it as the
// field's @listSize, so an operation's cost counts every meter's buckets before it runs.
const MaxMeterCostMeters = 50

// meterCosts sums what each meter's events cost per interval, for one customer or all. An
// id that is not a meter of the caller's organizations fails the whole field as
// meterQuantities fails, rather than being dropped: a dashboard then learns that a meter is
// gone instead of charting it as costing nothing.
func (r *Resolver) meterCosts(ctx context.Context, ids []uuid.UUID, w quantityWindow, customerID *uuid.UUID, externalID *string) ([]*storage.MeterCosts, error) {
	if len(ids) > MaxMeterCostMeters {
		return nil, tooMany(len(ids), MaxMeterCostMeters, "ids")
	}
	if err := w.check(); err != nil {
		return nil, err
	}
	ids = uniqueIDs(ids)
	meters, err := storage.GetMetersOf(ctx, r.db, organizations(ctx), ids)
	if err != nil {
		return nil, notFoundOr(err, "")
	}
	// Customers are resolved per organization: a user's meters may belong to several, and
	// an id or external id names a customer of one of them.
	customers := map[uuid.UUID]*storage.MeterCustomer{}
	reads := make([]storage.MeterCostRead, len(meters))
	for i, m := range meters {
		c, seen := customers[m.OrganizationID]
		if !seen {
			if c, err = r.meterCustomer(ctx, m.OrganizationID, customerID, externalID); err != nil {
				return nil, err
			}
			customers[m.OrganizationID] = c
		}
		reads[i] = storage.MeterCostRead{Meter: m, Customer: c}
	}
	return storage.MeterCostSeries(ctx, r.db, reads, w.from, w.to, string(w.interval))
}
