package storage

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

const day = 24 * time.Hour

// utcDay is the start of the UTC day holding t.
func utcDay(t time.Time) time.Time { return t.UTC().Truncate(day) }

// span is a time range [lo, hi).
type span struct{ lo, hi time.Time }

// rollupPlan splits a quantity's window into the whole UTC days [first, end) read from
// meter_rollups, except the days in changed (Unix seconds), and the spans read from events:
// the partial days at both ends, the changed days and whatever lies past the rollups.
type rollupPlan struct {
	first, end time.Time
	changed    pq.Int64Array
	raw        []span
}

// planRollups reads how far the meter's rollups reach and which of their days have changed
// since, and plans [from, to) accordingly; nil means the rollups cannot serve any whole day
// of the window (none yet, computed with another definition, or the window holds no whole
// day). The quantity statement runs apart from this read: a refresh committing in between
// only replaces a day's rollup with a newer one, and each day is read from exactly one
// place, so nothing is counted twice or left out.
func planRollups(ctx context.Context, q sqlx.QueryerContext, m *Meter, from, to time.Time) (*rollupPlan, error) {
	plans, err := planMeterRollups(ctx, q, []*Meter{m}, from, to)
	if err != nil {
		return nil, err
	}
	return plans[0], nil
}

// planMeterRollups is planRollups for several meters in one statement, one plan per meter in
// order (nil where its rollups serve no whole day), so a read over many meters costs one
// round trip to plan.
func planMeterRollups(ctx context.Context, q sqlx.QueryerContext, meters []*Meter, from, to time.Time) ([]*rollupPlan, error) {
	plans := make([]*rollupPlan, len(meters))
	first, end := utcDay(from.Add(day-time.Nanosecond)), utcDay(to)
	if !first.Before(end) || len(meters) == 0 {
		return plans, nil
	}
	ids, orgs := make([]uuid.UUID, len(meters)), make([]uuid.UUID, len(meters))
	filters, aggregations := make(pq.StringArray, len(meters)), make(pq.StringArray, len(meters))
	for i, m := range meters {
		ids[i], orgs[i], filters[i], aggregations[i] = m.ID, m.OrganizationID, string(m.Filter), string(m.Aggregation)
	}
	var states []struct {
		I        int           `db:"i"`
		RolledTo time.Time     `db:"rolled_to"`
		Changed  pq.Int64Array `db:"changed"`
	}
	err := sqlx.SelectContext(ctx, q, &states, `SELECT k.i, s.rolled_to, coalesce((
			SELECT array_agg(DISTINCT extract(epoch FROM c.day)::bigint ORDER BY extract(epoch FROM c.day)::bigint)
			FROM event_day_changes c
			WHERE c.organization_id = k.organization_id AND c.day >= $5 AND c.day < least(s.rolled_to, $6)), '{}') AS changed
		FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[]) WITH ORDINALITY AS k(meter_id, organization_id, filter, aggregation, i)
		JOIN meter_rollup_states s ON s.meter_id = k.meter_id AND s.filter = k.filter::jsonb AND s.aggregation = k.aggregation::jsonb`,
		pq.Array(ids), pq.Array(orgs), filters, aggregations, first, end)
	if err != nil {
		return nil, mapErr(err)
	}
	for _, state := range states {
		plan := &rollupPlan{first: first, end: end}
		if rolled := utcDay(state.RolledTo); rolled.Before(plan.end) {
			plan.end = rolled
		}
		if !plan.first.Before(plan.end) {
			continue
		}
		plan.changed = state.Changed
		plan.raw = appendSpan(plan.raw, span{from, plan.first})
		for _, d := range state.Changed {
			lo := time.Unix(d, 0).UTC()
			plan.raw = appendSpan(plan.raw, span{lo, lo.Add(day)})
		}
		plan.raw = appendSpan(plan.raw, span{plan.end, to})
		plans[state.I-1] = plan
	}
	return plans, nil
}

// eventsPlan reads [from, to) wholly from the events, for a read the rollups cannot serve.
func eventsPlan(from, to time.Time) *rollupPlan {
	return &rollupPlan{raw: appendSpan(nil, span{from, to})}
}

// appendSpan adds s to spans sorted by time, joining it to the last when they touch and
// dropping it when empty.
func appendSpan(spans []span, s span) []span {
	if !s.lo.Before(s.hi) {
		return spans
	}
	if n := len(spans); n > 0 && !spans[n-1].hi.Before(s.lo) {
		if s.hi.After(spans[n-1].hi) {
			spans[n-1].hi = s.hi
		}
		return spans
	}
	return append(spans, s)
}

// plannedRows is what a read takes from the rows of a plan, the same columns in the same
// order after "timestamp" (each named by AS): columns of meter_rollups r with a condition
// on them, and columns of events e with the predicate events must meet. events is compiled
// only when the plan has spans of events, so its parameters are never left unused.
type plannedRows struct {
	rollups, rollupsWhere string
	events                func(p *sqlParams) (columns, where string, err error)
}

