package storage_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// seedSubscribers stores, in a new organization, 10,000 customers holding 100,000
// subscriptions of ten products started over two years, half of them ended, then rebuilds
// the organization's rollups so that nothing is queued.
func seedSubscribers(b *testing.B, db *sqlx.DB) (org uuid.UUID, products []uuid.UUID) {
	b.Helper()
	s := newMetricsShop(b, db)
	for _, q := range []string{
		`INSERT INTO products (organization_id, name, visibility, recurring_interval, recurring_interval_count)
			SELECT $1, 'Plan ' || i, 'public', 'month', 1 FROM generate_series(1, 9) i`,
		`INSERT INTO customers (organization_id, type, email)
			SELECT $1, 'individual', 'bench-' || i || '@example.com' FROM generate_series(1, 9999) i`,
		`INSERT INTO subscriptions (organization_id, customer_id, product_id, status, amount, currency, recurring_interval,
				current_period_start, current_period_end, started_at, ended_at)
			SELECT $1, c.ids[1 + i % 10000], p.ids[1 + (i * 7) % 10], CASE WHEN i % 2 = 0 THEN 'canceled' ELSE 'active' END,
				500 + i % 5000, 'usd', 'month', s.at, s.at + interval '1 month', s.at,
				CASE WHEN i % 2 = 0 THEN s.at + (i % 400) * interval '1 day' END
			FROM (SELECT array_agg(id ORDER BY id) AS ids FROM customers WHERE organization_id = $1) c,
				(SELECT array_agg(id ORDER BY id) AS ids FROM products WHERE organization_id = $1) p,
				generate_series(1, 100000) i,
				LATERAL (SELECT timestamptz '2025-01-01 00:00Z' + (i * 7919 % 730) * interval '1 day'
					+ (i % 24) * interval '1 hour' AS at) s`,
		`SELECT metric_rebuild($1)`,
	} {
		if _, err := db.Exec(q, s.org); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.Exec(`VACUUM ANALYZE`); err != nil {
		b.Fatal(err)
	}
	if err := db.Select(&products, `SELECT id FROM products WHERE organization_id = $1 ORDER BY id`, s.org); err != nil {
		b.Fatal(err)
	}
	return s.org, products
}

// queueCustomers moves the end of one subscription of each of n customers by an hour, which
// queues them for the fold.
func queueCustomers(b *testing.B, db *sqlx.DB, org uuid.UUID, n int) {
	b.Helper()
	if _, err := db.Exec(`UPDATE subscriptions SET ended_at = coalesce(ended_at + interval '1 hour', started_at + interval '90 days')
		WHERE id IN (SELECT DISTINCT ON (customer_id) id FROM subscriptions WHERE organization_id = $1
			AND customer_id IN (SELECT id FROM customers WHERE organization_id = $1 ORDER BY random() LIMIT $2)
			ORDER BY customer_id, id)`, org, n); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkMetricsSubscribers measures what the subscribers stock costs a read of a year of
// daily points (MRR alone, then MRR with subscribers as ARPU reads them, with customers
// queued or not) and what a fold costs per queued customer, over 100,000 subscriptions of
// 10,000 customers.
func BenchmarkMetricsSubscribers(b *testing.B) {
	db := storagetest.New(b)
	ctx := context.Background()
	org, products := seedSubscribers(b, db)
	year := storage.MetricsFilter{Orgs: []uuid.UUID{org}, From: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC),
		To: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), Interval: "day", Zone: "UTC"}
	read := func(b *testing.B, f storage.MetricsFilter) {
		for b.Loop() {
			if _, err := storage.Metrics(ctx, db, f); err != nil {
				b.Fatal(err)
			}
		}
	}
	mrr, arpu := []string{"monthly_recurring_revenue"}, []string{"monthly_recurring_revenue", "subscribers"}
	for _, queued := range []int{0, 100} {
		if queued > 0 {
			queueCustomers(b, db, org, queued)
		}
		for _, tc := range []struct {
			name     string
			cols     []string
			products []uuid.UUID
		}{
			{"mrr", mrr, nil}, {"arpu", arpu, nil},
			{"mrr of one product", mrr, products[:1]}, {"arpu of one product", arpu, products[:1]},
			{"mrr of two products", mrr, products[:2]}, {"arpu of two products", arpu, products[:2]},
		} {
			b.Run(fmt.Sprintf("read a year by day: %s, %d queued", tc.name, queued), func(b *testing.B) {
				f := year
				f.Columns, f.Products = tc.cols, tc.products
				// TILL_EXPLAIN names a directory to write each read's plan to.
				if dir := os.Getenv("TILL_EXPLAIN"); dir != "" {
					plan, err := storage.ExplainMetrics(ctx, db, f)
					if err != nil {
						b.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(dir, strings.NewReplacer(" ", "_", "/", "_", ":", "").Replace(b.Name())+".txt"),
						[]byte(plan), 0o644); err != nil {
						b.Fatal(err)
					}
				}
				read(b, f)
			})
		}
	}
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("fold %d queued customers", n), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				if _, err := storage.FoldMetrics(ctx, db); err != nil {
					b.Fatal(err)
				}
				queueCustomers(b, db, org, n)
				b.StartTimer()
				if _, err := storage.FoldMetrics(ctx, db); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/customer")
		})
		// The same changes with their customers taken off the queue: what the fold cost
		// before subscribers, for the difference.
		b.Run(fmt.Sprintf("fold %d customers' changes without their islands", n), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				queueCustomers(b, db, org, n)
				if _, err := db.Exec(`DELETE FROM metric_subscriber_queue`); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := storage.FoldMetrics(ctx, db); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/customer")
			if _, err := db.Exec(`SELECT metric_rebuild($1)`, org); err != nil {
				b.Fatal(err)
			}
		})
		// The islands alone: customers queued with nothing changed, so that the fold
		// recomputes their islands and writes no change.
		b.Run(fmt.Sprintf("recompute %d queued customers' islands", n), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				if _, err := db.Exec(`INSERT INTO metric_subscriber_queue SELECT organization_id, id FROM customers
					WHERE organization_id = $1 ORDER BY random() LIMIT $2`, org, n); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := storage.FoldMetrics(ctx, db); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/customer")
		})
	}
}
