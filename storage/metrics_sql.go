package storage

import (
	"fmt"
	"slices"
	"strings"
)

// The sources the series sums, each giving rows shaped as metric_hours' (flows) or
// metric_subscription_deltas' (stock changes), at the start of the hour or day they cover:
//   - metricsFlowsHours and metricsDeltasHours read the hourly rollups of the window (migration
//     00085_revenue_metrics), for hourly points;
//   - metricsFlowsDays and metricsDeltasDays read the daily rollups (migration
//     00095_metric_days) for the window's days of 24 hours and the hourly ones for its other
//     days (daylight saving time changes), for points of a day or longer;
//   - both take the stock before the window from the daily rollups of the window start's
//     alignment, which tile the time before it, and the unfolded stock changes of all time
//     (metricsDeltasBefore);
//   - metricsFlowsBase and metricsDeltasBase compute the same rows from the base tables at
//     their exact times, narrowed by customer when $8 is not null.
//
// The daily sources read the rows of day_products: one row a day, the day's sum over all
// products (00105_metric_all_products), unless the products are narrowed; then one row a day
// per selected product.
//
// The rollup sources add the changes not folded into the rollups yet (migration
// 00096_metric_changes), hourly rows read in the same statement, so that every committed
// change counts once whether or not it was folded. They hold whole UTC hours, so they serve
// only zones whose offset is whole hours over the window; the others read them cut with
// pieces of the quarter-hour rollups or the base tables (metricsFlowsSplit,
// storage.MetricsFilter.Exact).
const (
	metricsFlowsChanges = `SELECT *, NULL::smallint FROM metric_hour_changes
			WHERE organization_id = ANY($1) AND hour >= $2 AND hour < $3`
	metricsFlowsHours = `SELECT *, NULL::smallint FROM metric_hours
			WHERE organization_id = ANY($1) AND hour >= $2 AND hour < $3
		UNION ALL ` + metricsFlowsChanges
	metricsFlowsDays = `SELECT m.*, NULL::smallint FROM part_days d JOIN metric_hours m ON m.hour >= d.start AND m.hour < d.stop
			WHERE m.organization_id = ANY($1)
		UNION ALL SELECT m.* FROM runs r, day_products k, LATERAL (SELECT * FROM metric_days
				WHERE organization_id = ANY($1) AND align = r.align AND product_id = k.id AND day >= r.first AND day <= r.last OFFSET 0) m
		UNION ALL ` + metricsFlowsChanges
	metricsDeltasBefore = `SELECT * FROM metric_subscription_days
			WHERE organization_id = ANY($1) AND align = extract(hour FROM $2::timestamptz AT TIME ZONE 'UTC')::smallint
				AND day <= $2::timestamptz - interval '24 hours' AND product_id IN (SELECT id FROM day_products)
		UNION ALL SELECT *, NULL::smallint FROM metric_subscription_delta_changes
			WHERE organization_id = ANY($1) AND hour < $3`
	metricsDeltasHours = `SELECT m.*, NULL::smallint FROM metric_subscription_deltas m
			WHERE organization_id = ANY($1) AND hour >= $2 AND hour < $3
		UNION ALL ` + metricsDeltasBefore
	metricsDeltasDays = `SELECT m.*, NULL::smallint FROM part_days d
			JOIN metric_subscription_deltas m ON m.hour >= d.start AND m.hour < d.stop
			WHERE m.organization_id = ANY($1)
		UNION ALL SELECT m.* FROM runs r, day_products k, LATERAL (SELECT * FROM metric_subscription_days
				WHERE organization_id = ANY($1) AND align = r.align AND product_id = k.id AND day >= r.first AND day <= r.last OFFSET 0) m
		UNION ALL ` + metricsDeltasBefore
	metricsFlowsBase = `SELECT * FROM (
		SELECT c.* FROM orders r, metric_order_contribution(r, 1) c
			WHERE r.organization_id = ANY($1) AND ($8::uuid[] IS NULL OR r.customer_id = ANY($8))
				AND r.created_at >= $2 AND r.created_at < $3
		UNION ALL SELECT c.* FROM checkouts r, metric_checkout_contribution(r, 1) c
			WHERE r.organization_id = ANY($1) AND ($8::uuid[] IS NULL OR r.customer_id = ANY($8))
				AND r.created_at >= $2 AND r.created_at < $3
		UNION ALL SELECT c.* FROM subscriptions r, metric_subscription_contribution(r, 1) c
			WHERE r.organization_id = ANY($1) AND ($8::uuid[] IS NULL OR r.customer_id = ANY($8))
		) f WHERE hour >= $2 AND hour < $3`
	metricsDeltasBase = `SELECT c.*, NULL::smallint FROM subscriptions r, metric_subscription_delta(r, 1) c
		WHERE r.organization_id = ANY($1) AND ($8::uuid[] IS NULL OR r.customer_id = ANY($8)) AND c.hour < $3`
)