// plannedSource renders the rows of a plan aliased e: the rollups of its whole days for the
// customer, except the changed days, and the events of its raw spans, each span its own
// index-served branch.
func plannedSource(p *sqlParams, m *Meter, c *MeterCustomer, plan *rollupPlan, rows plannedRows) (string, error) {
	var parts []string
	if plan.first.Before(plan.end) {
		rollups := `SELECT r.day AS "timestamp", ` + rows.rollups +
			` FROM meter_rollups r WHERE r.meter_id = ` + p.add(m.ID, "uuid") +
			` AND r.day >= ` + p.add(plan.first, "timestamptz") + ` AND r.day < ` + p.add(plan.end, "timestamptz")
		if rows.rollupsWhere != "" {
			rollups += ` AND ` + rows.rollupsWhere
		}
		if len(plan.changed) > 0 {
			rollups += ` AND extract(epoch FROM r.day)::bigint <> ALL (` + p.add(plan.changed, "bigint[]") + `)`
		}
		parts = append(parts, rollups+rollupCustomer(p, c))
	}
	if len(plan.raw) > 0 {
		columns, where, err := rows.events(p)
		if err != nil {
			return "", err
		}
		for _, s := range plan.raw {
			parts = append(parts, `SELECT e."timestamp", `+columns+` FROM `+
				eventsSource(p, m.OrganizationID, c, p.add(s.lo, "timestamptz"), p.add(s.hi, "timestamptz"))+` WHERE `+where)
		}
	}
	return "(" + strings.Join(parts, "\n\tUNION ALL ") + ") e", nil
}

// rollupSource renders a quantity's rows as partial aggregates aliased e ("timestamp", n,
// total, minimum, maximum): the plan's rollup days that hold events entering the aggregate,
// and one row per event of the plan's raw spans (n = 1 and its value three times).
func rollupSource(p *sqlParams, m *Meter, f *MeterFilter, a *MeterAggregation, c *MeterCustomer, plan *rollupPlan) (string, error) {
	return plannedSource(p, m, c, plan, plannedRows{
		rollups:      `r.events::float8 AS n, r.total, r.minimum, r.maximum`,
		rollupsWhere: `r.events > 0`,
		events: func(p *sqlParams) (string, string, error) {
			value, where, err := meterValueSQL(f, a, p)
			return `1::float8 AS n, ` + value + ` AS total, ` + value + ` AS minimum, ` + value + ` AS maximum`, where, err
		},
	})
}

// rollupCustomer restricts rollups aliased r to a customer as eventsSource restricts
// events: by customer id, or by external id for rows not already matched by the id.
func rollupCustomer(p *sqlParams, c *MeterCustomer) string {
	if c == nil {
		return ""
	}
	var ors []string
	var id string
	if c.ID != uuid.Nil {
		id = p.add(c.ID, "uuid")
		ors = append(ors, "r.customer_id = "+id)
	}
	if c.ExternalID != nil {
		b := "r.external_customer_id = " + p.add(*c.ExternalID, "text")
		if id != "" {
			b += " AND r.customer_id IS DISTINCT FROM " + id
		}
		ors = append(ors, "("+b+")")
	}
	if len(ors) == 0 {
		return " AND false"
	}
	return " AND (" + strings.Join(ors, " OR ") + ")"
}

