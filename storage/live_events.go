package storage

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// LiveChannel is notified, with the organization's id as payload, when domain events of that
// organization commit (migration 00090 numbers them then).
const LiveChannel = "till_live"

// LiveEvent is a committed domain event with its position in its organization's commit order.
type LiveEvent struct {
	Position       int64      `db:"position"`
	ID             uuid.UUID  `db:"id"`
	CreatedAt      time.Time  `db:"created_at"`
	OrganizationID uuid.UUID  `db:"organization_id"`
	Type           string     `db:"type"`
	ObjectID       uuid.UUID  `db:"object_id"`
	CustomerID     *uuid.UUID `db:"customer_id"`
	// Object is the changed object as first read for a delivery: an event read once for
	// many subscribers is read once for all of them.
	Object Memo `db:"-"`
}

// Memo is a value computed on first use and shared by every later reader.
type Memo struct {
	once sync.Once
	v    any
	err  error
}

// Do returns the value, computing it with fn the first time.
func (m *Memo) Do(fn func() (any, error)) (any, error) {
	m.once.Do(func() { m.v, m.err = fn() })
	return m.v, m.err
}

// LiveFilter narrows the events a subscription reads; empty fields narrow nothing.
type LiveFilter struct {
	// Families are event type prefixes before the dot (order, subscription, …).
	Families []string
	// Types are whole event types (order.paid).
	Types []string
	// ObjectIDs are the changed objects.
	ObjectIDs []uuid.UUID
	// CustomerID keeps the events of one customer's objects.
	CustomerID uuid.UUID
}

// Matches reports whether e passes f, for events read without the filter (a shared feed).
func (f LiveFilter) Matches(e *LiveEvent) bool {
	if f.CustomerID != uuid.Nil && (e.CustomerID == nil || *e.CustomerID != f.CustomerID) {
		return false
	}
	if len(f.Families) > 0 && !containsFamily(f.Families, e.Type) {
		return false
	}
	if len(f.Types) > 0 && !slices.Contains(f.Types, e.Type) {
		return false
	}
	return len(f.ObjectIDs) == 0 || slices.Contains(f.ObjectIDs, e.ObjectID)
}

func containsFamily(families []string, typ string) bool {
	for _, f := range families {
		if len(typ) > len(f) && typ[len(f)] == '.' && typ[:len(f)] == f {
			return true
		}
	}
	return false
}

const liveEventColumns = `position, id, created_at, organization_id, type, object_id, customer_id`

// LiveEventsAfter reads up to limit committed events of org after position after and up to
// position upTo (inclusive; 0 means no bound), in commit order, narrowed by f.
func LiveEventsAfter(ctx context.Context, q sqlx.QueryerContext, org uuid.UUID, after, upTo int64, f LiveFilter, limit int) ([]*LiveEvent, error) {
	var customer *uuid.UUID
	if f.CustomerID != uuid.Nil {
		customer = &f.CustomerID
	}
	var bound *int64
	if upTo > 0 {
		bound = &upTo
	}
	var rows []*LiveEvent
	err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+liveEventColumns+` FROM domain_events
		WHERE organization_id = $1 AND position > $2 AND ($3::bigint IS NULL OR position <= $3)
			AND ($4::uuid IS NULL OR customer_id = $4)
			AND (cardinality($5::text[]) = 0 OR split_part(type, '.', 1) = ANY($5))
			AND (cardinality($6::text[]) = 0 OR type = ANY($6))
			AND (cardinality($7::uuid[]) = 0 OR object_id = ANY($7))
		ORDER BY position LIMIT $8`,
		org, after, bound, customer, pq.Array(nonNilStrings(f.Families)), pq.Array(nonNilStrings(f.Types)), pq.Array(uuidStrings(f.ObjectIDs)), limit)
	return rows, mapErr(err)
}

// LivePosition is the position of org's last committed event (0 before any).
func LivePosition(ctx context.Context, q sqlx.QueryerContext, org uuid.UUID) (int64, error) {
	var last int64
	err := sqlx.GetContext(ctx, q, &last, `SELECT coalesce((SELECT event_last FROM order_numbers WHERE organization_id = $1), 0)`, org)
	return last, mapErr(err)
}

func uuidStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}
