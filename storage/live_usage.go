package storage

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// UsageChannel is notified, with the organization's id as payload, when usage events of that
// organization commit (migration 00091).
const UsageChannel = "till_usage"

// UsageCursor is a place in an organization's ingested events: after every event of an
// older transaction (XID) and after the events of transaction XID up to ID.
type UsageCursor struct {
	XID int64
	ID  uuid.UUID
}

// String writes the cursor as a client keeps it: xid, a dot, and the event id.
func (c UsageCursor) String() string { return strconv.FormatInt(c.XID, 10) + "." + c.ID.String() }

// ParseUsageCursor reads a cursor String wrote.
func ParseUsageCursor(s string) (UsageCursor, error) {
	x, id, ok := strings.Cut(s, ".")
	n, err := strconv.ParseInt(x, 10, 64)
	if !ok || err != nil || n < 0 {
		return UsageCursor{}, fmt.Errorf("not a usage cursor")
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return UsageCursor{}, fmt.Errorf("not a usage cursor")
	}
	return UsageCursor{XID: n, ID: u}, nil
}

// LiveUsageEvent is an ingested event and its place among the organization's events.
type LiveUsageEvent struct {
	Event
	XID int64 `db:"xid"`
}

// Place is the cursor right after e.
func (e *LiveUsageEvent) Place() UsageCursor { return UsageCursor{XID: e.XID, ID: e.ID} }

// UsageHorizon is the oldest transaction still running anywhere: every event of an older one
// is final. A cursor at the horizon (with the nil id) starts after everything final.
func UsageHorizon(ctx context.Context, q sqlx.QueryerContext) (UsageCursor, int64, error) {
	var h struct {
		Xmin int64 `db:"xmin"`
		Xmax int64 `db:"xmax"`
	}
	err := sqlx.GetContext(ctx, q, &h, `SELECT pg_snapshot_xmin(s)::text::bigint AS xmin, pg_snapshot_xmax(s)::text::bigint AS xmax
		FROM pg_current_snapshot() s`)
	return UsageCursor{XID: h.Xmin}, h.Xmax, mapErr(err)
}

// LiveMeterEvents reads up to limit events of meter m after cursor that are final, in
// (xid, id) order, with the place it read up to: after the last event, or the horizon when
// it read everything final. pending reports events of m's organization beyond the horizon,
// committed or not, which a later read will find once older transactions end.
func LiveMeterEvents(ctx context.Context, q sqlx.QueryerContext, m *Meter, after UsageCursor, limit int) (
	events []*LiveUsageEvent, next UsageCursor, pending bool, err error) {
	p := &sqlParams{}
	_, where, err := meterSQL(m, p)
	if err != nil {
		return nil, after, false, err
	}
	org, x, id := p.add(m.OrganizationID, "uuid"), p.add(strconv.FormatInt(after.XID, 10), "xid8"), p.add(after.ID, "uuid")
	horizon, _, err := UsageHorizon(ctx, q)
	if err != nil {
		return nil, after, false, err
	}
	h := p.add(strconv.FormatInt(horizon.XID, 10), "xid8")
	inner := `(SELECT * FROM events e WHERE e.organization_id = ` + org + ` AND (e.xid, e.id) > (` + x + `, ` + id + `)
		AND e.xid < ` + h + ` AND ` + where + ` ORDER BY e.xid, e.id LIMIT ` + strconv.Itoa(limit) + `) e`
	query := strings.Replace(fmt.Sprintf(eventDecorated, inner), "SELECT ", "SELECT e.xid::text::bigint AS xid, ", 1)
	err = sqlx.SelectContext(ctx, q, &events, query+` ORDER BY e.xid, e.id`, p.args...)
	if err != nil {
		return nil, after, false, mapErr(err)
	}
	if len(events) == limit {
		return events, events[len(events)-1].Place(), true, nil
	}
	next = after
	if horizon.XID > after.XID {
		next = horizon
	}
	err = sqlx.GetContext(ctx, q, &pending, `SELECT EXISTS (SELECT 1 FROM events WHERE organization_id = $1 AND xid >= $2::text::xid8)`,
		m.OrganizationID, strconv.FormatInt(horizon.XID, 10))
	return events, next, pending, mapErr(err)
}
