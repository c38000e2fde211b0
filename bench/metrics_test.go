package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"till/storage"
)

// The metrics benchmark's data: a year of orders and the subscriptions behind them.
const (
	metricsOrders        = 1_000_000
	metricsSubscriptions = 100_000
	metricsCustomers     = 10_000
	metricsProducts      = 10
	metricsBatch         = 50_000 // rows per INSERT: the rollup triggers fold a statement at a time
	metricsRuns          = 200
)

// metricsAllProducts is the product id of the daily rollups' rows of all products.
const metricsAllProducts = "ffffffff-ffff-ffff-ffff-ffffffffffff"

// metricsYear is the window of the seeded orders and of the measured query.
var metricsYear = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// metricsCeilingSQL is the least a server can do for a year of daily revenue points: one
// hand-written statement over the coarsest rollups the answer can use, the rows of all
// products (migration 00105) of the UTC days (align 0) of metric_days and
// metric_subscription_days, with no product or customer filter, no zone other than UTC and
// only nine flows and the two subscription stocks summed, every one of them returned
// (PostgreSQL drops the sums of a subquery that no one reads).
const metricsCeilingSQL = `WITH flows AS (
		SELECT day AT TIME ZONE 'UTC' AS day, sum(orders) AS orders, sum(revenue) AS revenue,
			sum(net_revenue) AS net_revenue, sum(one_time_orders) AS one_time, sum(new_orders) AS new,
			sum(renewal_orders) AS renewals, sum(checkouts) AS checkouts, sum(canceled) AS canceled, sum(churned) AS churned
		FROM metric_days WHERE organization_id = $1 AND align = 0 AND product_id = $4 AND day >= $2 AND day < $3
		GROUP BY 1
	), stock AS (
		SELECT CASE WHEN day < $2 THEN NULL ELSE day AT TIME ZONE 'UTC' END AS day,
			sum(active) AS active, sum(monthly_amount) AS mrr
		FROM metric_subscription_days WHERE organization_id = $1 AND align = 0 AND product_id = $4 AND day < $3
		GROUP BY 1
	)
	SELECT d, coalesce(f.orders, 0), coalesce(f.revenue, 0), coalesce(f.net_revenue, 0), coalesce(f.one_time, 0),
		coalesce(f.new, 0), coalesce(f.renewals, 0), coalesce(f.checkouts, 0), coalesce(f.canceled, 0), coalesce(f.churned, 0),
		coalesce((SELECT active FROM stock WHERE day IS NULL), 0) + sum(coalesce(s.active, 0)) OVER w,
		coalesce((SELECT mrr FROM stock WHERE day IS NULL), 0) + sum(coalesce(s.mrr, 0)) OVER w
	FROM generate_series($2::timestamp, $3::timestamp - interval '1 day', interval '1 day') d
	LEFT JOIN flows f ON f.day = d LEFT JOIN stock s ON s.day = d
	WINDOW w AS (ORDER BY d) ORDER BY d`

// metricsCeilingFlowsSQL is metricsCeilingSQL for three flows alone (orders, revenue, net
// revenue): what GET /v1/metrics/ with those three metrics computes.
const metricsCeilingFlowsSQL = `WITH flows AS (
		SELECT day AT TIME ZONE 'UTC' AS day, sum(orders) AS orders, sum(revenue) AS revenue, sum(net_revenue) AS net_revenue
		FROM metric_days WHERE organization_id = $1 AND align = 0 AND product_id = $4 AND day >= $2 AND day < $3
		GROUP BY 1
	)
	SELECT d, coalesce(f.orders, 0), coalesce(f.revenue, 0), coalesce(f.net_revenue, 0)
	FROM generate_series($2::timestamp, $3::timestamp - interval '1 day', interval '1 day') d
	LEFT JOIN flows f ON f.day = d ORDER BY d`

