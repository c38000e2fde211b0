package storage

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// MeterAggregation turns a meter's events into one number, in upstream's JSON shape
// ({"func": "count"}, {"func": "sum", "property": "tokens"}).
type MeterAggregation struct {
	Func     string `json:"func"`
	Property string `json:"property,omitempty"`
}

// Aggregation functions, spelled as upstream's AggregationFunction.
const (
	AggregationCount  = "count"
	AggregationSum    = "sum"
	AggregationMax    = "max"
	AggregationMin    = "min"
	AggregationAvg    = "avg"
	AggregationUnique = "unique"
)

// ParseMeterAggregation decodes and validates a stored or submitted aggregation.
func ParseMeterAggregation(b []byte) (*MeterAggregation, error) {
	var a MeterAggregation
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, filterErr("invalid aggregation: " + err.Error())
	}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return &a, nil
}

// Validate checks the function and that every function but count names a property;
// "metadata.tokens" is normalized to "tokens" as upstream stores it. Count has no property.
func (a *MeterAggregation) Validate() error {
	switch a.Func {
	case AggregationCount:
		a.Property = ""
		return nil
	case AggregationSum, AggregationMax, AggregationMin, AggregationAvg, AggregationUnique:
	default:
		return filterErr("func must be one of count, sum, max, min, avg, unique", "func")
	}
	a.Property = strings.TrimPrefix(a.Property, "metadata.")
	if a.Property == "" {
		return filterErr("property is required for "+a.Func, "property")
	}
	return nil
}

// value compiles the number an event contributes to the aggregate (NULL for count) and the
// condition rows must meet to enter it, as upstream's get_sql_column and get_sql_clause:
// numeric functions read a metadata number (rows where it is not a number are left out) or
// the timestamp as epoch seconds, never name or source. Unique has no value of its own; it
// counts distinct metadata values (see sql).
func (a MeterAggregation) value(p *sqlParams) (value, where string, err error) {
	switch a.Func {
	case AggregationCount:
		return "NULL::float8", "true", nil
	case AggregationSum, AggregationMax, AggregationMin, AggregationAvg:
	default:
		return "", "", errors.New("storage: meter aggregation " + strconv.Quote(a.Func))
	}
	switch a.Property {
	case "name", "source":
		return "NULL::float8", "false", nil
	case "timestamp":
		return `extract(epoch FROM e."timestamp")::bigint::float8`, "true", nil
	}
	k := p.add(a.Property, "text")
	return "least(greatest((e.metadata ->> " + k + ")::float8, " + meterValueBound + "), " + meterValueBound[1:] + ")",
		"jsonb_typeof(e.metadata -> " + k + ") = 'number'", nil
}

// meterValueBound (and its negation) bounds the number one event contributes. Ingestion takes
// any finite number, up to 1.8e308, and two such events would overflow a float8 sum or
// average: PostgreSQL then refuses the whole statement, which breaks a meter's figures for
// every customer counted with the offender. At 1e280 a sum stays finite over more events
// than a bigint can count.
const meterValueBound = "-1e280"

// sql compiles the aggregate over events aliased e and the condition rows must meet to
// enter it.
func (a MeterAggregation) sql(p *sqlParams) (agg, where string, err error) {
	if a.Func == AggregationUnique {
		return "count(DISTINCT e.metadata -> " + p.add(a.Property, "text") + ")", "true", nil
	}
	v, where, err := a.value(p)
	if err != nil {
		return "", "", err
	}
	switch a.Func {
	case AggregationCount:
		return "count(*)", where, nil
	case AggregationAvg:
		// PostgreSQL's avg(float8) also sums squares, which overflow long before the sum.
		return "sum(" + v + ") / nullif(count(" + v + "), 0)", where, nil
	}
	return a.Func + "(" + v + ")", where, nil
}

// rollable tells whether the aggregate combines from partial aggregates (see
// meter_rollups); unique does not, since distinct values of two days may repeat.
func (a MeterAggregation) rollable() bool { return a.Func != AggregationUnique }

// combine is the aggregate over partial rows aliased e (n events, total, minimum, maximum
// of their values), equal to the aggregate over the events themselves.
func (a MeterAggregation) combine() string {
	switch a.Func {
	case AggregationCount:
		return "sum(e.n)"
	case AggregationSum:
		return "sum(e.total)"
	case AggregationMax:
		return "max(e.maximum)"
	case AggregationMin:
		return "min(e.minimum)"
	}
	return "sum(e.total) / nullif(sum(e.n), 0)"
}

