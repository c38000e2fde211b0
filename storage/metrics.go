package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// MetricsFilter selects the data of a metrics query. Periods start at the truncation of
// From to Interval in Zone and follow each other until To; only data in [From, To) counts.
type MetricsFilter struct {
	Orgs     []uuid.UUID
	From, To time.Time
	// Interval is a PostgreSQL date_trunc unit: hour, day, week, month or year.
	Interval string
	// Zone is an IANA time zone name the periods are cut in.
	Zone string
	// Products and BillingTypes (one_time, recurring) narrow to some products; nil is all.
	Products     []uuid.UUID
	BillingTypes []string
	// Customers narrows to some customers; the rollups do not split by customer, so the
	// query reads the base tables through their customer indexes instead.
	Customers []uuid.UUID
	// Exact reads the base tables although no customer is named: hourly rollups cannot be
	// cut into the periods of a zone whose offset is not a whole number of hours.
	Exact bool
}

// MetricsPoint is one period's values. Flows count what happened during the period; the
// subscription stocks are as of the period's end; the cumulative values add up the
// periods from the first.
type MetricsPoint struct {
	Timestamp               time.Time `db:"timestamp"`
	Orders                  int64     `db:"orders"`
	Revenue                 int64     `db:"revenue"`
	NetRevenue              int64     `db:"net_revenue"`
	CumulativeRevenue       int64     `db:"cumulative_revenue"`
	NetCumulativeRevenue    int64     `db:"net_cumulative_revenue"`
	OneTimeOrders           int64     `db:"one_time_orders"`
	OneTimeRevenue          int64     `db:"one_time_revenue"`
	OneTimeNetRevenue       int64     `db:"one_time_net_revenue"`
	NewOrders               int64     `db:"new_orders"`
	NewRevenue              int64     `db:"new_revenue"`
	NewNetRevenue           int64     `db:"new_net_revenue"`
	RenewalOrders           int64     `db:"renewal_orders"`
	RenewalRevenue          int64     `db:"renewal_revenue"`
	RenewalNetRevenue       int64     `db:"renewal_net_revenue"`
	Checkouts               int64     `db:"checkouts"`
	SucceededCheckouts      int64     `db:"succeeded_checkouts"`
	Canceled                int64     `db:"canceled"`
	CanceledCustomerService int64     `db:"canceled_customer_service"`
	CanceledLowQuality      int64     `db:"canceled_low_quality"`
	CanceledMissingFeatures int64     `db:"canceled_missing_features"`
	CanceledSwitchedService int64     `db:"canceled_switched_service"`
	CanceledTooComplex      int64     `db:"canceled_too_complex"`
	CanceledTooExpensive    int64     `db:"canceled_too_expensive"`
	CanceledUnused          int64     `db:"canceled_unused"`
	CanceledOther           int64     `db:"canceled_other"`
	Churned                 int64     `db:"churned"`
	ActiveSubscriptions     int64     `db:"active_subscriptions"`
	MonthlyRecurringRevenue int64     `db:"monthly_recurring_revenue"`
	ActiveAtStart           int64     `db:"active_at_start"`
	MonthlyRecurringAtStart int64     `db:"monthly_recurring_at_start"`
}

// metricsFlowsRollup and metricsDeltasRollup read the hourly rollups (migration
// 00085_revenue_metrics); metricsFlowsBase and metricsDeltasBase compute the same rows from
// the base tables at their exact times, narrowed by customer when $8 is not null.
const (
	metricsFlowsRollup = `SELECT * FROM metric_hours
		WHERE organization_id = ANY($1) AND hour >= $2 AND hour < $3 AND $8::uuid[] IS NULL`
	metricsDeltasRollup = `SELECT * FROM metric_subscription_deltas
		WHERE organization_id = ANY($1) AND hour < $3`
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
	metricsDeltasBase = `SELECT c.* FROM subscriptions r, metric_subscription_delta(r, 1) c
		WHERE r.organization_id = ANY($1) AND ($8::uuid[] IS NULL OR r.customer_id = ANY($8)) AND c.hour < $3`
)