// BenchmarkMetrics measures a year of daily metrics points over 1,000,000 orders and 100,000
// subscriptions of one organization, served by a running `till serve`, against the ceiling
// of one hand-written statement over the same rollups run from this process
// (metricsCeilingSQL, and metricsCeilingFlowsSQL for three metrics). The targets take turns
// for metricsRuns rounds; the table gives p50 and p99, and the ratio of each to the ceiling
// that computes the same answer. Targets, read by eye: Till's p99 under 100 ms and within 2x
// of the ceiling's.
// The seeding is not measured; its time is logged, as is the rollup's size.
func BenchmarkMetrics(b *testing.B) {
	began := time.Now()
	srv := startTill(b, "TILL_GRAPHQL_COST_BUDGET=0")
	seed := srv.demo(b)
	db, err := sqlx.Open("postgres", storage.WithBinaryParameters(srv.dsn(b)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	seedMetrics(b, db, seed.Organization.ID)
	var rows int
	if err := db.Get(&rows, `SELECT count(*) FROM metric_hours WHERE organization_id = $1`, seed.Organization.ID); err != nil {
		b.Fatal(err)
	}
	b.Logf("set-up (build, start, demo, seed %d orders and %d subscriptions): %s; %d rollup rows",
		metricsOrders, metricsSubscriptions, time.Since(began).Round(time.Second), rows)

	// The ceiling's one connection compiles nothing just in time, as Till's connections do not
	// (storage.NewConnector): JIT would cost it seconds.
	ctx := context.Background()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`SET jit = off`); err != nil {
		b.Fatal(err)
	}
	end := metricsYear.AddDate(1, 0, 0)
	ceilingOf := func(query string) func() error {
		stmt, err := db.PreparexContext(ctx, query)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = stmt.Close() })
		return func() error {
			r, err := stmt.QueryContext(ctx, seed.Organization.ID, metricsYear, end, metricsAllProducts)
			if err != nil {
				return err
			}
			n := 0
			for r.Next() {
				n++
			}
			if n != 365 {
				return fmt.Errorf("%d points", n)
			}
			return r.Close()
		}
	}
	ceiling, ceilingFlows := ceilingOf(metricsCeilingSQL), ceilingOf(metricsCeilingFlowsSQL)
	client := &http.Client{Timeout: 30 * time.Second}
	get := func(query string) func() error {
		return func() error {
			req, _ := http.NewRequest(http.MethodGet, srv.baseURL+"/v1/metrics/?start_date=2025-01-01&end_date=2025-12-31&interval=day"+query, nil)
			req.Header.Set("Authorization", "Bearer "+seed.OrganizationToken)
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				return fmt.Errorf("GET /v1/metrics/: %s %s %v", resp.Status, body, err)
			}
			return nil
		}
	}
	// of is the index of the ceiling that computes the same answer, for the ratio; -1 for none.
	targets := []struct {
		name string
		run  func() error
		of   int
	}{
		{"ceiling (one SQL over the rollups)", ceiling, -1},
		{"ceiling, three flows", ceilingFlows, -1},
		{"GET /v1/metrics/ revenue, orders, net revenue", get("&metrics=revenue&metrics=orders&metrics=net_revenue"), 1},
		// The ceiling's own sums: the same answer through the route.
		{"GET /v1/metrics/ the ceiling's metrics", get("&metrics=orders&metrics=revenue&metrics=net_revenue" +
			"&metrics=one_time_products&metrics=new_subscriptions&metrics=renewed_subscriptions&metrics=checkouts" +
			"&metrics=canceled_subscriptions&metrics=churned_subscriptions&metrics=active_subscriptions" +
			"&metrics=monthly_recurring_revenue"), 0},
		{"GET /v1/metrics/ every metric", get(""), -1},
		{"GET /v1/metrics/ one product", get("&product_id=" + metricsProductID(b, db, seed.Organization.ID)), -1},
		{"GET /v1/metrics/ recurring products", get("&billing_type=recurring"), -1},
		{"GET /v1/metrics/ two products", get(metricsTwoProducts(b, db, seed.Organization.ID)), -1},
		{"GET /v1/metrics/ every metric in Asia/Kolkata", get("&timezone=Asia/Kolkata"), -1},
		{"GET /v1/metrics/ one customer (base tables)", get("&customer_id=" + metricsCustomerID(b, db, seed.Organization.ID)), -1},
	}
	b.ResetTimer()
	for _, t := range targets {
		for range 5 { // warm-up: plans cached, pages in memory
			if err := t.run(); err != nil {
				b.Fatalf("%s: %v", t.name, err)
			}
		}
	}
	// The targets take turns, one run each per round, so that the machine's drift over the
	// run (a shared machine's ceiling moved by half within one run) weighs on all alike.
	lat := make([][]time.Duration, len(targets))
	for range metricsRuns {
		for i, t := range targets {
			start := time.Now()
			if err := t.run(); err != nil {
				b.Fatalf("%s: %v", t.name, err)
			}
			lat[i] = append(lat[i], time.Since(start))
		}
	}
	b.StopTimer()
	p50, p99 := make([]time.Duration, len(targets)), make([]time.Duration, len(targets))
	for i := range targets {
		sort.Slice(lat[i], func(a, c int) bool { return lat[i][a] < lat[i][c] })
		p50[i], p99[i] = percentile(lat[i], 0.50), percentile(lat[i], 0.99)
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-48s %10s %10s %12s\n", "target", "p50", "p99", "x ceiling")
	for i, t := range targets {
		ratio := ""
		if t.of >= 0 {
			ratio = fmt.Sprintf("%.2f / %.2f", float64(p50[i])/float64(p50[t.of]), float64(p99[i])/float64(p99[t.of]))
		}
		fmt.Fprintf(&table, "%-48s %10s %10s %12s\n", t.name, p50[i].Round(10*time.Microsecond),
			p99[i].Round(10*time.Microsecond), ratio)
	}
	fmt.Print(table.String()) // b.Log would cut the table after ten lines
}