// metricsSubscribers says where a statement reads the subscribers stock (migration
// 00109_metric_subscribers) and which rows of its stock changes are the subscribers of the
// products selected: rows are the stock changes it adds to the source's, sum sums the
// subscribers of a period's changes, and keep widens the product filter to the rows it adds.
//
// cut marks the subscribers of a split statement read from the rollups (all products or one):
// metricsSubscribersSplit cut like the other stock, plus the queued customers' corrections.
type metricsSubscribers struct {
	rows, sum, keep string
	cut             bool
	// with is the CTEs rows reads, written into the statement's head.
	with string
}

// metricsSubscribersQueued are the subscriber changes the rollups lack: for each customer
// queued and not folded yet, its islands as the subscriptions are, less those folded. The
// islands keep their exact times, which in a zone of whole-hour offsets fall in the periods
// their hours do.
const metricsSubscribersQueued = `SELECT c.*, NULL::smallint
			FROM (SELECT coalesce(array_agg(customer_id), '{}') AS ids FROM metric_subscriber_queue
				WHERE organization_id = ANY($1)) q, metric_subscriber_islands_of($1, q.ids, NULL, true) i,
				metric_island_delta(i, 1) c
			WHERE c.hour < $3
		UNION ALL SELECT c.*, NULL::smallint FROM metric_subscriber_islands i, metric_island_delta(i, -1) c
			WHERE i.organization_id = ANY($1) AND c.hour < $3
				AND i.customer_id IN (SELECT customer_id FROM metric_subscriber_queue WHERE organization_id = ANY($1))`

var (
	// metricsSubscribersAll read the all-products rows of the rollups, and of the queued
	// customers' islands.
	metricsSubscribersAll = metricsSubscribers{rows: metricsSubscribersQueued,
		sum: `sum(d.subscribers) FILTER (WHERE d.product_id = 'ffffffff-ffff-ffff-ffff-ffffffffffff')`}
	// metricsSubscribersOne read the rows of the one product selected, which the product
	// filter keeps.
	metricsSubscribersOne = metricsSubscribers{rows: metricsSubscribersQueued, sum: `sum(d.subscribers)`}
	// metricsSubscribersBase compute the islands of the selected products' subscriptions
	// (of the customers named) from the base tables, under no product: a distinct count of
	// several products is not the sum of theirs.
	metricsSubscribersBase = metricsSubscribers{rows: metricsSubscribersBaseRows,
		sum: `sum(d.subscribers) FILTER (WHERE d.product_id IS NULL)`, keep: ` OR d.product_id IS NULL`}
	// metricsSubscribersCut read the subscribers of all products or one in a zone whose offset
	// is not whole hours: their rollups cut with pieces of the folded islands, plus the
	// queued customers' corrections of the products summed.
	metricsSubscribersCut = metricsSubscribers{rows: `SELECT * FROM (` + metricsSubscribersQueued + `) q
			WHERE product_id IN (SELECT id FROM day_products)`, sum: `sum(d.subscribers)`, cut: true}
	// metricsSubscribersSome read several products' subscribers from the all-products rows
	// when those products hold every subscription of the organizations (whole_stock: all
	// its recurring products, as billing_type=recurring selects), and otherwise as the sum of
	// the products' own subscribers less the customers counted more than once
	// (metricsSubscribersOverlap).
	metricsSubscribersSome = metricsSubscribers{
		rows: metricsSubscribersQueued + `
		UNION ALL SELECT * FROM (` + metricsSubscribersOverlap + `) b WHERE NOT (SELECT v FROM whole_stock)`,
		sum: `sum(d.subscribers)`, keep: ` OR d.product_id IS NULL`, with: metricsSubscribersHeld}
)

