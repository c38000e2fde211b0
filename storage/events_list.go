package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// EventListQuery is one window of an event list: Window's Limit events after its After
// cursor (or from the start), or with Backward the Limit events before its Before cursor (or
// at the end), returned in list order. Event lists have no offset pages (Window.Page is
// ignored) and count no total: an organization may hold millions of events.
type EventListQuery struct {
	Filter    EventListFilter
	Ascending bool
	Window    Window
}

// eventPosition is an event's place in the ("timestamp", id) order.
type eventPosition struct {
	Timestamp time.Time
	ID        uuid.UUID
}

// ascending is the direction the window is read in: the list's, reversed when reading
// backward.
func (lq EventListQuery) ascending() bool {
	return lq.Ascending != (lq.Window.Backward || lq.Window.Before != nil)
}

// order is the ORDER BY of the window's reading direction over the events aliased alias.
func (lq EventListQuery) order(alias string) string {
	if lq.ascending() {
		return fmt.Sprintf(` ORDER BY %[1]s."timestamp", %[1]s.id`, alias)
	}
	return fmt.Sprintf(` ORDER BY %[1]s."timestamp" DESC, %[1]s.id DESC`, alias)
}

// signature identifies the list's order in its cursors, so that a cursor of one direction
// is refused by the other.
func (lq EventListQuery) signature() uint32 {
	return orderSignature([]Sort{{Column: `e."timestamp"`, Desc: !lq.Ascending}, {Column: "e.id", Desc: !lq.Ascending}})
}

// where starts the conditions of a window (the events of organization o.id with the
// filters and the cursor bound), with first as the first arguments.
func (lq EventListQuery) where(first ...any) (*filters, error) {
	f := newFilters([]string{"e.organization_id = o.id"}, first...)
	eventFilters(f, lq.Filter)
	for _, c := range []*Cursor{lq.Window.After, lq.Window.Before} {
		if c == nil {
			continue
		}
		pos, err := lq.position(*c)
		if err != nil {
			return nil, err
		}
		afterCursor(f, pos, lq.ascending())
	}
	return f, nil
}

// position reads a cursor this list issued.
func (lq EventListQuery) position(c Cursor) (eventPosition, error) {
	var raw []string
	if c.order != lq.signature() || json.Unmarshal([]byte(c.key), &raw) != nil || len(raw) != 2 {
		return eventPosition{}, ErrInvalidCursor
	}
	ts, err := time.Parse(time.RFC3339Nano, raw[0])
	id, idErr := uuid.Parse(raw[1])
	if err != nil || idErr != nil {
		return eventPosition{}, ErrInvalidCursor
	}
	return eventPosition{Timestamp: ts, ID: id}, nil
}

// window cuts rows read in reading direction to the window: at most Limit rows (one more
// only tells that more follow), in list order, each with its cursor.
func (lq EventListQuery) window(rows []*Event) Paged[*Event] {
	out := Paged[*Event]{Items: rows}
	if len(rows) > lq.Window.Limit {
		out.More, out.Items = true, rows[:lq.Window.Limit]
	}
	if lq.Window.Backward || lq.Window.Before != nil {
		slices.Reverse(out.Items)
	}
	sig := lq.signature()
	out.Cursors = make([]Cursor, len(out.Items))
	for i, e := range out.Items {
		key, _ := json.Marshal([]string{e.Timestamp.UTC().Format(time.RFC3339Nano), e.ID.String()})
		out.Cursors[i] = Cursor{order: sig, key: string(key)}
	}
	return out
}

// ListEvents returns a window of the organizations' events ordered by ("timestamp", id),
// with whether more follow it in reading direction. The window is found by keyset, never by
// offset, so any window of a long list costs what the first does. Each organization is read
// by its own index-ordered scan of events_organization_timestamp_idx (a lateral subquery),
// because "organization_id = ANY(...)" cannot return rows in index order; the scans are
// merged and cut to the window.
func ListEvents(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, lq EventListQuery) (Paged[*Event], error) {
	f, err := lq.where(pq.Array(orgs))
	if err != nil {
		return Paged[*Event]{}, err
	}
	order := lq.order("e")
	f.args = append(f.args, lq.Window.Limit+1)
	limit := fmt.Sprintf(" LIMIT $%d", len(f.args))
	inner := `unnest($1::uuid[]) AS o(id) CROSS JOIN LATERAL (SELECT ` + eventColumns + ` FROM events e WHERE ` +
		strings.Join(f.where, " AND ") + order + limit + `) e`
	rows := []*Event{}
	if err := sqlx.SelectContext(ctx, q, &rows, fmt.Sprintf(eventDecorated, inner)+order+limit, f.args...); err != nil {
		return Paged[*Event]{}, mapErr(err)
	}
	return lq.window(rows), nil
}

// EventWindowsByCustomers returns one window of each customer's events, in key order, with
// the filters and order of ListEvents, in one statement. A customer's events are those whose
// customer it is (Event.ResolvedCustomerID): sent with its id, or sent with its external id
// while it is live. Each customer is read by two index-ordered scans cut to the window
// (events_customer_timestamp_idx and events_external_customer_timestamp_idx), so a window
// costs the same whatever the customer's history.
func EventWindowsByCustomers(ctx context.Context, q sqlx.ExtContext, orgs, customers []uuid.UUID, lq EventListQuery) ([]Paged[*Event], error) {
	f, err := lq.where(pq.Array(orgs), pq.Array(customers))
	if err != nil {
		return nil, err
	}
	order := lq.order("e")
	f.args = append(f.args, lq.Window.Limit+1)
	limit := fmt.Sprintf(" LIMIT $%d", len(f.args))
	where := strings.Join(f.where, " AND ")
	scan := func(owner string) string {
		return `(SELECT ` + eventColumns + ` FROM events e WHERE ` + owner + ` AND ` + where + order + limit + `)`
	}
	// Every event of a window is its customer's, so the window names the customer itself
	// instead of resolving external ids as eventDecorated does.
	query := `SELECT ` + eventColumns + `, e.resolved_customer_id, t.label AS type_label, t.label_property_selector
		FROM (SELECT cu.id AS customer_id, cu.organization_id AS id, cu.external_id, cu.deleted_at
			FROM customers cu WHERE cu.id = ANY($2) AND cu.organization_id = ANY($1)) o
		CROSS JOIN LATERAL (SELECT u.*, o.customer_id AS resolved_customer_id FROM (` +
		scan(`e.customer_id = o.customer_id`) + ` UNION ALL ` +
		scan(`e.customer_id IS NULL AND o.deleted_at IS NULL AND e.external_customer_id = o.external_id`) +
		`) u` + lq.order("u") + limit + `) e
		LEFT JOIN event_types t ON t.id = e.event_type_id` + order
	rows := []*Event{}
	if err := sqlx.SelectContext(ctx, q, &rows, query, f.args...); err != nil {
		return nil, mapErr(err)
	}
	grouped := groupBy(customers, rows, func(e *Event) uuid.UUID { return *e.ResolvedCustomerID })
	out := make([]Paged[*Event], len(customers))
	for i, g := range grouped {
		out[i] = lq.window(g)
	}
	return out, nil
}