// metricsProductID is one of the seeded recurring products: it has orders and subscriptions.
func metricsProductID(b *testing.B, db *sqlx.DB, org string) string {
	b.Helper()
	var id string
	if err := db.Get(&id, `SELECT id FROM products WHERE organization_id = $1 AND name LIKE 'Metrics product %'
		AND recurring_interval IS NOT NULL ORDER BY name LIMIT 1`, org); err != nil {
		b.Fatal(err)
	}
	return id
}

// metricsTwoProducts names two of the seeded recurring products, which hold some of the
// subscriptions but not all: their distinct subscribers are the products' own less the
// customers holding both (storage.metricsSubscribersOverlap).
func metricsTwoProducts(b *testing.B, db *sqlx.DB, org string) string {
	b.Helper()
	var ids []string
	if err := db.Select(&ids, `SELECT id FROM products WHERE organization_id = $1 AND name LIKE 'Metrics product %'
		AND recurring_interval IS NOT NULL ORDER BY name LIMIT 2`, org); err != nil || len(ids) != 2 {
		b.Fatalf("two products: %v %v", ids, err)
	}
	return "&product_id=" + ids[0] + "&product_id=" + ids[1]
}

// metricsCustomerID is one of the seeded customers (100 orders, 10 subscriptions).
func metricsCustomerID(b *testing.B, db *sqlx.DB, org string) string {
	b.Helper()
	var id string
	if err := db.Get(&id, `SELECT id FROM customers WHERE organization_id = $1 AND email = 'metrics1@bench.test'`, org); err != nil {
		b.Fatal(err)
	}
	return id
}