// metricsSubscribersHeld are the folded islands metricsSubscribersOverlap sweeps: those of
// the selected products not ended before the window, of the customers not queued.
const metricsSubscribersHeld = `, held AS (
		SELECT * FROM metric_subscriber_islands
		WHERE organization_id = ANY($1) AND product_id IN (SELECT id FROM sel) AND (ended_at IS NULL OR ended_at >= $2)
			AND customer_id NOT IN (SELECT customer_id FROM metric_subscriber_queue WHERE organization_id = ANY($1))
	)`

// metricsSubscribersOverlap corrects the sum of several products' subscribers (their rows of
// the rollups, and of the queued customers' islands) into the number of distinct customers,
// under no product: for each customer, the changes of its islands merged across the products
// less those of its islands of each product. A sweep over a customer's folded islands of the
// selected products, +1 at an island's start and -1 at its end, keeps the number of islands
// the customer holds (level); merged, the customer's subscriber change is +1 where that
// number leaves 0 and -1 where it returns to 0, while each product counts every +1 and -1.
// A customer of one product changes as its islands do, so only those holding islands of
// several products are swept. A start taken before an end at the same instant continues the
// island, as metric_subscriber_islands_of merges touching intervals; events at one instant
// sum to the same change in any order. Islands ended before the window are left out: without
// them, the customers held as the window starts, and every change within it, stay the same.
// The queued customers, whose folded islands are stale, are corrected from their islands
// computed afresh. The changes are summed per period here, which keeps the rows the stock
// sums to one per period; each group's earliest instant lies in its period.
const metricsSubscribersOverlap = `SELECT organization_id, min(at), NULL::uuid, 0::bigint, 0::numeric, 0::bigint, 0::numeric,
				0::numeric, 0::numeric, sum(change), NULL::smallint
			FROM (SELECT organization_id, at, CASE WHEN at < $2 THEN NULL ELSE date_trunc($4, at AT TIME ZONE $7) END AS local,
					CASE WHEN sign = 1 AND level = 1 THEN 1 WHEN sign = -1 AND level = 0 THEN -1 ELSE 0 END - sign AS change
				FROM (SELECT i.organization_id, e.at, e.sign, sum(e.sign) OVER (PARTITION BY i.organization_id, i.customer_id
							ORDER BY e.at, e.sign DESC ROWS UNBOUNDED PRECEDING) AS level
					FROM held i, LATERAL (VALUES (i.started_at, 1), (i.ended_at, -1)) e (at, sign)
					WHERE (i.organization_id, i.customer_id) IN (SELECT organization_id, customer_id
							FROM (SELECT DISTINCT organization_id, customer_id, product_id FROM held) h
							GROUP BY organization_id, customer_id HAVING count(*) > 1)
						AND e.at < $3) s) t
			WHERE change <> 0
			GROUP BY organization_id, local
		UNION ALL SELECT c.*, NULL::smallint
			FROM (SELECT coalesce(array_agg(DISTINCT customer_id), '{}') AS ids FROM metric_subscriber_queue
				WHERE organization_id = ANY($1)) q, (SELECT coalesce(array_agg(id), '{}') AS ids FROM sel) k,
				metric_subscriber_islands_of($1, q.ids, k.ids, false) i, metric_island_delta(i, 1) c
			WHERE c.hour < $3
		UNION ALL SELECT c.*, NULL::smallint
			FROM (SELECT coalesce(array_agg(DISTINCT customer_id), '{}') AS ids FROM metric_subscriber_queue
				WHERE organization_id = ANY($1)) q, (SELECT coalesce(array_agg(id), '{}') AS ids FROM sel) k,
				metric_subscriber_islands_of($1, q.ids, k.ids, true) i,
				metric_island_delta(ROW(i.organization_id, i.customer_id, NULL, i.started_at, i.ended_at), -1) c
			WHERE i.product_id = ANY(k.ids) AND c.hour < $3`

const metricsSubscribersBaseRows = `SELECT c.*, NULL::smallint
			FROM (SELECT CASE WHEN $9 THEN coalesce(array_agg(id), '{}') END AS ids FROM sel) k,
				metric_subscriber_islands_of($1, $8, k.ids, false) i, metric_island_delta(i, 1) c
			WHERE c.hour < $3`

