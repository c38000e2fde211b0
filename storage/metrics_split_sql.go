package storage

import (
	"fmt"
	"strings"
)

// A zone whose offset is not whole hours (Asia/Kolkata +5:30, Asia/Kathmandu +5:45,
// America/St_Johns, Australia/Adelaide) cuts its days inside the UTC hours the rollups hold.
// Its points of a day or longer are still read from the rollups, plus one small piece of the
// part of the hour before each cut that falls inside an hour. With ⌊x⌋ the UTC hour x falls
// in, R(a, b) the rollups' rows of the whole hours [a, b) and P(x) what [⌊x⌋, x) holds (15,
// 30 or 45 minutes), a local day [s, e) is
//
//	R(⌊s⌋, ⌊e⌋) − P(s) + P(e)
//
// R of an ordinary day is 24 hours: one daily row (metric_days, of the alignment of ⌊s⌋); of
// a day of a daylight saving time change it is its hourly rows. Taking R from ⌊s⌋ rather than
// from the next whole hour makes it one daily row with nothing to subtract, at the price of
// the piece before s, which the day before adds anyway: each piece is read once and counts
// twice, added to the day it ends and taken from the day it begins, so that over a week or a
// month the pieces inside it cancel out. The window's first piece is taken from its first day
// and, for the stock, added to the stock before the window; its last piece is added to its
// last day. A cut on a whole hour (Lord Howe's midnights in its summer, a window ending on
// the hour) has no piece.
//
// Each row is given a time (its hour column) inside the day it counts in, and the series
// buckets it into its period by that time alone: a rollup row of the hour h (or of the day
// starting at h) the last microsecond of h, which lies in the day whose R holds h; a piece at
// x is added at x less a microsecond and taken at x. So no row is joined to its day but the
// hourly rows of the days that are not 24 hours.
//
// P(x) comes from the quarter-hour rollups (migration 00112_metric_quarters) and the unfolded
// changes, which writers append per quarter: one to three quarter rows a product. A cut that
// is not on a quarter hour (an offset of local mean time, before 1972) reads P(x) from the
// base tables instead: every kind of time a flow or a stock change is put at, within [⌊x⌋, x).
//
// Readers with customers and hourly points keep the base tables (metricsFlowsBase): the
// rollups do not split by customer, and a week of hours cut at every hour would be all
// pieces.

// metricsSplitCuts are the CTEs the split sources read: days are the window's local days as
// UTC instants; cuts are those days with the whole hours [lo, hi) their rollup part covers,
// whole when that is one daily row; cut_runs group the whole ones into runs of one alignment
// as metricsCalendarOf does for whole-hour zones; cut_points are the cuts inside an hour, each with the
// hour it falls in. A split read is mostly its pieces, so its days are cut here rather than
// passed in (metricsCalendar).
const metricsSplitCuts = `, days AS (
		SELECT CASE WHEN l = b.first THEN $2 ELSE l AT TIME ZONE $7 END AS start,
			CASE WHEN l = b.last THEN $3 ELSE (l + interval '1 day') AT TIME ZONE $7 END AS stop
		FROM (SELECT date_trunc('day', $2::timestamptz AT TIME ZONE $7) AS first,
			date_trunc('day', ($3::timestamptz - interval '1 microsecond') AT TIME ZONE $7) AS last) b,
			generate_series(b.first, b.last, interval '1 day') l
	), cuts AS (
		SELECT lo, hi, hi - lo = interval '24 hours' AS whole, extract(hour FROM lo AT TIME ZONE 'UTC')::smallint AS align
		FROM (SELECT date_trunc('hour', start, 'UTC') AS lo, date_trunc('hour', stop, 'UTC') AS hi FROM days) d
	), cut_runs AS (
		SELECT align, min(lo) AS first, max(lo) AS last
		FROM (SELECT align, lo, lo - row_number() OVER (PARTITION BY align ORDER BY lo) * interval '24 hours' AS run
			FROM cuts WHERE whole) w
		GROUP BY align, run
	), cut_points AS (
		SELECT x, date_trunc('hour', x, 'UTC') AS lo
		FROM (SELECT start AS x FROM days UNION SELECT $3::timestamptz) b
		WHERE x <> date_trunc('hour', x, 'UTC')
	)`