// meterSQL compiles a meter's aggregate and the predicate (filter and aggregation
// condition) its events must meet.
func meterSQL(m *Meter, p *sqlParams) (agg, where string, err error) {
	f, a, err := meterDefinition(m)
	if err != nil {
		return "", "", err
	}
	pred, err := f.SQL(p)
	if err != nil {
		return "", "", err
	}
	agg, cond, err := a.sql(p)
	if err != nil {
		return "", "", err
	}
	return agg, pred + " AND " + cond, nil
}

// meterValueSQL compiles the value each event of the meter contributes and the predicate
// (filter and aggregation condition) its events must meet.
func meterValueSQL(f *MeterFilter, a *MeterAggregation, p *sqlParams) (value, where string, err error) {
	value, pred, cond, err := meterParts(f, a, p)
	if err != nil {
		return "", "", err
	}
	return value, pred + " AND " + cond, nil
}

// meterParts compiles the value each event of the meter contributes, the filter's predicate
// and the aggregation's condition apart: an event the filter selects counts for costs even
// when it does not enter the aggregate.
func meterParts(f *MeterFilter, a *MeterAggregation, p *sqlParams) (value, pred, cond string, err error) {
	if pred, err = f.SQL(p); err != nil {
		return "", "", "", err
	}
	value, cond, err = a.value(p)
	return value, pred, cond, err
}

func meterDefinition(m *Meter) (*MeterFilter, *MeterAggregation, error) {
	f, err := ParseMeterFilter(m.Filter)
	if err != nil {
		return nil, nil, err
	}
	a, err := ParseMeterAggregation(m.Aggregation)
	if err != nil {
		return nil, nil, err
	}
	return f, a, nil
}

// MeterCustomer names whose events a quantity covers: events sent with the customer's id,
// and events sent with its external id in its organization (which may arrive before the
// customer exists, so ID may be uuid.Nil when only the external id is known).
type MeterCustomer struct {
	OrganizationID, ID uuid.UUID
	ExternalID         *string
}

// eventsSource renders the events a quantity reads, aliased e, restricted to the meter's
// organization and to [lo, hi) (SQL expressions). For a customer it is a UNION ALL of two
// branches, one per way an event names its customer, each served by its own index
// ((customer_id, "timestamp") and (organization_id, external_customer_id, "timestamp"));
// the second branch leaves out events the first already holds, so every event appears once
// and any aggregate over the union (avg, unique, min, max included) is exact.
func eventsSource(p *sqlParams, orgID uuid.UUID, c *MeterCustomer, lo, hi string) string {
	org := p.add(orgID, "uuid")
	window := `"timestamp" >= ` + lo + ` AND "timestamp" < ` + hi
	if c == nil {
		return "(SELECT * FROM events WHERE organization_id = " + org + " AND " + window + ") e"
	}
	var branches []string
	var id string
	if c.ID != uuid.Nil {
		id = p.add(c.ID, "uuid")
		branches = append(branches, "SELECT * FROM events WHERE customer_id = "+id+" AND organization_id = "+org+" AND "+window)
	}
	if c.ExternalID != nil {
		b := "SELECT * FROM events WHERE organization_id = " + org + " AND external_customer_id = " + p.add(*c.ExternalID, "text") + " AND " + window
		if id != "" {
			b += " AND customer_id IS DISTINCT FROM " + id
		}
		branches = append(branches, b)
	}
	if len(branches) == 0 {
		return "(SELECT * FROM events WHERE false AND organization_id = " + org + " AND " + window + ") e"
	}
	return "(" + strings.Join(branches, " UNION ALL ") + ") e"
}

// MeterQuantity is the meter's aggregate over the customer's events with a timestamp in
// [from, to), 0 when none match. Subscription billing calls it for each metered price.
func MeterQuantity(ctx context.Context, q sqlx.ExtContext, m *Meter, customer MeterCustomer, from, to time.Time) (float64, error) {
	query, args, err := meterTotalSQL(ctx, q, m, &customer, from, to)
	if err != nil {
		return 0, err
	}
	var v float64
	err = sqlx.GetContext(ctx, q, &v, query, args...)
	return v, mapErr(err)
}

func meterTotalSQL(ctx context.Context, q sqlx.QueryerContext, m *Meter, c *MeterCustomer, from, to time.Time) (string, []any, error) {
	p := &sqlParams{}
	src, agg, err := quantitySource(ctx, q, p, m, c, from, to, true)
	if err != nil {
		return "", nil, err
	}
	return "SELECT coalesce((" + agg + ")::float8, 0) FROM " + src, p.args, nil
}