// metricsWholeStock says whether the products selected hold every subscription of the
// organizations, and stock_products are the product ids of the daily stock rows a narrowed
// read of the rollups sums: then the all-products row of each day (the stock of the
// selection is the stock of all products, and one row a day is read instead of one per
// product), else the selected products' rows.
const metricsWholeStock = `, whole_stock AS (
		SELECT NOT EXISTS (SELECT 1 FROM products p WHERE p.organization_id = ANY($1) AND p.id NOT IN (SELECT id FROM sel)
			AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.product_id = p.id)) AS v
	), stock_products AS (
		SELECT id FROM sel WHERE NOT (SELECT v FROM whole_stock)
		UNION ALL SELECT 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid WHERE (SELECT v FROM whole_stock)
	)`

// metricFlows are the flow columns of metric_hours and metric_days, in table order.
var metricFlows = [...]string{"orders", "revenue", "net_revenue", "one_time_orders", "one_time_revenue",
	"one_time_net_revenue", "new_orders", "new_revenue", "new_net_revenue", "renewal_orders", "renewal_revenue",
	"renewal_net_revenue", "checkouts", "succeeded_checkouts", "canceled", "canceled_customer_service",
	"canceled_low_quality", "canceled_missing_features", "canceled_switched_service", "canceled_too_complex",
	"canceled_too_expensive", "canceled_unused", "canceled_other", "churned"}

// metricStocks are the MetricsPoint columns that need the subscription stock, and
// metricStockOutputs their expressions over the stock changes (at a period's start: at its
// end less its own changes).
var (
	metricStocks = [...]string{"active_subscriptions", "monthly_recurring_revenue", "active_at_start",
		"monthly_recurring_at_start"}
	metricStockOutputs = [len(metricStocks)]string{metricsStockRun("active"),
		"round(" + metricsStockRun("monthly_amount") + ")::bigint",
		metricsStockRun("active") + " - coalesce(d.active, 0)",
		"round(" + metricsStockRun("monthly_amount") + " - coalesce(d.monthly_amount, 0))::bigint"}
)

// metricSplitStocks are the MetricsPoint columns of the committed and trialing splits of the
// stock (migration 00108_metric_committed_trials), each run from its own column of the stock
// changes, and summed only when asked for. An amount is rounded to cents as MRR is.
var metricSplitStocks = [...]struct {
	col, delta string
	amount     bool
}{
	{"committed_subscriptions", "committed", false},
	{"committed_monthly_recurring_revenue", "committed_monthly_amount", true},
	{"trial_monthly_recurring_revenue", "trial_monthly_amount", true},
	{"trial_committed_monthly_recurring_revenue", "trial_committed_monthly_amount", true},
}

// metricsHead types every parameter ($8 to $14 may be read by no source), cuts the periods
// and selects the products. $9 is true when products are narrowed. part_days and runs are
// the window's days (metricsCalendar) for the daily sources: the days that are not whole
// ($10, $11), and the whole ones in runs of consecutive days of one alignment ($12 to $14),
// so that the daily sources read each run as one range of the rollup's key rather than
// looking each day up.
const metricsHead = `WITH params AS (SELECT $8::uuid[] AS customers, $9::boolean AS narrowed, $10::timestamptz[] AS part_starts,
		$11::timestamptz[] AS part_stops, $12::smallint[] AS run_aligns, $13::timestamptz[] AS run_firsts, $14::timestamptz[] AS run_lasts
	), sel AS (
		SELECT id FROM products WHERE organization_id = ANY($1)
			AND ($5::uuid[] IS NULL OR id = ANY($5))
			AND ($6::text[] IS NULL OR (CASE WHEN recurring_interval IS NULL THEN 'one_time' ELSE 'recurring' END) = ANY($6))
	), periods AS (
		SELECT p AS local, p AT TIME ZONE $7 AS ts
		FROM generate_series(date_trunc($4::text, $2::timestamptz AT TIME ZONE $7::text),
			($3::timestamptz - interval '1 microsecond') AT TIME ZONE $7, ('1 ' || $4)::interval) p
	), part_days AS (
		SELECT * FROM unnest($10::timestamptz[], $11::timestamptz[]) d (start, stop)
	), runs AS (
		SELECT * FROM unnest($12::smallint[], $13::timestamptz[], $14::timestamptz[]) r (align, first, last)
	)`