// metricsQuarterPieces are a piece [lo, x) of cut_points from the quarter rollups of a
// table (its %[1]s) and their unfolded changes (%[2]s), when every cut is on a quarter hour.
const metricsQuarterPieces = `SELECT m.* FROM %[1]s m
				WHERE m.organization_id = ANY($1) AND m.hour >= b.lo AND m.hour < b.x
			UNION ALL SELECT m.* FROM %[2]s m
				WHERE m.organization_id = ANY($1) AND m.hour >= b.lo AND m.hour < b.x`

// metricsFlowPieces are the base tables' flows in each piece [lo, x) of cut_points, read
// through the (organization_id, time) indexes of each time a flow is put at (migration
// 00110_metric_piece_indexes).
const metricsFlowPieces = `SELECT c.* FROM orders r, metric_order_contribution(r, 1) c
				WHERE r.organization_id = ANY($1) AND r.created_at >= b.lo AND r.created_at < b.x
			UNION ALL SELECT c.* FROM checkouts r, metric_checkout_contribution(r, 1) c
				WHERE r.organization_id = ANY($1) AND r.created_at >= b.lo AND r.created_at < b.x
			UNION ALL SELECT c.* FROM subscriptions r, metric_subscription_contribution(r, 1) c
				WHERE r.organization_id = ANY($1) AND (r.canceled_at >= b.lo AND r.canceled_at < b.x
					OR r.ended_at >= b.lo AND r.ended_at < b.x)`

// metricsDeltaPieces are the base tables' stock changes in each piece: a subscription changes
// the stock at its start, at the end of its trial, at its end, and when it is set to end
// (metric_subscription_delta).
const metricsDeltaPieces = `SELECT c.* FROM subscriptions r, metric_subscription_delta(r, 1) c
				WHERE r.organization_id = ANY($1) AND (r.started_at >= b.lo AND r.started_at < b.x
					OR r.trial_end >= b.lo AND r.trial_end < b.x OR r.ended_at >= b.lo AND r.ended_at < b.x
					OR r.ends_at >= b.lo AND r.ends_at < b.x)`

// metricsColumns writes each of cols through format (its %[1]s the column), comma-separated.
func metricsColumns(format string, cols []string) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = fmt.Sprintf(format, c)
	}
	return strings.Join(out, ", ")
}

// metricsSplit is a split source: the columns it sums (cols), its rollups (daily, hourly and
// the unfolded changes), its pieces of the base tables (or the quarter rollup that replaces
// them), whether it gives stock changes, and whether the products are narrowed.
type metricsSplit struct {
	cols                           []string
	daily, hourly, changes, pieces string
	stock, narrowed                bool
	// quarters, when every cut is on a quarter hour, is the quarter rollup the pieces are
	// read from (with changes) instead of pieces.
	quarters string
	// ownRows keeps only the hourly and unfolded rows of day_products, as the daily ones
	// are: the subscribers' rows of all products are a row of their own, not the sum of the
	// products' (metricsSubscribersSplit).
	ownRows bool
}

