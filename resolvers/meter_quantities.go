package resolvers

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"

	"till/graph/model"
	"till/storage"
)

// maxQuantityDays is upstream's MAX_INTERVAL_DAYS: the longest window, in calendar days,
// each interval may cover, which bounds the number of buckets a request can ask for.
var maxQuantityDays = map[model.MeterQuantityInterval]int{
	model.MeterQuantityIntervalHour:  7,
	model.MeterQuantityIntervalDay:   366,
	model.MeterQuantityIntervalWeek:  7 * 53,
	model.MeterQuantityIntervalMonth: 365 * 4,
}

// quantityWindow is a meterQuantities request after validation.
type quantityWindow struct {
	from, to time.Time
	interval model.MeterQuantityInterval
}

// check refuses an empty or reversed window and one too long for its interval.
func (w quantityWindow) check() error {
	if !w.from.Before(w.to) {
		return Invalid("value_error", "endTimestamp must be after startTimestamp.", w.to, "endTimestamp")
	}
	max, ok := maxQuantityDays[w.interval]
	if !ok {
		return Invalid("enum", "Input should be 'hour', 'day', 'week' or 'month'", string(w.interval), "interval")
	}
	if days := calendarDays(w.from, w.to); days > max {
		return Invalid("value_error", "The window is too long for the interval: at most "+strconv.Itoa(max)+" days.", days, "endTimestamp")
	}
	return nil
}

// calendarDays counts UTC calendar days between two instants, as upstream compares dates.
func calendarDays(from, to time.Time) int {
	day := func(t time.Time) time.Time {
		t = t.UTC()
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	}
	return int(day(to).Sub(day(from)).Hours() / 24)
}

// meterQuantities aggregates a meter's events per interval, for one customer or all.
func (r *Resolver) meterQuantities(ctx context.Context, id uuid.UUID, w quantityWindow, customerID *uuid.UUID, externalID *string) (*storage.MeterQuantities, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	m, err := storage.GetMeter(ctx, r.db, organizations(ctx), id)
	if err != nil {
		return nil, notFoundOr(err, "")
	}
	c, err := r.meterCustomer(ctx, m.OrganizationID, customerID, externalID)
	if err != nil {
		return nil, err
	}
	return storage.MeterQuantitySeries(ctx, r.db, m, c, w.from, w.to, string(w.interval))
}

// meterCustomer resolves whose events a quantity covers, as upstream's customer_id and
// external_customer_id filters do: a customer id also matches events sent with that
// customer's external id; an external id also matches events sent with the id of the
// customer holding it, and matches events before any customer holds it. Given both, they
// must name the same customer, or nothing matches. An unknown id matches nothing rather than
// failing, as upstream's filter would. nil means every event of the organization.
func (r *Resolver) meterCustomer(ctx context.Context, orgID uuid.UUID, customerID *uuid.UUID, externalID *string) (*storage.MeterCustomer, error) {
	orgs := []uuid.UUID{orgID}
	switch {
	case customerID != nil:
		c := &storage.MeterCustomer{OrganizationID: orgID, ID: *customerID}
		cust, err := storage.GetCustomer(ctx, r.db, orgs, *customerID)
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			c.ExternalID = cust.ExternalID
		}
		if externalID != nil && (c.ExternalID == nil || *c.ExternalID != *externalID) {
			return &storage.MeterCustomer{OrganizationID: orgID}, nil
		}
		return c, nil
	case externalID != nil:
		c := &storage.MeterCustomer{OrganizationID: orgID, ExternalID: externalID}
		cust, err := storage.GetCustomerByExternalID(ctx, r.db, orgs, *externalID)
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			c.ID = cust.ID
		}
		return c, nil
	}
	return nil, nil
}

// RefreshMeterRollups brings the meters' daily rollups up to today, so quantities read
// whole days from them instead of from every event; serve runs it every minute.
func (r *Resolver) RefreshMeterRollups(ctx context.Context) (int, error) {
	return storage.RefreshMeterRollups(ctx, r.db, r.Now())
}