// metricsStock sums the stock changes per period (those before the window in one row, local
// NULL); the series runs them into the stock at each period's end and start
// (metricsStockRun), in its own window over the periods. The second verb adds the split
// stocks asked for (metricsSplitSum); the third is the product filter
// (metricsProductFilter).
const metricsStock = `, deltas AS (
		SELECT CASE WHEN d.hour < $2 THEN NULL ELSE date_trunc($4, d.hour AT TIME ZONE $7) END AS local,
			sum(active) AS active, sum(monthly_amount) AS monthly_amount%[2]s
		FROM (%[1]s) d%[3]s
		GROUP BY 1
	)`

const metricsSplitSum = `, sum(%[1]s) AS %[1]s`

// metricsStockRun is the stock of the column %[1]s of deltas at the end of each period: its
// changes before the window and up to the period's end.
func metricsStockRun(col string) string {
	return fmt.Sprintf(`(coalesce((SELECT %[1]s FROM deltas WHERE local IS NULL), 0) + coalesce(sum(d.%[1]s) OVER w, 0))`, col)
}

// metricsProductFilter keeps the rows of source alias a of the products selected, and those
// keep admits, when the products are narrowed; otherwise it keeps every row and is not
// written at all, so that the rows reach the sums through no filter. The products are one
// array, tested row by row: as a semi-join with sel, whose size the generic plan cannot
// know, the history before the window was read once per product selected (12 of a
// recurring read's 25 ms).
func metricsProductFilter(a string, narrowed bool, keep string) string {
	if !narrowed {
		return ""
	}
	return fmt.Sprintf(`
		WHERE (%s.product_id = ANY (ARRAY(SELECT id FROM sel))%s)`, a, keep)
}

// metricsSources are the rows a series statement sums: flows and stock changes within the
// window, flows before it (for the cumulative revenues), and where the subscribers come from.
// wholeStock is set on narrowed reads of the rollups: their stock comes from the
// all-products rows when the selection holds every subscription (metricsWholeStock). A split
// statement (metricsFlowsSplit) writes its flows and stock changes for the columns it sums
// instead, and reads the CTEs of metricsSplitCuts.
type metricsSources struct {
	flows, deltas, flowsBefore string
	subscribers                metricsSubscribers
	wholeStock, split          bool
	// days says the daily sources read the window's calendar (part_days and runs).
	days bool
	// quarters reads a split statement's pieces from the quarter-hour rollups.
	quarters bool
}

