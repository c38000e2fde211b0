package resolvers

import (
	"context"
	"time"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/storage"
)

// livePendingPoll is how soon a meter stream looks again when events it may follow wait for
// older transactions to end: their end notifies nobody.
const livePendingPoll = 100 * time.Millisecond

// subscribeMeter starts a stream of the usage events that count toward a meter of the
// caller's organizations, after the cursor given or after everything final now.
func (r *Resolver) subscribeMeter(ctx context.Context, meterID uuid.UUID, after *string) (<-chan *storage.LiveUsageEvent, error) {
	m, err := r.meter(ctx, meterID)
	if err != nil {
		return nil, err
	}
	cursor, xmax, err := storage.UsageHorizon(ctx, r.db)
	if err != nil {
		return nil, err
	}
	if after != nil {
		if cursor, err = storage.ParseUsageCursor(*after); err != nil || cursor.XID > xmax {
			return nil, Invalid("value_error", "The cursor names no event of this meter.", *after, "after")
		}
	}
	s := liveStream{org: m.OrganizationID}
	conn, credential, err := r.openLiveSlot(ctx, &s)
	if err != nil {
		return nil, err
	}
	r.live.watchUsage(m.OrganizationID)
	out := make(chan *storage.LiveUsageEvent)
	go func() {
		defer close(out)
		defer r.closeLiveSlot(conn, credential)
		defer r.live.unwatchUsage(m.OrganizationID)
		r.endLive(ctx, r.followMeter(ctx, conn, s, m, cursor, out))
	}()
	return out, nil
}

// followMeter sends m's events after cursor to out until ctx ends or a recheck of the
// credential fails, reading once per notification of the organization's usage events, soon
// again while events wait for older transactions, and at least every liveRecheck.
func (r *Resolver) followMeter(ctx context.Context, conn *liveConn, s liveStream, m *storage.Meter, cursor storage.UsageCursor,
	out chan<- *storage.LiveUsageEvent) error {
	checked := time.Now()
	var passed auth.Stamp
	timer := time.NewTimer(liveRecheck)
	defer timer.Stop()
	for {
		wake := r.live.usageWake(m.OrganizationID) // before reading, so no notification is missed
		events, next, pending, err := storage.LiveMeterEvents(ctx, r.db, m, cursor, liveCatchUpBatch)
		if err != nil {
			return err
		}
		for _, e := range events {
			if !r.live.pace(ctx, s.credential, s.cost) {
				return nil
			}
			if !passed.Current() {
				if passed, err = r.recheckLive(ctx, conn, s); err != nil {
					return err
				}
				checked = time.Now()
			}
			select {
			case out <- e:
			case <-ctx.Done():
				return nil
			}
		}
		cursor = next
		if len(events) == liveCatchUpBatch {
			continue
		}
		wait := max(0, liveRecheck-time.Since(checked))
		if pending {
			wait = min(wait, livePendingPoll)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-timer.C:
			if time.Since(checked) >= liveRecheck {
				if passed, err = r.recheckLive(ctx, conn, s); err != nil {
					return err
				}
				checked = time.Now()
			}
		}
	}
}