// RefreshMeterRollups brings every organization's meter rollups up to the UTC day of now:
// days changed since the last refresh are recomputed, new whole days are added, and a
// meter seen for the first time or whose definition changed is rebuilt from all its events.
// It returns how many meters it refreshed. Each organization is refreshed in its own
// transaction; one that another process is refreshing is skipped.
func RefreshMeterRollups(ctx context.Context, db *sqlx.DB, now time.Time) (int, error) {
	var orgs []uuid.UUID
	if err := sqlx.SelectContext(ctx, db, &orgs, `SELECT organization_id FROM meters
		UNION SELECT organization_id FROM event_day_changes`); err != nil {
		return 0, mapErr(err)
	}
	total := 0
	for _, org := range orgs {
		n, err := refreshOrganizationRollups(ctx, db, org, utcDay(now))
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// meterRollupRow is a meter with its rollup state, if any.
type meterRollupRow struct {
	Meter
	RolledTo *time.Time `db:"rolled_to"`
	Current  bool       `db:"current"`
}

// refreshOrganizationRollups runs in one REPEATABLE READ snapshot, so the changed days it
// deletes are exactly those whose events it reads: a batch committing meanwhile leaves its
// marks for the next refresh. Meter definitions are read in the same snapshot and stored
// with the rollups, so an edit committed meanwhile makes readers ignore these rollups.
func refreshOrganizationRollups(ctx context.Context, db *sqlx.DB, org uuid.UUID, today time.Time) (int, error) {
	tx, err := db.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	var locked bool
	if err := tx.GetContext(ctx, &locked, `SELECT pg_try_advisory_xact_lock(hashtextextended('till.meter_rollups.' || $1::text, 0))`, org); err != nil || !locked {
		return 0, mapErr(err)
	}
	var changed []int64
	if err := tx.SelectContext(ctx, &changed, `DELETE FROM event_day_changes WHERE organization_id = $1
		RETURNING extract(epoch FROM day)::bigint`, org); err != nil {
		return 0, mapErr(err)
	}
	slices.Sort(changed)
	changed = slices.Compact(changed)
	var meters []meterRollupRow
	if err := tx.SelectContext(ctx, &meters, `SELECT `+prefixed("m", meterColumns)+`, s.rolled_to,
			coalesce(s.filter = m.filter AND s.aggregation = m.aggregation, false) AS current
		FROM meters m LEFT JOIN meter_rollup_states s ON s.meter_id = m.id
		WHERE m.organization_id = $1 AND m.aggregation ->> 'func' <> 'unique' ORDER BY m.id`, org); err != nil {
		return 0, mapErr(err)
	}
	n := 0
	for i := range meters {
		done, err := refreshMeterRollups(ctx, tx, &meters[i], changed, today)
		if err != nil {
			return 0, err
		}
		if done {
			n++
		}
	}
	return n, tx.Commit()
}

// refreshMeterRollups recomputes the spans of one meter that are out of date and records
// how far its rollups now reach, reporting whether anything was recomputed.
func refreshMeterRollups(ctx context.Context, tx *sqlx.Tx, m *meterRollupRow, changed []int64, today time.Time) (bool, error) {
	var spans []span
	rolledTo := today
	switch {
	case m.RolledTo == nil || !m.Current:
		spans = []span{{time.Time{}, today}}
		if _, err := tx.ExecContext(ctx, `DELETE FROM meter_rollups WHERE meter_id = $1`, m.ID); err != nil {
			return false, mapErr(err)
		}
	default:
		if m.RolledTo.After(today) {
			rolledTo = *m.RolledTo
		}
		for _, d := range changed {
			if lo := time.Unix(d, 0).UTC(); lo.Before(*m.RolledTo) {
				spans = appendSpan(spans, span{lo, lo.Add(day)})
			}
		}
		spans = appendSpan(spans, span{*m.RolledTo, today})
		if len(spans) == 0 {
			return false, nil
		}
	}
	if err := rollUp(ctx, tx, m, spans); err != nil {
		return false, err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO meter_rollup_states (meter_id, rolled_to, filter, aggregation)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (meter_id) DO UPDATE SET rolled_to = EXCLUDED.rolled_to, filter = EXCLUDED.filter,
			aggregation = EXCLUDED.aggregation, refreshed_at = now()`,
		m.ID, rolledTo, m.Filter, m.Aggregation)
	return true, mapErr(err)
}

// rollUp replaces the meter's rollups of whole days within spans (day-aligned) by new ones
// computed from its events: a row per day and customer key that holds an event entering the
// aggregate or an event with a cost.
func rollUp(ctx context.Context, tx *sqlx.Tx, m *meterRollupRow, spans []span) error {
	f, a, err := meterDefinition(&m.Meter)
	if err != nil {
		return err
	}
	p := &sqlParams{}
	meter := p.add(m.ID, "uuid")
	var days, events []string
	for _, s := range spans {
		lo, hi := p.add(s.lo, "timestamptz"), p.add(s.hi, "timestamptz")
		days = append(days, "(day >= "+lo+" AND day < "+hi+")")
		events = append(events, `("timestamp" >= `+lo+` AND "timestamp" < `+hi+`)`)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM meter_rollups WHERE meter_id = `+meter+` AND (`+strings.Join(days, " OR ")+`)`, p.args...); err != nil {
		return mapErr(err)
	}
	value, pred, cond, err := meterParts(f, a, p)
	if err != nil {
		return err
	}
	// The filter alone selects the events: those that also meet the aggregation's condition
	// make the quantity columns, and every one with a cost makes the cost columns. The inner
	// select computes both once per event (OFFSET 0 keeps the planner from inlining them
	// into each aggregate that reads them).
	enters := ` FILTER (WHERE e.enters)`
	_, err = tx.ExecContext(ctx, `INSERT INTO meter_rollups (meter_id, day, customer_id, external_customer_id,
			events, total, minimum, maximum, costs, cost_events)
		SELECT `+meter+`, date_trunc('day', e."timestamp" AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
			e.customer_id, e.external_customer_id, count(*)`+enters+`, sum(`+value+`)`+enters+`,
			min(`+value+`)`+enters+`, max(`+value+`)`+enters+`, sum(e.cost), count(e.cost)
		FROM (SELECT e."timestamp", e.customer_id, e.external_customer_id, e.metadata, `+cond+` AS enters, `+eventCostSQL+` AS cost
			FROM events e
			WHERE e.organization_id = `+p.add(m.OrganizationID, "uuid")+` AND (`+strings.Join(events, " OR ")+`) AND `+pred+`
			OFFSET 0) e
		WHERE e.enters OR e.cost IS NOT NULL
		GROUP BY 2, 3, 4`, p.args...)
	return mapErr(err)
}
