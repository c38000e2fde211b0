package storage

import (
	"fmt"
	"strings"
)

// The history before a window, for the cumulative revenues (upstream's cumulative revenue
// counts every order since the first, not since the window's start): rows shaped as
// metric_hours'. The rollups give it up to the whole hour $2 falls in, from the daily rollups
// of that hour's alignment (which tile the time before it) and the unfolded changes; the
// orders of that hour before $2 (a zone of half hours) are read from the base table.
// metricsFlowsBeforeBase sums the base table alone, for some customers.
const (
	metricsFlowsBeforeRollups = `SELECT m.*, NULL::smallint FROM metric_hour_changes m
			WHERE organization_id = ANY($1) AND hour < date_trunc('hour', $2::timestamptz, 'UTC')
		UNION ALL SELECT m.* FROM metric_days m
			WHERE organization_id = ANY($1) AND align = extract(hour FROM $2::timestamptz AT TIME ZONE 'UTC')::smallint
				AND day <= date_trunc('hour', $2::timestamptz, 'UTC') - interval '24 hours' AND product_id IN (SELECT id FROM day_products)
		UNION ALL SELECT c.*, NULL::smallint FROM orders r, metric_order_contribution(r, 1) c
			WHERE r.organization_id = ANY($1) AND r.created_at >= date_trunc('hour', $2::timestamptz, 'UTC')
				AND r.created_at < $2`
	metricsFlowsBeforeBase = `SELECT c.*, NULL::smallint FROM orders r, metric_order_contribution(r, 1) c
			WHERE r.organization_id = ANY($1) AND r.customer_id = ANY($8) AND r.created_at < $2`
)

// metricsCostColumns are the MetricsPoint columns read from the events' costs and senders
// (migration 00100_metric_costs).
var metricsCostColumns = [...]string{"costs", "cumulative_costs", "active_users", "window_users"}

// metricsEventsUnfolded are the events of the organizations not folded into the cost rollups
// yet, of any time: those of transactions at or above each organization's horizon, read
// through the (organization_id, xid) index.
const metricsEventsUnfolded = `, unfolded AS (
		SELECT e.* FROM unnest($1::uuid[]) o(id),
			LATERAL (SELECT coalesce((SELECT below FROM metric_event_folds WHERE organization_id = o.id), '0'::xid8) AS below) w,
			LATERAL (SELECT organization_id, "timestamp", customer_id, external_customer_id, event_cost(metadata) AS cost
				FROM events WHERE organization_id = o.id AND xid >= w.below OFFSET 0) e
	)`

// metricsEventCustomer keeps the rows aliased u of the customers in $8 (all when null): sent
// with one's id, or with one's external id.
const metricsEventCustomer = `($8::uuid[] IS NULL OR u.customer_id = ANY($8) OR u.external_customer_id IN (
		SELECT external_id FROM customers WHERE id = ANY($8) AND organization_id = u.organization_id))`

// metricsEventUser is who sent the row aliased u: the customer it names by id or by external
// id, and an external id no customer holds (yet) apart; NULL for events naming no one. A
// customer whose events come both ways counts once.
const metricsEventUser = `coalesce(coalesce(u.customer_id, (SELECT c.id FROM customers c
		WHERE c.organization_id = u.organization_id AND c.external_id = u.external_customer_id))::text,
		u.organization_id || '/' || u.external_customer_id)`

// metricsCosts writes the CTEs of the usage columns in want: costs (the period's costs and
// those before the window) and users (who sent events in each period, and in the whole
// window). Costs of all customers come from metric_cost_quarters, those of some customers and
// the users from metric_user_quarters, and the unfolded events are added to both.
func metricsCosts(costs, users bool) string {
	if !costs && !users {
		return ""
	}
	var q strings.Builder
	q.WriteString(metricsEventsUnfolded)
	// user_rows are the window's rows of the customers in $8 (all when null), once for both
	// the costs of some customers and the users.
	fmt.Fprintf(&q, `, user_rows AS (
		SELECT u.organization_id, u.quarter, u.customer_id, u.external_customer_id, u.costs FROM metric_user_quarters u
			WHERE u.organization_id = ANY($1) AND u.quarter >= $2 AND u.quarter < $3 AND %[1]s
		UNION ALL SELECT u.organization_id, metric_event_quarter(u."timestamp"), u.customer_id, u.external_customer_id,
				coalesce(u.cost, 0) FROM unfolded u
			WHERE u."timestamp" >= $2 AND u."timestamp" < $3 AND %[1]s
	)`, metricsEventCustomer)
	if costs {
		fmt.Fprintf(&q, `, cost_rows AS (
		SELECT quarter, costs FROM metric_cost_quarters
			WHERE organization_id = ANY($1) AND quarter >= $2 AND quarter < $3 AND $8::uuid[] IS NULL
		UNION ALL SELECT quarter, costs FROM user_rows WHERE $8::uuid[] IS NOT NULL
		UNION ALL SELECT metric_event_quarter(u."timestamp"), u.cost FROM unfolded u
			WHERE u."timestamp" >= $2 AND u."timestamp" < $3 AND $8::uuid[] IS NULL
	), cost_periods AS (
		SELECT date_trunc($4, quarter AT TIME ZONE $7) AS local, sum(costs) AS costs FROM cost_rows GROUP BY 1
	), cost_before AS (
		SELECT coalesce(sum(costs), 0) AS costs FROM (
			SELECT costs FROM metric_cost_quarters WHERE organization_id = ANY($1) AND quarter < $2 AND $8::uuid[] IS NULL
			UNION ALL SELECT u.costs FROM metric_user_quarters u
				WHERE u.organization_id = ANY($1) AND u.quarter < $2 AND $8::uuid[] IS NOT NULL AND %[1]s
			UNION ALL SELECT u.cost FROM unfolded u WHERE u."timestamp" < $2 AND %[1]s) b
	)`, metricsEventCustomer)
	}
	if users {
		fmt.Fprintf(&q, `, user_periods AS (
		SELECT date_trunc($4, u.quarter AT TIME ZONE $7) AS local,
			grouping(date_trunc($4, u.quarter AT TIME ZONE $7)) = 1 AS whole,
			count(DISTINCT %s) AS users
		FROM user_rows u
		GROUP BY GROUPING SETS ((date_trunc($4, u.quarter AT TIME ZONE $7)), ())
	)`, metricsEventUser)
	}
	return q.String()
}

// metricsCostOutputs are the usage columns of the series' SELECT (over periods p), and the
// joins they need.
func metricsCostOutputs(want func(string) bool) (out []string, joins string) {
	if want("costs") || want("cumulative_costs") {
		joins += " LEFT JOIN cost_periods c ON c.local = p.local"
	}
	if want("costs") {
		out = append(out, "coalesce(c.costs, 0)::float8 AS costs")
	}
	if want("cumulative_costs") {
		out = append(out, "((SELECT costs FROM cost_before) + coalesce(sum(c.costs) OVER w, 0))::float8 AS cumulative_costs")
	}
	if want("active_users") {
		joins += " LEFT JOIN user_periods u ON u.local = p.local AND NOT u.whole"
		out = append(out, "coalesce(u.users, 0) AS active_users")
	}
	if want("window_users") {
		out = append(out, "coalesce((SELECT users FROM user_periods WHERE whole), 0) AS window_users")
	}
	return out, joins
}