// metricsHead cuts the periods and selects the products; metricsMiddle and metricsTail sum
// the flows and the stock changes per period. $9 is true when products are narrowed.
const (
	metricsHead = `WITH sel AS (
		SELECT id FROM products WHERE organization_id = ANY($1)
			AND ($5::uuid[] IS NULL OR id = ANY($5))
			AND ($6::text[] IS NULL OR (CASE WHEN recurring_interval IS NULL THEN 'one_time' ELSE 'recurring' END) = ANY($6))
	), periods AS (
		SELECT p AS local, p AT TIME ZONE $7 AS ts
		FROM generate_series(date_trunc($4::text, $2::timestamptz AT TIME ZONE $7::text),
			($3::timestamptz - interval '1 microsecond') AT TIME ZONE $7, ('1 ' || $4)::interval) p
	), flows AS (
		SELECT date_trunc($4, f.hour AT TIME ZONE $7) AS local, sum(orders) AS orders, sum(revenue) AS revenue,
			sum(net_revenue) AS net_revenue, sum(one_time_orders) AS one_time_orders,
			sum(one_time_revenue) AS one_time_revenue, sum(one_time_net_revenue) AS one_time_net_revenue,
			sum(new_orders) AS new_orders, sum(new_revenue) AS new_revenue, sum(new_net_revenue) AS new_net_revenue,
			sum(renewal_orders) AS renewal_orders, sum(renewal_revenue) AS renewal_revenue,
			sum(renewal_net_revenue) AS renewal_net_revenue, sum(checkouts) AS checkouts,
			sum(succeeded_checkouts) AS succeeded_checkouts, sum(canceled) AS canceled,
			sum(canceled_customer_service) AS canceled_customer_service, sum(canceled_low_quality) AS canceled_low_quality,
			sum(canceled_missing_features) AS canceled_missing_features,
			sum(canceled_switched_service) AS canceled_switched_service, sum(canceled_too_complex) AS canceled_too_complex,
			sum(canceled_too_expensive) AS canceled_too_expensive, sum(canceled_unused) AS canceled_unused,
			sum(canceled_other) AS canceled_other, sum(churned) AS churned
		FROM (`
	metricsMiddle = `) f
		WHERE (NOT $9::boolean OR f.product_id IN (SELECT id FROM sel))
		GROUP BY 1
	), deltas AS (
		SELECT CASE WHEN d.hour < $2 THEN NULL ELSE date_trunc($4, d.hour AT TIME ZONE $7) END AS local,
			sum(active) AS active, sum(monthly_amount) AS monthly_amount
		FROM (`
	metricsTail = `) d
		WHERE (NOT $9 OR d.product_id IN (SELECT id FROM sel))
		GROUP BY 1
	), stock AS (
		SELECT p.local, coalesce((SELECT active FROM deltas WHERE local IS NULL), 0)
				+ coalesce(sum(d.active) OVER w, 0) AS active,
			coalesce((SELECT monthly_amount FROM deltas WHERE local IS NULL), 0)
				+ coalesce(sum(d.monthly_amount) OVER w, 0) AS monthly_amount,
			coalesce(d.active, 0) AS change, coalesce(d.monthly_amount, 0) AS amount_change
		FROM periods p LEFT JOIN deltas d ON d.local = p.local
		WINDOW w AS (ORDER BY p.local)
	)
	SELECT p.ts AS timestamp, coalesce(f.orders, 0) AS orders, coalesce(f.revenue, 0) AS revenue,
		coalesce(f.net_revenue, 0) AS net_revenue,
		sum(coalesce(f.revenue, 0)) OVER w AS cumulative_revenue,
		sum(coalesce(f.net_revenue, 0)) OVER w AS net_cumulative_revenue,
		coalesce(f.one_time_orders, 0) AS one_time_orders, coalesce(f.one_time_revenue, 0) AS one_time_revenue,
		coalesce(f.one_time_net_revenue, 0) AS one_time_net_revenue, coalesce(f.new_orders, 0) AS new_orders,
		coalesce(f.new_revenue, 0) AS new_revenue, coalesce(f.new_net_revenue, 0) AS new_net_revenue,
		coalesce(f.renewal_orders, 0) AS renewal_orders, coalesce(f.renewal_revenue, 0) AS renewal_revenue,
		coalesce(f.renewal_net_revenue, 0) AS renewal_net_revenue, coalesce(f.checkouts, 0) AS checkouts,
		coalesce(f.succeeded_checkouts, 0) AS succeeded_checkouts, coalesce(f.canceled, 0) AS canceled,
		coalesce(f.canceled_customer_service, 0) AS canceled_customer_service,
		coalesce(f.canceled_low_quality, 0) AS canceled_low_quality,
		coalesce(f.canceled_missing_features, 0) AS canceled_missing_features,
		coalesce(f.canceled_switched_service, 0) AS canceled_switched_service,
		coalesce(f.canceled_too_complex, 0) AS canceled_too_complex,
		coalesce(f.canceled_too_expensive, 0) AS canceled_too_expensive,
		coalesce(f.canceled_unused, 0) AS canceled_unused, coalesce(f.canceled_other, 0) AS canceled_other,
		coalesce(f.churned, 0) AS churned, s.active AS active_subscriptions,
		round(s.monthly_amount)::bigint AS monthly_recurring_revenue,
		s.active - s.change AS active_at_start,
		round(s.monthly_amount - s.amount_change)::bigint AS monthly_recurring_at_start
	FROM periods p JOIN stock s ON s.local = p.local LEFT JOIN flows f ON f.local = p.local
	WINDOW w AS (ORDER BY p.local)
	ORDER BY p.local`

	metricsRollupSQL = metricsHead + metricsFlowsRollup + metricsMiddle + metricsDeltasRollup + metricsTail
	metricsBaseSQL   = metricsHead + metricsFlowsBase + metricsMiddle + metricsDeltasBase + metricsTail
)

