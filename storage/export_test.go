package storage

import (
	"context"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// ExplainMeterQuantity runs MeterQuantity's statement under EXPLAIN (ANALYZE, BUFFERS) and
// returns the plan, to check on a real database that each customer branch uses its index.
func ExplainMeterQuantity(ctx context.Context, q sqlx.ExtContext, m *Meter, customer MeterCustomer, from, to time.Time) (string, error) {
	query, args, err := meterTotalSQL(ctx, q, m, &customer, from, to)
	if err != nil {
		return "", err
	}
	var lines []string
	if err := sqlx.SelectContext(ctx, q, &lines, "EXPLAIN (ANALYZE, BUFFERS) "+query, args...); err != nil {
		return "", mapErr(err)
	}
	return strings.Join(lines, "\n"), nil
}

// ExplainMetrics runs Metrics' statement under EXPLAIN (ANALYZE, BUFFERS) and returns the plan,
// to see where a read spends its time.
func ExplainMetrics(ctx context.Context, q sqlx.ExtContext, f MetricsFilter) (string, error) {
	query, args, err := metricsStatement(f, metricsSourcesOf(f))
	if err != nil {
		return "", err
	}
	var lines []string
	err = sqlx.SelectContext(ctx, q, &lines, "EXPLAIN (ANALYZE, BUFFERS) "+query, args...)
	return strings.Join(lines, "\n"), mapErr(err)
}

// MeterQuantityFromEvents is MeterQuantity read from the events alone, never from rollups:
// the reference the rollup path must equal.
func MeterQuantityFromEvents(ctx context.Context, q sqlx.ExtContext, m *Meter, c *MeterCustomer, from, to time.Time) (float64, error) {
	p := &sqlParams{}
	src, agg, err := quantitySource(ctx, q, p, m, c, from, to, false)
	if err != nil {
		return 0, err
	}
	var v float64
	err = sqlx.GetContext(ctx, q, &v, "SELECT coalesce(("+agg+")::float8, 0) FROM "+src, p.args...)
	return v, mapErr(err)
}

// MeterQuantitySeriesFromEvents is MeterQuantitySeries read from the events alone.
func MeterQuantitySeriesFromEvents(ctx context.Context, q sqlx.ExtContext, m *Meter, c *MeterCustomer, from, to time.Time, interval string) (*MeterQuantities, error) {
	return meterQuantitySeries(ctx, q, m, c, from, to, interval, false)
}

// MeterRollupPlan tells which whole days [first, end) of a window a quantity reads from the
// meter's rollups, and which of them it reads from events instead because they changed;
// ok is false when it reads no rollups at all.
func MeterRollupPlan(ctx context.Context, q sqlx.QueryerContext, m *Meter, from, to time.Time) (first, end time.Time, changed []int64, ok bool, err error) {
	plan, err := planRollups(ctx, q, m, from, to)
	if err != nil || plan == nil {
		return time.Time{}, time.Time{}, nil, false, err
	}
	return plan.first, plan.end, plan.changed, true, nil
}

// MapErr is mapErr, for the tests of what driver errors become.
var MapErr = mapErr

// RecordColumns are the column lists that the batch loaders read and prefetches carry, by
// table, for tests that compare the two reads.
var RecordColumns = map[string]string{
	"customers": customerColumns, "products": productColumns, "discounts": discountColumns,
	"subscriptions": subscriptionColumns, "order_items": orderItemColumns,
}

// DecodeRecord is decodeRecord, for tests.
func DecodeRecord[T any](raw []byte, loc *time.Location) (*T, error) {
	return decodeRecord[T](raw, loc)
}

// DecodeRecords is decodeRecords, for tests.
func DecodeRecords[T any](raw []byte, loc *time.Location) ([]*T, error) {
	return decodeRecords[T](raw, loc)
}

// Update is what every update struct is, for tests that go over all of them.
type Update = update

// Assignment is one column an update writes and the value it hands the driver.
type Assignment struct {
	Column string
	Value  any
}

// Declared lists every column u may write, in field order, set or not.
func Declared(u Update) []string {
	var cols []string
	for _, a := range u.assignments() {
		cols = append(cols, a.column)
	}
	return cols
}

// Assigned lists the columns u writes, with their values.
func Assigned(u Update) []Assignment {
	var out []Assignment
	for _, a := range u.assignments() {
		if a.set {
			out = append(out, Assignment{a.column, a.value})
		}
	}
	return out
}

// Touched is o set to the value it holds, so a test can set each field of an update struct
// in turn through reflection without knowing its type.
func (o Omittable[T]) Touched() Omittable[T] {
	o.set = true
	return o
}

// MeterCostSeriesFromEvents is MeterCostSeries read from the events alone, never from
// rollups: the reference the rollup path must equal.
func MeterCostSeriesFromEvents(ctx context.Context, q sqlx.ExtContext, reads []MeterCostRead, from, to time.Time, interval string) ([]*MeterCosts, error) {
	return meterCostSeries(ctx, q, reads, from, to, interval, false)
}

// MetricsFromBase is Metrics read from the base tables alone, as for customers but of all of
// them: the reference the rollup paths must equal.
func MetricsFromBase(ctx context.Context, q sqlx.ExtContext, f MetricsFilter) ([]MetricsPoint, error) {
	src := metricsSources{flows: metricsFlowsBase, deltas: metricsDeltasBase, flowsBefore: metricsFlowsBeforeRollups,
		subscribers: metricsSubscribersBase}
	if f.Customers != nil {
		src.flowsBefore = metricsFlowsBeforeBase
	}
	return metricsFrom(ctx, q, f, src)
}

// MetricsCalendar is metricsCalendarOf's days that are not whole, as [start, stop) pairs,
// and its runs of whole days, as (alignment, first day's start, last day's start).
func MetricsCalendar(from, to time.Time, loc *time.Location) (parts [][2]time.Time, runs []MetricsRun) {
	c := metricsCalendarOf(from, to, loc)
	for i := range c.partStarts {
		parts = append(parts, [2]time.Time{c.partStarts[i], c.partStops[i]})
	}
	for i := range c.runAligns {
		runs = append(runs, MetricsRun{Align: c.runAligns[i], First: c.runFirsts[i], Last: c.runLasts[i]})
	}
	return parts, runs
}

// MetricsRun is a run of whole days of one alignment.
type MetricsRun struct {
	Align       int16
	First, Last time.Time
}
