package storage

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// eventCostSQL is the cost of the event aliased e as numeric, NULL when it carries none
// (event_cost, migration 00100_metric_costs, says which amounts count). It holds no
// parameters, so it can be repeated freely.
const eventCostSQL = `event_cost(e.metadata)`

// MeterCostRead is one meter of a MeterCostSeries and whose events it covers; a nil
// Customer means every event of the meter's organization.
type MeterCostRead struct {
	Meter    *Meter
	Customer *MeterCustomer
}

// MeterCostAt is one bucket of a meter's costs.
type MeterCostAt struct {
	Timestamp time.Time
	// Costs sums the amounts, in cents.
	Costs float64
	// Events counts the events that carried a cost.
	Events int64
}

// MeterCosts is what a meter's events cost per bucket and over the whole window.
type MeterCosts struct {
	Meter *Meter
	Costs []MeterCostAt
	Total float64
}

// MeterCostSeries sums the cost of each meter's events with a timestamp in [from, to) per
// bucket of interval, in buckets aligned as MeterQuantitySeries aligns them. A meter's events
// are those its filter selects, whatever its aggregation: an event that lacks the summed
// property still cost something. Day, week and month buckets read whole days from the
// meters' rollups where they can, planned for all the meters at once; the sums are exact
// decimals until they are read, so the rollups change no digit. One statement answers for
// every meter, in the order given.
func MeterCostSeries(ctx context.Context, q sqlx.ExtContext, reads []MeterCostRead, from, to time.Time, interval string) ([]*MeterCosts, error) {
	return meterCostSeries(ctx, q, reads, from, to, interval, interval != "hour")
}

func meterCostSeries(ctx context.Context, q sqlx.ExtContext, reads []MeterCostRead, from, to time.Time, interval string, daily bool) ([]*MeterCosts, error) {
	if !validInterval(interval) {
		return nil, errors.New("storage: meter interval " + strconv.Quote(interval))
	}
	out := make([]*MeterCosts, len(reads))
	if len(reads) == 0 {
		return out, nil
	}
	meters := make([]*Meter, len(reads))
	for i, r := range reads {
		meters[i] = r.Meter
	}
	plans := make([]*rollupPlan, len(reads))
	if daily {
		var err error
		if plans, err = planMeterRollups(ctx, q, meters, from, to); err != nil {
			return nil, err
		}
	}
	p := &sqlParams{}
	sources := make([]string, len(reads))
	for i, r := range reads {
		src, err := costSource(p, r, plans[i], from, to)
		if err != nil {
			return nil, err
		}
		sources[i] = `SELECT ` + strconv.Itoa(i) + ` AS meter, e."timestamp", e.costs, e.events FROM ` + src
	}
	unit, step := p.add(interval, "text"), p.add("1 "+interval, "interval")
	lo, hi := p.add(from, "timestamptz"), p.add(to, "timestamptz")
	bucket := `date_trunc(` + unit + `, c."timestamp" AT TIME ZONE 'UTC')`
	query := `WITH buckets AS (
		SELECT g FROM generate_series(date_trunc(` + unit + `, ` + lo + ` AT TIME ZONE 'UTC'),
			` + hi + ` AT TIME ZONE 'UTC', ` + step + `) g
		WHERE g < ` + hi + ` AT TIME ZONE 'UTC'),
	costs AS (` + strings.Join(sources, "\n\tUNION ALL ") + `),
	sums AS (
		SELECT c.meter, ` + bucket + ` AS g, sum(c.costs) AS costs, sum(c.events) AS events,
			grouping(` + bucket + `) = 1 AS total
		FROM costs c
		GROUP BY GROUPING SETS ((c.meter, ` + bucket + `), (c.meter)))
	SELECT m.meter, b.g AT TIME ZONE 'UTC' AS "timestamp", coalesce(s.costs, 0)::float8 AS costs,
		coalesce(s.events, 0)::bigint AS events
	FROM generate_series(0, ` + strconv.Itoa(len(reads)-1) + `) m(meter) CROSS JOIN buckets b
		LEFT JOIN sums s ON s.meter = m.meter AND s.g = b.g AND NOT s.total
	UNION ALL
	SELECT meter, NULL, coalesce(costs, 0)::float8, events::bigint FROM sums WHERE total
	ORDER BY 1, 2 NULLS LAST`
	var rows []struct {
		Meter     int        `db:"meter"`
		Timestamp *time.Time `db:"timestamp"`
		Costs     float64    `db:"costs"`
		Events    int64      `db:"events"`
	}
	if err := sqlx.SelectContext(ctx, q, &rows, query, p.args...); err != nil {
		return nil, mapErr(err)
	}
	for i, r := range reads {
		out[i] = &MeterCosts{Meter: r.Meter, Costs: []MeterCostAt{}}
	}
	for _, r := range rows {
		c := out[r.Meter]
		if r.Timestamp == nil {
			c.Total = r.Costs
			continue
		}
		c.Costs = append(c.Costs, MeterCostAt{Timestamp: r.Timestamp.UTC(), Costs: r.Costs, Events: r.Events})
	}
	return out, nil
}

// costSource renders a meter's costed rows aliased e ("timestamp", costs, events): the
// plan's rollup days with a cost, and each costed event of its raw spans; with no plan,
// every row is an event.
func costSource(p *sqlParams, r MeterCostRead, plan *rollupPlan, from, to time.Time) (string, error) {
	if plan == nil {
		plan = eventsPlan(from, to)
	}
	return plannedSource(p, r.Meter, r.Customer, plan, plannedRows{
		rollups:      `r.costs, r.cost_events AS events`,
		rollupsWhere: `r.cost_events > 0`,
		events: func(p *sqlParams) (string, string, error) {
			f, err := ParseMeterFilter(r.Meter.Filter)
			if err != nil {
				return "", "", err
			}
			pred, err := f.SQL(p)
			return eventCostSQL + ` AS costs, 1::bigint AS events`, pred + ` AND ` + eventCostSQL + ` IS NOT NULL`, err
		},
	})
}
