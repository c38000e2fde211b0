package resolvers

import (
	"context"
	"time"

	"till/storage"
)

// NextRenewalAt is when RenewDue without an organization next has work (a period end or a
// dunning retry), so the renewal loop can sleep until then; ok is false when nothing is
// scheduled.
func (r *Resolver) NextRenewalAt(ctx context.Context) (at time.Time, ok bool, err error) {
	return storage.NextRenewalAt(ctx, r.db)
}

// NextCheckoutChangeAt is when ExpireCheckouts or ReopenStaleCheckouts next has work, so the
// checkout loop can sleep until then; ok is false when no checkout is open or confirmed.
// Nothing a request does brings that time closer than a minute (checkouts live an hour, a
// confirmed one turns stale after minutes), so the loop needs no notification.
func (r *Resolver) NextCheckoutChangeAt(ctx context.Context) (at time.Time, ok bool, err error) {
	return storage.NextCheckoutChangeAt(ctx, r.db, confirmLease)
}

// NextRenderClaimLapseAt is when a claim on an unrendered event held by a renderer that may
// have died lapses, for the render loop to look again then.
func (r *Resolver) NextRenderClaimLapseAt(ctx context.Context) (at time.Time, ok bool, err error) {
	return storage.NextRenderClaimLapseAt(ctx, r.db)
}
