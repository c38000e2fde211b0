package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Event is a usage event: ingested (source 'user') or recorded by Till (source 'system').
// CreatedAt is when Till stored it (upstream's ingested_at), Timestamp when it happened.
type Event struct {
	ID                 uuid.UUID  `db:"id"`
	CreatedAt          time.Time  `db:"created_at"`
	Timestamp          time.Time  `db:"timestamp"`
	OrganizationID     uuid.UUID  `db:"organization_id"`
	Name               string     `db:"name"`
	Source             string     `db:"source"`
	CustomerID         *uuid.UUID `db:"customer_id"`
	ExternalCustomerID *string    `db:"external_customer_id"`
	MemberID           *uuid.UUID `db:"member_id"`
	ExternalMemberID   *string    `db:"external_member_id"`
	ExternalID         *string    `db:"external_id"`
	ParentID           *uuid.UUID `db:"parent_id"`
	RootID             *uuid.UUID `db:"root_id"`
	EventTypeID        *uuid.UUID `db:"event_type_id"`
	Metadata           JSONMap    `db:"metadata"`
	// ResolvedCustomerID is CustomerID, or for an event sent with an external customer id
	// the organization's live customer with that external id, when one exists: such events
	// are linked to customers when read, because the customer may be created after them.
	ResolvedCustomerID *uuid.UUID `db:"resolved_customer_id"`
	// TypeLabel and LabelPropertySelector come from the event's type, when it has one.
	TypeLabel             *string `db:"type_label"`
	LabelPropertySelector *string `db:"label_property_selector"`
}

// eventColumns are read inside the per-organization subquery aliased e.
const eventColumns = `e.id, e.created_at, e."timestamp", e.organization_id, e.name, e.source, e.customer_id,
	e.external_customer_id, e.member_id, e.external_member_id, e.external_id, e.parent_id, e.root_id,
	e.event_type_id, e.metadata`

// eventDecorated adds what an event is shown with to rows of e. The customer join runs on
// the page's rows only and uses customers_organization_external_id_key.
const eventDecorated = `SELECT ` + eventColumns + `, coalesce(e.customer_id, c.id) AS resolved_customer_id,
	t.label AS type_label, t.label_property_selector
	FROM %s
	LEFT JOIN customers c ON e.customer_id IS NULL AND c.organization_id = e.organization_id
		AND c.external_id = e.external_customer_id AND c.deleted_at IS NULL
	LEFT JOIN event_types t ON t.id = e.event_type_id`

// EventListFilter narrows an event list. Lists are OR-ed within a field, fields AND-ed; an
// empty list does not filter.
type EventListFilter struct {
	// CustomerIDs match events sent with one of these customers' ids or external ids.
	CustomerIDs []uuid.UUID
	// ExternalCustomerIDs match events sent with one of these external ids, or with the id of
	// the live customer that has one.
	ExternalCustomerIDs []string
	Names               []string
	Sources             []string
	// After and Before bound "timestamp", both strictly, as upstream's start/end_timestamp.
	After, Before *time.Time
	Metadata      map[string][]string
	ParentID      *uuid.UUID
}

// GetEvent reads one event of the organizations.
func GetEvent(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*Event, error) {
	var e Event
	err := sqlx.GetContext(ctx, q, &e, fmt.Sprintf(eventDecorated, "events e")+
		` WHERE e.id = $1 AND e.organization_id = ANY($2)`, id, pq.Array(orgs))
	return &e, mapErr(err)
}

// eventFilters adds the list filters. The customer filters follow upstream: an event belongs
// to a customer whether it was sent with the customer's id or with its external id.
func eventFilters(f *filters, lf EventListFilter) {
	if len(lf.CustomerIDs) > 0 {
		f.add(`(e.customer_id = ANY($%[1]d) OR e.external_customer_id IN (SELECT c.external_id FROM customers c
			WHERE c.id = ANY($%[1]d) AND c.organization_id = o.id AND c.deleted_at IS NULL))`, pq.Array(lf.CustomerIDs))
	}
	if len(lf.ExternalCustomerIDs) > 0 {
		f.add(`(e.external_customer_id = ANY($%[1]d) OR e.customer_id IN (SELECT c.id FROM customers c
			WHERE c.external_id = ANY($%[1]d) AND c.organization_id = o.id AND c.deleted_at IS NULL))`,
			pq.Array(lf.ExternalCustomerIDs))
	}
	equalOrAny(f, "e.name", lf.Names)
	equalOrAny(f, "e.source", lf.Sources)
	ifSet(f, `e."timestamp" > $%d`, lf.After)
	ifSet(f, `e."timestamp" < $%d`, lf.Before)
	ifSet(f, "e.parent_id = $%d", lf.ParentID)
	f.metadata("e.metadata", lf.Metadata)
}

// equalOrAny filters column to values like anyOf, but compares a single value with "=":
// PostgreSQL 15 cannot read an index in order under "= ANY(...)", and one event name is
// the common filter that events_organization_name_timestamp_idx serves in order.
func equalOrAny(f *filters, column string, values []string) {
	if len(values) == 1 {
		f.add(column+" = $%d", values[0])
		return
	}
	anyOf(f, column, values)
}

// afterCursor keeps the events strictly after position c in the reading order. The bound on
// "timestamp" alone is what the index can seek to; the id breaks ties between equal
// timestamps, so no event is skipped or repeated across pages.
func afterCursor(f *filters, c eventPosition, ascending bool) {
	cmp := "<"
	if ascending {
		cmp = ">"
	}
	f.args = append(f.args, c.Timestamp, c.ID)
	t, id := len(f.args)-1, len(f.args)
	f.where = append(f.where, fmt.Sprintf(`e."timestamp" %[1]s= $%[2]d AND (e."timestamp" %[1]s $%[2]d OR e.id %[1]s $%[3]d)`,
		cmp, t, id))
}