// Metrics computes one point per period of f, from the rollups unless f names customers or
// asks for exact zone cuts. The statement runs with JIT compilation off (withoutJIT).
func Metrics(ctx context.Context, q sqlx.ExtContext, f MetricsFilter) ([]MetricsPoint, error) {
	query := metricsRollupSQL
	if f.Customers != nil || f.Exact {
		query = metricsBaseSQL
	}
	var customers, products any
	if f.Customers != nil {
		customers = pq.Array(f.Customers)
	}
	if f.Products != nil {
		products = pq.Array(f.Products)
	}
	var billing any
	if f.BillingTypes != nil {
		billing = pq.Array(f.BillingTypes)
	}
	narrowed := f.Products != nil || f.BillingTypes != nil
	var points []MetricsPoint
	err := withoutJIT(ctx, q, func(q sqlx.ExtContext) error {
		return sqlx.SelectContext(ctx, q, &points, query, pq.Array(f.Orgs), f.From, f.To, f.Interval,
			products, billing, f.Zone, customers, narrowed)
	})
	return points, mapErr(err)
}

// withoutJIT runs fn in a transaction with PostgreSQL's JIT compilation off (on q's own
// transaction when q is one, for the rest of it). The metrics statement's estimates (a
// period series joined with hourly rows) cross the JIT cost thresholds: compiling it took
// seconds over a million orders where executing it takes tens of milliseconds.
func withoutJIT(ctx context.Context, q sqlx.ExtContext, fn func(sqlx.ExtContext) error) error {
	if db, isPool := q.(*sqlx.DB); isPool {
		return InTx(ctx, db, func(tx *sqlx.Tx) error { return withoutJIT(ctx, tx, fn) })
	}
	if _, err := q.ExecContext(ctx, `SET LOCAL jit = off`); err != nil {
		return err
	}
	return fn(q)
}