// seedMetrics stores metricsProducts products (half recurring), metricsCustomers customers,
// metricsOrders paid orders spread evenly over metricsYear (a tenth partly refunded; one
// time, new and renewal in turn) and metricsSubscriptions subscriptions of the recurring
// products started over the two years before its end, a fifth canceled and ended (of every
// product alike; a customer's subscriptions are of one product, but for a fifth of the
// customers, whose last is of another); the others' current period runs
// until a month after the organization's time (its test clock's, which `till demo` moves 32
// days ahead), so the server has no renewals to run while it is measured: their cycle orders
// and dunning would load the machine and add orders, and no metric reads the period end.
// Everything goes in with set-based
// INSERTs of metricsBatch rows, through the rollup triggers, and is folded into the rollups;
// invoice numbering and the payment-retry wake-ups are off meanwhile (they are not what is
// measured and would number a million invoices one by one).
func seedMetrics(b *testing.B, db *sqlx.DB, org string) {
	b.Helper()
	exec := func(q string, args ...any) {
		if _, err := db.Exec(q, args...); err != nil {
			b.Fatalf("seeding metrics: %v\n%s", err, q)
		}
	}
	exec(`ALTER TABLE orders DISABLE TRIGGER orders_number, DISABLE TRIGGER orders_wake`)
	defer exec(`ALTER TABLE orders ENABLE TRIGGER orders_number, ENABLE TRIGGER orders_wake`)
	exec(`INSERT INTO products (organization_id, name, recurring_interval, recurring_interval_count)
		SELECT $1, 'Metrics product ' || i, CASE WHEN i % 2 = 0 THEN 'month' END, CASE WHEN i % 2 = 0 THEN 1 END
		FROM generate_series(1, $2) i`, org, metricsProducts)
	exec(`INSERT INTO customers (organization_id, email) SELECT $1, 'metrics' || i || '@bench.test'
		FROM generate_series(1, $2) i`, org, metricsCustomers)
	const seedSQL = `WITH p AS (SELECT array_agg(id ORDER BY name) AS ids FROM products
			WHERE organization_id = $1 AND name LIKE 'Metrics product %'),
		c AS (SELECT array_agg(id) AS ids FROM customers WHERE organization_id = $1 AND email LIKE 'metrics%@bench.test')`
	for from := 0; from < metricsOrders; from += metricsBatch {
		exec(seedSQL+`
			INSERT INTO orders (organization_id, customer_id, product_id, status, billing_reason, currency,
				subtotal_amount, net_amount, total_amount, refunded_amount, created_at)
			SELECT $1, c.ids[1 + i % $4], p.ids[1 + i % $5],
				CASE WHEN i % 10 = 0 THEN 'partially_refunded' ELSE 'paid' END,
				(ARRAY['purchase', 'subscription_create', 'subscription_cycle'])[1 + i % 3], 'usd',
				1000 + i % 5000, 1000 + i % 5000, 1000 + i % 5000, CASE WHEN i % 10 = 0 THEN 500 ELSE 0 END,
				$6::timestamptz + (i::float8 / $7) * interval '365 days'
			FROM p, c, generate_series($2::int, $3::int) i`,
			org, from, min(from+metricsBatch, metricsOrders)-1, metricsCustomers, metricsProducts, metricsYear, metricsOrders)
	}
	for from := 0; from < metricsSubscriptions; from += metricsBatch {
		exec(seedSQL+`
			INSERT INTO subscriptions (organization_id, customer_id, product_id, status, amount, currency,
				recurring_interval, current_period_start, current_period_end, started_at, canceled_at, ended_at,
				customer_cancellation_reason)
			SELECT $1, c.ids[1 + i % $4], r.ids[1 + (i % $4 / 5 + (i % $4 < $4 / 5 AND i / $4 = 9)::int) % ($5 / 2)], CASE WHEN i % 5 = 0 THEN 'canceled' ELSE 'active' END,
				1000 + i % 3000, 'usd', CASE WHEN i % 4 = 0 THEN 'year' ELSE 'month' END, s.at,
				CASE WHEN i % 5 = 0 THEN s.at + interval '1 month' ELSE k.clock + interval '1 month' END,
				s.at, CASE WHEN i % 5 = 0 THEN s.at + interval '20 days' END,
				CASE WHEN i % 5 = 0 THEN s.at + interval '30 days' END,
				CASE WHEN i % 5 = 0 THEN (ARRAY['too_expensive', 'unused', 'other'])[1 + i % 3] END
			FROM c, generate_series($2::int, $3::int) i,
				(SELECT array_agg(id ORDER BY name) AS ids FROM products WHERE organization_id = $1
					AND name LIKE 'Metrics product %' AND recurring_interval IS NOT NULL) r,
				LATERAL (SELECT $6::timestamptz - interval '365 days' + (i::float8 / $7) * interval '730 days' AS at) s,
				LATERAL (SELECT coalesce((SELECT frozen_at FROM test_clocks WHERE organization_id = $1), now()) AS clock) k`,
			org, from, min(from+metricsBatch, metricsSubscriptions)-1, metricsCustomers, metricsProducts, metricsYear,
			metricsSubscriptions)
	}
	// What the server's fold job would do within seconds, done before measuring so that it
	// does not run meanwhile.
	exec(`SELECT metric_fold($1)`, org)
	// And what autovacuum would do within a minute of such a load: the fold leaves the change
	// tables and the subscriber queue full of dead rows, which every read would scan, and the
	// new rows' pages unmarked all-visible.
	exec(`VACUUM (ANALYZE) orders, subscriptions, metric_hours, metric_subscription_deltas, metric_days,
		metric_subscription_days, metric_hour_changes, metric_subscription_delta_changes, metric_subscriber_queue,
		metric_subscriber_islands`)
	// The vacuum's writes are flushed before measuring, not by a checkpoint during it.
	if _, err := db.Exec(`CHECKPOINT`); err != nil {
		b.Logf("CHECKPOINT before measuring: %v", err)
	}
}