// metricsQuery writes the series statement over src, computing only the MetricsPoint columns
// in cols (all when nil): flows not asked for are not summed, and without a stock column the
// stock-change source is not read, nor the events without a usage column. The columns not
// computed read as 0.
func metricsQuery(src metricsSources, cols []string, narrowed bool) string {
	want := func(c string) bool { return cols == nil || slices.Contains(cols, c) }
	var sums, summed, out []string
	for _, c := range metricFlows {
		if want(c) || (c == "revenue" && want("cumulative_revenue")) || (c == "net_revenue" && want("net_cumulative_revenue")) {
			sums = append(sums, fmt.Sprintf("sum(%s) AS %[1]s", c))
			summed = append(summed, c)
		}
		if want(c) {
			out = append(out, fmt.Sprintf("coalesce(f.%s, 0) AS %[1]s", c))
		}
	}
	before := want("cumulative_revenue") || want("net_cumulative_revenue")
	if want("cumulative_revenue") {
		out = append(out, "(SELECT revenue FROM flows_before) + sum(coalesce(f.revenue, 0)) OVER w AS cumulative_revenue")
	}
	if want("net_cumulative_revenue") {
		out = append(out, "(SELECT net_revenue FROM flows_before) + sum(coalesce(f.net_revenue, 0)) OVER w AS net_cumulative_revenue")
	}
	stock := false
	for i, expr := range metricStockOutputs {
		if want(metricStocks[i]) {
			stock = true
			out = append(out, expr+" AS "+metricStocks[i])
		}
	}
	var splitSums strings.Builder
	stockCols := []string{"active", "monthly_amount"}
	for _, c := range metricSplitStocks {
		if !want(c.col) {
			continue
		}
		stock = true
		stockCols = append(stockCols, c.delta)
		fmt.Fprintf(&splitSums, metricsSplitSum, c.delta)
		if c.amount {
			out = append(out, fmt.Sprintf("round(%s)::bigint AS %s", metricsStockRun(c.delta), c.col))
		} else {
			out = append(out, fmt.Sprintf("%s AS %s", metricsStockRun(c.delta), c.col))
		}
	}
	stockChanges, keep := src.deltas, ""
	if src.wholeStock {
		stockChanges, keep = strings.ReplaceAll(stockChanges, "day_products", "stock_products"), " OR (SELECT v FROM whole_stock)"
	}
	if want("subscribers") {
		// The subscribers are summed and their changes read only when asked for, as the
		// split stocks are.
		stock = true
		keep += src.subscribers.keep
		sum := src.subscribers.sum
		if src.wholeStock {
			sum = `CASE WHEN (SELECT v FROM whole_stock) THEN ` + metricsSubscribersAll.sum + ` ELSE ` + sum + ` END`
		}
		splitSums.WriteString(", " + sum + " AS subscribers")
		out = append(out, metricsStockRun("subscribers")+" AS subscribers")
	}
	var q strings.Builder
	q.WriteString(metricsHead)
	// day_products are the product ids of the daily rows summed. The statement text, not $9,
	// tells all products from some, so that the planner looks each row up by its key.
	if narrowed {
		q.WriteString(`, day_products AS (SELECT id FROM sel)`)
		if src.wholeStock && stock {
			q.WriteString(metricsWholeStock)
		}
		if want("subscribers") {
			q.WriteString(src.subscribers.with)
		}
	} else {
		q.WriteString(`, day_products AS (SELECT 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid AS id)`)
	}
	flows := src.flows
	if src.split {
		q.WriteString(metricsSplitCuts)
		flows, stockChanges = metricsFlowsSplit(summed, narrowed, src.quarters), metricsDeltasSplit(stockCols, narrowed, src.quarters)
	}
	if want("subscribers") && src.split && src.subscribers.cut {
		stockChanges = fmt.Sprintf(`SELECT hour, product_id, %s, 0::bigint AS subscribers FROM (%s) s
		UNION ALL SELECT hour, product_id, %s, subscribers FROM (%s) c
		UNION ALL SELECT hour, product_id, %s, subscribers FROM (%s) x`, strings.Join(stockCols, ", "), stockChanges,
			metricsColumns("0 AS %s", stockCols), metricsSubscribersSplit(narrowed),
			strings.Join(stockCols, ", "), src.subscribers.rows)
	} else if want("subscribers") && src.split {
		// A split source gives the columns it sums: the subscribers' changes (at their exact
		// times, from the base tables) are written in its shape.
		stockChanges = fmt.Sprintf(`SELECT hour, product_id, %s, 0::bigint AS subscribers FROM (%s) s
		UNION ALL SELECT hour, product_id, %s, subscribers FROM (%s) x`, strings.Join(stockCols, ", "), stockChanges,
			strings.Join(stockCols, ", "), src.subscribers.rows)
	} else if want("subscribers") {
		stockChanges += `
		UNION ALL ` + src.subscribers.rows
	}
	from := "periods p"
	if sums != nil {
		fmt.Fprintf(&q, `, flows AS (
		SELECT date_trunc($4, f.hour AT TIME ZONE $7) AS local, %s
		FROM (%s) f%s
		GROUP BY 1
	)`, strings.Join(sums, ", "), flows, metricsProductFilter("f", narrowed, ""))
		from += " LEFT JOIN flows f ON f.local = p.local"
	}
	if before {
		fmt.Fprintf(&q, `, flows_before AS (
		SELECT coalesce(sum(revenue), 0) AS revenue, coalesce(sum(net_revenue), 0) AS net_revenue
		FROM (%s) f%s
	)`, src.flowsBefore, metricsProductFilter("f", narrowed, ""))
	}
	if stock {
		fmt.Fprintf(&q, metricsStock, stockChanges, splitSums.String(), metricsProductFilter("d", narrowed, keep))
		from += " LEFT JOIN deltas d ON d.local = p.local"
	}
	q.WriteString(metricsCosts(want("costs") || want("cumulative_costs"), want("active_users") || want("window_users")))
	usage, joins := metricsCostOutputs(want)
	out = append(out, usage...)
	from += joins
	seats, joins := metricsSeats(&q, want)
	out = append(out, seats...)
	from += joins
	fmt.Fprintf(&q, `
	SELECT %s
	FROM %s
	WINDOW w AS (ORDER BY p.local)
	ORDER BY p.local`, strings.Join(append([]string{"p.ts AS timestamp"}, out...), ", "), from)
	names := make([]string, len(out))
	for i, o := range out {
		names[i] = outputName(o)
	}
	return metricsArrays(q.String(), names)
}