// quantitySource renders the rows a quantity aggregates, aliased e with a "timestamp"
// column, and the aggregate over them. With daily true, whole UTC days the meter's rollups
// hold (see planRollups) come from meter_rollups and the rest of the window from the
// events, as partial aggregates combined at the end; otherwise every row is an event.
func quantitySource(ctx context.Context, q sqlx.QueryerContext, p *sqlParams, m *Meter, c *MeterCustomer, from, to time.Time, daily bool) (src, agg string, err error) {
	f, a, err := meterDefinition(m)
	if err != nil {
		return "", "", err
	}
	if daily && a.rollable() {
		plan, err := planRollups(ctx, q, m, from, to)
		if err != nil {
			return "", "", err
		}
		if plan != nil {
			src, err := rollupSource(p, m, f, a, c, plan)
			return src, a.combine(), err
		}
	}
	events := eventsSource(p, m.OrganizationID, c, p.add(from, "timestamptz"), p.add(to, "timestamptz"))
	agg, where, err := meterSQL(m, p)
	if err != nil {
		return "", "", err
	}
	return "(SELECT e.* FROM " + events + " WHERE " + where + ") e", agg, nil
}

// MeterQuantityAt is one bucket of a meter's quantities.
type MeterQuantityAt struct {
	Timestamp time.Time `db:"timestamp"`
	Quantity  float64   `db:"quantity"`
}

// MeterQuantities is a meter's aggregate per bucket and over the whole window.
type MeterQuantities struct {
	Quantities []MeterQuantityAt
	Total      float64
}

// MeterIntervals are the bucket sizes of MeterQuantitySeries, as upstream's TimeInterval.
var MeterIntervals = []string{"hour", "day", "week", "month"}

// MeterQuantitySeries aggregates the meter's events with a timestamp in [from, to) per
// bucket of interval (hour, day, week or month), buckets aligned to UTC calendar boundaries
// starting with the one holding from; empty buckets are 0. An event counts in the bucket of
// its own timestamp, whenever it was ingested. c nil means all the organization's events.
// Total aggregates the whole window at once (not a sum of buckets), so it is right for avg
// and unique too. Buckets and total come from one scan, through GROUPING SETS. Day, week
// and month buckets read whole days from the meter's rollups where they can.
func MeterQuantitySeries(ctx context.Context, q sqlx.ExtContext, m *Meter, c *MeterCustomer, from, to time.Time, interval string) (*MeterQuantities, error) {
	return meterQuantitySeries(ctx, q, m, c, from, to, interval, interval != "hour")
}

func meterQuantitySeries(ctx context.Context, q sqlx.ExtContext, m *Meter, c *MeterCustomer, from, to time.Time, interval string, daily bool) (*MeterQuantities, error) {
	if !validInterval(interval) {
		return nil, errors.New("storage: meter interval " + strconv.Quote(interval))
	}
	p := &sqlParams{}
	src, agg, err := quantitySource(ctx, q, p, m, c, from, to, daily)
	if err != nil {
		return nil, err
	}
	unit, step := p.add(interval, "text"), p.add("1 "+interval, "interval")
	lo, hi := p.add(from, "timestamptz"), p.add(to, "timestamptz")
	query := `WITH buckets AS (
		SELECT g FROM generate_series(date_trunc(` + unit + `, ` + lo + ` AT TIME ZONE 'UTC'),
			` + hi + ` AT TIME ZONE 'UTC', ` + step + `) g
		WHERE g < ` + hi + ` AT TIME ZONE 'UTC'),
	sums AS (
		SELECT date_trunc(` + unit + `, e."timestamp" AT TIME ZONE 'UTC') AS g, (` + agg + `)::float8 AS quantity,
			grouping(date_trunc(` + unit + `, e."timestamp" AT TIME ZONE 'UTC')) = 1 AS total
		FROM ` + src + `
		GROUP BY GROUPING SETS ((date_trunc(` + unit + `, e."timestamp" AT TIME ZONE 'UTC')), ()))
	SELECT b.g AT TIME ZONE 'UTC' AS "timestamp", coalesce(s.quantity, 0) AS quantity
	FROM buckets b LEFT JOIN sums s ON s.g = b.g AND NOT s.total
	UNION ALL
	SELECT NULL, coalesce((SELECT quantity FROM sums WHERE total), 0)
	ORDER BY 1 NULLS LAST`
	var rows []struct {
		Timestamp *time.Time `db:"timestamp"`
		Quantity  float64    `db:"quantity"`
	}
	if err := sqlx.SelectContext(ctx, q, &rows, query, p.args...); err != nil {
		return nil, mapErr(err)
	}
	out := &MeterQuantities{Quantities: make([]MeterQuantityAt, 0, len(rows))}
	for _, r := range rows {
		if r.Timestamp == nil {
			out.Total = r.Quantity
			continue
		}
		out.Quantities = append(out.Quantities, MeterQuantityAt{Timestamp: r.Timestamp.UTC(), Quantity: r.Quantity})
	}
	return out, nil
}

func validInterval(s string) bool {
	for _, v := range MeterIntervals {
		if v == s {
			return true
		}
	}
	return false
}
