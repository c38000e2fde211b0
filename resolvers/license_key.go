package resolvers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
)

// License keys are issued and revoked here, by their benefit grants; validating, activating
// and updating them is the license-key API's.

// licenseKeyTerms reads a benefit's limits and turns its expiry (ttl × timeframe) into a
// date counted from now, the grant time.
func licenseKeyTerms(b *storage.Benefit, now time.Time) (licenseKeysProperties, storage.LicenseKeyTerms) {
	p := licenseKeyProperties(b)
	t := storage.LicenseKeyTerms{LimitUsage: p.LimitUsage}
	if p.Activations != nil {
		t.LimitActivations = &p.Activations.Limit
	}
	if e := p.Expires; e != nil && e.TTL > 0 {
		var at time.Time
		switch e.Timeframe {
		case "year":
			at = addMonths(now, 12*e.TTL)
		case "month":
			at = addMonths(now, e.TTL)
		default:
			at = now.AddDate(0, 0, e.TTL)
		}
		t.ExpiresAt = &at
	}
	return p, t
}

// addMonths adds months the way dateutil's relativedelta does: the day is clamped to the
// target month's last day (Jan 31 + 1 month = Feb 28), where time.AddDate would overflow
// into March.
func addMonths(t time.Time, months int) time.Time {
	y, m, d := t.Date()
	first := time.Date(y, m+time.Month(months), 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
	last := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(d, last)-1)
}

// grantLicenseKey re-enables the grant's previous key when it has one, with the benefit's
// current terms, or issues a new key for the grant's holder.
func (r *Resolver) grantLicenseKey(ctx context.Context, tx *sqlx.Tx, g *storage.BenefitGrant, b *storage.Benefit,
	previous *uuid.UUID, now time.Time) (*storage.LicenseKey, error) {
	props, terms := licenseKeyTerms(b, now)
	if previous != nil {
		k, err := storage.RegrantLicenseKey(ctx, tx, g.OrganizationID, b.ID, *previous, terms, now)
		if !errors.Is(err, storage.ErrNotFound) {
			return k, err
		}
	}
	for range 3 { // a clash of random UUIDs is not expected; three draws make it impossible in practice
		k, err := storage.IssueLicenseKey(ctx, tx, g.OrganizationID, b.ID, g.CustomerID, g.MemberID,
			licenseKeyOf(props.Prefix), terms, now)
		if !errors.Is(err, storage.ErrConflict) {
			return k, err
		}
	}
	return nil, fmt.Errorf("no unused license key after three draws for benefit %s", b.ID)
}
