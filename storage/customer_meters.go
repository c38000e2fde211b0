package storage

import (
	"context"
	"crypto/sha256"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// CustomerMeter is a customer's balance on one meter (the contract's CustomerMeter), computed
// when read rather than kept in customer_meters: what the customer consumed over all its
// events, against the units its meter_credit grants credit. A customer has one for each live
// meter of its organization that counts one of its events or that one of its live
// meter_credit grants credits.
type CustomerMeter struct {
	ID             uuid.UUID `db:"-"`
	OrganizationID uuid.UUID `db:"organization_id"`
	CustomerID     uuid.UUID `db:"customer_id"`
	MeterID        uuid.UUID `db:"meter_id"`
	// CreatedAt is the first change of the figures, ModifiedAt the latest: the ingestion of
	// an event counted, or the grant of a credit.
	CreatedAt     time.Time  `db:"created_at"`
	ModifiedAt    *time.Time `db:"modified_at"`
	ConsumedUnits float64    `db:"consumed_units"`
	CreditedUnits int64      `db:"credited_units"`
	Balance       float64    `db:"balance"`
	Meter         *Meter     `db:"meter"`
}

// CustomerMeterID is the id of a customer's meter, derived from the pair as
// SubscriptionMeterID is, so that the same balance keeps its id from read to read although
// no row holds it. Version 4 in form, as the contract's uuid4 fields expect.
func CustomerMeterID(customerID, meterID uuid.UUID) uuid.UUID {
	return uuid.NewHash(sha256.New(), customerID, append([]byte("customer_meter:"), meterID[:]...), 4)
}

// CustomerMeterListFilter narrows a customer's meters as upstream's customer meter lists do:
// MeterIDs to those meters (archived ones included, which are otherwise left out), Query to
// meters whose name contains it.
type CustomerMeterListFilter struct {
	MeterIDs []uuid.UUID
	Query    *string
}

// CustomerMeterSortColumns maps the sort properties of a customer's meters to SQL over
// CustomerMeterWindowsByCustomers' alias cm.
var CustomerMeterSortColumns = map[string]string{
	"created_at":     "cm.created_at",
	"modified_at":    "cm.modified_at",
	"meter_id":       "cm.meter_id",
	"meter_name":     "cm.meter_name",
	"consumed_units": "cm.consumed_units",
	"credited_units": "cm.credited_units",
	"balance":        "cm.balance",
}

// CustomerMeterWindowsByCustomers returns one window of each customer's meters, in key order,
// in two statements whatever the number of customers: one reads the meters of the given
// organizations the filter admits, the other computes every customer's figures on them and
// cuts the windows. Consumed units are each meter's aggregate over all the customer's events
// (sent with its id or its external id), read from the events rather than the daily rollups,
// so the second statement scans the customers' events once; credited units are the units of
// the customer's own live meter_credit grants (a seat member's are the member's), each grant
// counted once, which is MeterCredits over all time.
func CustomerMeterWindowsByCustomers(ctx context.Context, q sqlx.ExtContext, orgs, customers []uuid.UUID, f CustomerMeterListFilter,
	sorts []Sort, w Window) ([]Paged[*CustomerMeter], error) {
	meters, err := customerMeterMeters(ctx, q, orgs, f)
	if err != nil {
		return nil, err
	}
	if len(meters) == 0 {
		out := make([]Paged[*CustomerMeter], len(customers))
		for i := range out {
			out[i] = Paged[*CustomerMeter]{Items: []*CustomerMeter{}}
		}
		return out, nil
	}
	l, err := customerMeterList(orgs, customers, meters, sorts)
	if err != nil {
		return nil, err
	}
	out, err := listWindows(ctx, q, l, "cm.customer_id", customers, w, func(m *CustomerMeter) uuid.UUID { return m.CustomerID })
	for _, p := range out {
		for _, m := range p.Items {
			m.ID = CustomerMeterID(m.CustomerID, m.MeterID)
		}
	}
	return out, err
}

// customerMeterMeters reads the meters a customer meter list covers: the organizations'
// live meters, or the ones named (archived too), whose name contains the query.
func customerMeterMeters(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f CustomerMeterListFilter) ([]*Meter, error) {
	c := orgFilters("organization_id", orgs)
	if len(f.MeterIDs) > 0 {
		anyOf(c, "id", f.MeterIDs)
	} else {
		c.where = append(c.where, "archived_at IS NULL")
	}
	c.contains("name ILIKE $%d", f.Query)
	var meters []*Meter
	err := sqlx.SelectContext(ctx, q, &meters, `SELECT `+meterColumns+` FROM meters WHERE `+
		strings.Join(c.where, " AND ")+` ORDER BY created_at, id`, c.args...)
	return meters, mapErr(err)
}

// customerMeterList is the query of the customers' meters, aliased cm: a CTE of the
// customers (who), their events tagged with the customer they count for (src: by id, and by
// external id where the event names no other customer id, as eventsSource), one aggregate
// per meter over them (usage), the credits of their grants (credits), and the pairs with
// either, joined to their meter.
func customerMeterList(orgs, customers []uuid.UUID, meters []*Meter, sorts []Sort) (listSQL, error) {
	p := &sqlParams{}
	who := `SELECT c.id AS customer_id, c.organization_id, c.external_id FROM customers c
		WHERE c.id = ANY(` + p.add(pq.Array(customers), "uuid[]") + `) AND c.organization_id = ANY(` + p.add(pq.Array(orgs), "uuid[]") + `)`
	src := `SELECT w.customer_id AS meter_customer_id, e.* FROM who w
		JOIN events e ON e.customer_id = w.customer_id AND e.organization_id = w.organization_id
		UNION ALL
		SELECT w.customer_id, e.* FROM who w
		JOIN events e ON e.organization_id = w.organization_id AND e.external_customer_id = w.external_id
			AND e.customer_id IS DISTINCT FROM w.customer_id`
	usage := make([]string, len(meters))
	ids := make([]uuid.UUID, len(meters))
	for i, m := range meters {
		agg, where, err := meterSQL(m, p)
		if err != nil {
			return listSQL{}, err
		}
		ids[i] = m.ID
		usage[i] = `SELECT e.meter_customer_id AS customer_id, ` + p.add(m.ID, "uuid") + ` AS meter_id,
			coalesce((` + agg + `)::float8, 0) AS consumed, min(e.created_at) AS first_at, max(e.created_at) AS last_at
			FROM src e WHERE e.organization_id = ` + p.add(m.OrganizationID, "uuid") + ` AND ` + where + `
			GROUP BY e.meter_customer_id`
	}
	credits := `SELECT g.customer_id, (b.properties ->> 'meter_id')::uuid AS meter_id,
		sum((b.properties ->> 'units')::bigint)::bigint AS units, min(g.granted_at) AS first_at, max(g.granted_at) AS last_at
		FROM who w JOIN benefit_grants g ON g.customer_id = w.customer_id AND g.organization_id = w.organization_id
		JOIN benefits b ON b.id = g.benefit_id
		WHERE g.member_id IS NULL AND g.deleted_at IS NULL AND g.granted_at IS NOT NULL AND b.type = 'meter_credit'
		GROUP BY 1, 2`
	from := `(WITH who AS (` + who + `), src AS (` + src + `),
		usage AS (` + strings.Join(usage, "\n\t\tUNION ALL ") + `), credits AS (` + credits + `)
		SELECT x.customer_id, x.meter_id, w.organization_id, x.consumed_units, x.credited_units,
			x.credited_units - x.consumed_units AS balance, x.created_at, x.modified_at, m.name AS meter_name, ` + meterColumnsAs + `
		FROM (SELECT coalesce(u.customer_id, c.customer_id) AS customer_id, coalesce(u.meter_id, c.meter_id) AS meter_id,
				coalesce(u.consumed, 0)::float8 AS consumed_units, coalesce(c.units, 0)::bigint AS credited_units,
				least(u.first_at, c.first_at) AS created_at, greatest(u.last_at, c.last_at) AS modified_at
			FROM usage u FULL JOIN credits c ON c.customer_id = u.customer_id AND c.meter_id = u.meter_id) x
		JOIN who w ON w.customer_id = x.customer_id
		JOIN meters m ON m.id = x.meter_id AND m.organization_id = w.organization_id
			AND m.id = ANY(` + p.add(pq.Array(ids), "uuid[]") + `)) cm`
	return listSQL{Columns: "cm.*", From: from, ID: "cm.meter_id", Args: p.args, Sorts: sorts,
		Default: []Sort{{Column: "cm.modified_at", Desc: true}}}, nil
}