// source writes the split source: the daily rows of the whole cuts, the hourly rows of the
// others, the unfolded changes of the hours before ⌊$3⌋, and the pieces. A flow source reads
// the changes from ⌊$2⌋ and adds no piece at $2. A stock source also reads, before the window,
// the daily rows before ⌊$2⌋ (as metricsDeltasBefore), the changes before it and the piece at
// $2 (the window's start inside an hour), all at times before $2.
//
// A piece is summed per product only when the products are narrowed, and then only the
// selected products': over all products one row of sums a cut is enough, and finishing a
// sum (into numeric) for each product of each cut cost more than reading the rows.
func (s metricsSplit) source() string {
	if len(s.cols) == 0 {
		return "" // nothing summed, nothing read
	}
	const last = `interval '1 hour' - interval '1 microsecond'`
	m := metricsColumns("m.%s", s.cols)
	// The flows are all bigint: their pieces' sums are cast back from sum's numeric, so that
	// the signs multiply integers. The stock changes hold numeric amounts, and are fewer.
	changesFrom, added, sum := ` AND hour >= date_trunc('hour', $2::timestamptz, 'UTC')`, "p.x > $2", "sum(c.%s)::bigint AS %[1]s"
	if s.stock {
		changesFrom, added, sum = "", "true", "sum(c.%s) AS %[1]s"
	}
	product, group := "NULL::uuid", ""
	if s.narrowed {
		product, group = "c.product_id", " AND c.product_id IN (SELECT id FROM sel) GROUP BY c.product_id"
	}
	own := ""
	if s.ownRows {
		own = " AND m.product_id IN (SELECT id FROM day_products)"
	}
	pieces := s.pieces
	if s.quarters != "" {
		pieces = fmt.Sprintf(metricsQuarterPieces, s.quarters, s.changes)
		if s.ownRows {
			pieces = `SELECT * FROM (` + pieces + `) m WHERE m.product_id IN (SELECT id FROM day_products)`
		}
	}
	var q strings.Builder
	fmt.Fprintf(&q, `SELECT m.day + %[1]s AS hour, m.product_id, %[2]s
			FROM cut_runs r, day_products k, LATERAL (SELECT * FROM %[3]s
				WHERE organization_id = ANY($1) AND align = r.align AND product_id = k.id AND day >= r.first AND day <= r.last OFFSET 0) m
		UNION ALL SELECT m.hour + %[1]s, m.product_id, %[2]s
			FROM cuts c, LATERAL (SELECT * FROM %[4]s WHERE organization_id = ANY($1) AND hour >= c.lo AND hour < c.hi OFFSET 0) m
			WHERE NOT c.whole%[13]s
		UNION ALL SELECT date_trunc('hour', m.hour, 'UTC') + %[1]s, m.product_id, %[2]s FROM %[5]s m
			WHERE organization_id = ANY($1) AND hour < date_trunc('hour', $3::timestamptz, 'UTC')%[6]s%[13]s
		UNION ALL SELECT s.at, p.product_id, %[7]s
			FROM cut_points b, LATERAL (SELECT b.x, %[8]s AS product_id, %[9]s
				FROM (%[10]s) c
				WHERE c.hour >= b.lo AND c.hour < b.x%[11]s) p,
				LATERAL (VALUES (p.x - interval '1 microsecond', 1, %[12]s), (p.x, -1, p.x < $3)) s (at, sign, kept)
			WHERE s.kept`,
		last, m, s.daily, s.hourly, s.changes, changesFrom,
		metricsColumns("s.sign * p.%s", s.cols), product, metricsColumns(sum, s.cols), pieces, group, added, own)
	if s.stock {
		fmt.Fprintf(&q, `
		UNION ALL SELECT m.day, m.product_id, %s FROM %s m
			WHERE organization_id = ANY($1) AND align = extract(hour FROM $2::timestamptz AT TIME ZONE 'UTC')::smallint
				AND day <= $2::timestamptz - interval '24 hours' AND product_id IN (SELECT id FROM day_products)`, m, s.daily)
	}
	return q.String()
}

// metricsFlowsSplit and metricsDeltasSplit are the split sources of the flow and stock-change
// columns cols, only those the series sums: a year of pieces is some 700 rows of sums a
// column.
func metricsFlowsSplit(cols []string, narrowed, quarters bool) string {
	return metricsSplit{cols: cols, daily: "metric_days", hourly: "metric_hours", changes: "metric_hour_changes",
		pieces: metricsFlowPieces, narrowed: narrowed, quarters: quartersOf(quarters, "metric_quarters")}.source()
}

func metricsDeltasSplit(cols []string, narrowed, quarters bool) string {
	return metricsSplit{cols: cols, daily: "metric_subscription_days", hourly: "metric_subscription_deltas",
		changes: "metric_subscription_delta_changes", pieces: metricsDeltaPieces, stock: true, narrowed: narrowed,
		quarters: quartersOf(quarters, "metric_subscription_quarters")}.source()
}

// quartersOf is table when the pieces come from quarter rollups, else none.
func quartersOf(quarters bool, table string) string {
	if quarters {
		return table
	}
	return ""
}

// metricsSubscriberPieces are the folded islands' subscriber changes in each piece, of the
// products whose rows the series sums (day_products: all products' row, or the one product
// selected); the queued customers' islands are corrected at their exact times apart
// (metricsSubscribersQueued).
const metricsSubscriberPieces = `SELECT c.* FROM metric_subscriber_islands i, metric_island_delta(i, 1) c
				WHERE i.organization_id = ANY($1) AND i.product_id IN (SELECT id FROM day_products)
					AND (i.started_at >= b.lo AND i.started_at < b.x OR i.ended_at >= b.lo AND i.ended_at < b.x)`

// metricsSubscribersSplit is the split source of the subscribers, for all products or one:
// the subscriber rollups of day_products cut like the other stock changes, with pieces of
// the folded islands.
func metricsSubscribersSplit(narrowed bool) string {
	return metricsSplit{cols: []string{"subscribers"}, daily: "metric_subscription_days", hourly: "metric_subscription_deltas",
		changes: "metric_subscription_delta_changes", pieces: metricsSubscriberPieces, stock: true, narrowed: narrowed,
		ownRows: true}.source()
}
