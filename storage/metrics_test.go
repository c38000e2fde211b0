package storage_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// metricsShop is an organization with a customer and a product to sell.
type metricsShop struct {
	org, customer, product uuid.UUID
}

func newMetricsShop(t testing.TB, db *sqlx.DB) metricsShop {
	t.Helper()
	ctx := context.Background()
	slug := "m-" + uuid.NewString()[:8]
	o, err := storage.CreateOrganization(ctx, db, "Org "+slug, slug)
	if err != nil {
		t.Fatal(err)
	}
	c, err := storage.CreateCustomer(ctx, db, o.ID, storage.CustomerWrite{Type: storage.CustomerTypeIndividual,
		Email: ptr(slug + "@example.com")})
	if err != nil {
		t.Fatal(err)
	}
	p, err := storage.CreateProduct(ctx, db, o.ID, storage.ProductWrite{Name: "Plan", Visibility: "public"})
	if err != nil {
		t.Fatal(err)
	}
	return metricsShop{org: o.ID, customer: c.ID, product: p.ID}
}

func (s metricsShop) order(t testing.TB, q sqlx.ExtContext, at time.Time, amount int64, reason string) uuid.UUID {
	t.Helper()
	o, err := storage.InsertOrder(context.Background(), q, s.org, at, storage.OrderWrite{CustomerID: s.customer,
		ProductID: &s.product, Status: "paid", BillingReason: storage.OrderBillingReason(reason), Currency: "usd", SubtotalAmount: amount,
		NetAmount: amount, TotalAmount: amount})
	if err != nil {
		t.Fatal(err)
	}
	return o.ID
}

// rollups reads an organization's rollup rows, hourly and daily, as text, for comparing them with a rebuild.
func rollups(t *testing.T, db *sqlx.DB, org uuid.UUID) []string {
	t.Helper()
	var rows []string
	if err := db.Select(&rows, `SELECT row_to_json(m)::text FROM metric_hours m WHERE organization_id = $1
		UNION ALL SELECT row_to_json(d)::text FROM metric_subscription_deltas d WHERE organization_id = $1
		UNION ALL SELECT row_to_json(m)::text FROM metric_days m WHERE organization_id = $1
		UNION ALL SELECT row_to_json(d)::text FROM metric_subscription_days d WHERE organization_id = $1
		UNION ALL SELECT 'quarter ' || row_to_json(m)::text FROM metric_quarters m WHERE organization_id = $1
		UNION ALL SELECT 'quarter ' || row_to_json(d)::text FROM metric_subscription_quarters d WHERE organization_id = $1
		ORDER BY 1`, org); err != nil {
		t.Fatal(err)
	}
	return rows
}

// dailySums reads an organization's daily rows of all products (00105_metric_all_products),
// or the sums of its products' daily rows, as text, leaving out the days where what it reads
// is all zero.
func dailySums(t *testing.T, db *sqlx.DB, org uuid.UUID, allProducts bool) []string {
	t.Helper()
	const all = `'ffffffff-ffff-ffff-ffff-ffffffffffff'`
	cond := "product_id <> " + all
	if allProducts {
		cond = "product_id = " + all
	}
	var rows []string
	if err := db.Select(&rows, `SELECT * FROM (
			SELECT format('flows %s %s %s', align, day, (sum(orders), sum(revenue), sum(net_revenue), sum(renewal_orders),
				sum(checkouts), sum(canceled), sum(churned))) AS r
			FROM metric_days WHERE organization_id = $1 AND `+cond+` GROUP BY align, day
			HAVING (sum(orders), sum(revenue), sum(net_revenue), sum(renewal_orders), sum(checkouts), sum(canceled),
				sum(churned)) <> (0, 0, 0, 0, 0, 0, 0)
			UNION ALL SELECT format('stock %s %s %s', align, day, (sum(active), sum(monthly_amount), sum(committed),
				sum(committed_monthly_amount), sum(trial_monthly_amount), sum(trial_committed_monthly_amount)))
			FROM metric_subscription_days WHERE organization_id = $1 AND `+cond+` GROUP BY align, day
			HAVING (sum(active), sum(monthly_amount), sum(committed), sum(committed_monthly_amount),
				sum(trial_monthly_amount), sum(trial_committed_monthly_amount)) <> (0, 0, 0, 0, 0, 0)) s
		ORDER BY 1`, org); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("no daily rows to compare")
	}
	return rows
}

// checkRebuild fails the test unless the organization's series reads the same before and
// after its appended changes are folded, and its rollups, as the triggers and the fold left
// them, equal what metric_rebuild computes from the base tables, and its daily rows of all
// products equal the sums of its products'.
func checkRebuild(t *testing.T, db *sqlx.DB, org uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	series := func() []storage.MetricsPoint {
		t.Helper()
		points, err := storage.Metrics(ctx, db, storage.MetricsFilter{Orgs: []uuid.UUID{org}, Interval: "day",
			Zone: "America/New_York", From: time.Date(2025, 10, 1, 4, 0, 0, 0, time.UTC),
			To: time.Date(2026, 9, 1, 4, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		return points
	}
	unfolded := series()
	if _, err := storage.FoldMetrics(ctx, db); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(unfolded, series()); diff != "" {
		t.Fatalf("the series changed when the changes were folded (-unfolded +folded):\n%s", diff)
	}
	if diff := cmp.Diff(dailySums(t, db, org, false), dailySums(t, db, org, true)); diff != "" {
		t.Fatalf("the daily all-products rows differ from the sums of the products' (-sums +rows):\n%s", diff)
	}
	live := rollups(t, db, org)
	if _, err := db.Exec(`SELECT metric_rebuild($1)`, org); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rollups(t, db, org), live); diff != "" {
		t.Fatalf("live rollups differ from a rebuild (-rebuild +live):\n%s", diff)
	}
}

func TestMetricsRollups(t *testing.T) {
	db := storagetest.New(t)
	ctx := context.Background()
	day := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)

	t.Run("a late refund lowers the net revenue of the day the order was paid", func(t *testing.T) {
		s := newMetricsShop(t, db)
		id := s.order(t, db, day.Add(5*time.Hour), 1000, "purchase")
		if _, err := storage.AddOrderRefund(ctx, db, id, 300, 0, day.AddDate(0, 1, 0)); err != nil {
			t.Fatal(err)
		}
		points, err := storage.Metrics(ctx, db, storage.MetricsFilter{Orgs: []uuid.UUID{s.org}, From: day,
			To: day.AddDate(0, 0, 2), Interval: "day", Zone: "UTC"})
		if err != nil {
			t.Fatal(err)
		}
		got := [][3]int64{{points[0].Orders, points[0].Revenue, points[0].NetRevenue},
			{points[1].Orders, points[1].Revenue, points[1].NetRevenue}}
		if want := [][3]int64{{1, 1000, 700}, {0, 0, 0}}; !cmp.Equal(got, want) {
			t.Fatalf("orders, revenue, net revenue per day: got %v, want %v", got, want)
		}
	})

	t.Run("a subscription counts as active until it ends, and its cancellation and churn in their days", func(t *testing.T) {
		s := newMetricsShop(t, db)
		start := day.Add(2 * time.Hour)
		sub, err := storage.CreateSubscription(ctx, db, s.org, start, storage.SubscriptionWrite{CustomerID: s.customer,
			ProductID: s.product, Status: "active", Amount: 1200, Currency: "usd", RecurringInterval: "year",
			RecurringIntervalCount: 1, CurrentPeriodStart: start, CurrentPeriodEnd: start.AddDate(1, 0, 0), StartedAt: &start})
		if err != nil {
			t.Fatal(err)
		}
		// Canceled without a reason on the second day, ended on the third.
		if _, err := db.Exec(`UPDATE subscriptions SET canceled_at = $2, ended_at = $3, status = 'canceled' WHERE id = $1`,
			sub.ID, day.AddDate(0, 0, 1), day.AddDate(0, 0, 2).Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		points, err := storage.Metrics(ctx, db, storage.MetricsFilter{Orgs: []uuid.UUID{s.org}, From: day.AddDate(0, 0, -1),
			To: day.AddDate(0, 0, 4), Interval: "day", Zone: "UTC"})
		if err != nil {
			t.Fatal(err)
		}
		var got [][4]int64
		for _, p := range points {
			got = append(got, [4]int64{p.ActiveSubscriptions, p.MonthlyRecurringRevenue, p.Canceled, p.Churned})
		}
		want := [][4]int64{{0, 0, 0, 0}, {1, 100, 0, 0}, {1, 100, 1, 0}, {0, 0, 0, 1}, {0, 0, 0, 0}}
		if !cmp.Equal(got, want) {
			t.Errorf("active, MRR, canceled, churned per day: got %v, want %v", got, want)
		}
		checkRebuild(t, db, s.org)
	})

	t.Run("a subscription adds to MRR from the end of its trial, and not at all when it ends in it", func(t *testing.T) {
		s := newMetricsShop(t, db)
		start := day.Add(2 * time.Hour)
		subscribe := func(trialEnd time.Time) uuid.UUID {
			sub, err := storage.CreateSubscription(ctx, db, s.org, start, storage.SubscriptionWrite{CustomerID: s.customer,
				ProductID: s.product, Status: "trialing", Amount: 3000, Currency: "usd", RecurringInterval: "month",
				RecurringIntervalCount: 1, CurrentPeriodStart: start, CurrentPeriodEnd: trialEnd, StartedAt: &start})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`UPDATE subscriptions SET trial_start = $2, trial_end = $3 WHERE id = $1`, sub.ID, start, trialEnd); err != nil {
				t.Fatal(err)
			}
			return sub.ID
		}
		subscribe(day.AddDate(0, 0, 2).Add(time.Hour))
		quitter := subscribe(day.AddDate(0, 0, 2).Add(time.Hour))
		if _, err := db.Exec(`UPDATE subscriptions SET ended_at = $2, status = 'canceled' WHERE id = $1`,
			quitter, day.AddDate(0, 0, 1).Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		points, err := storage.Metrics(ctx, db, storage.MetricsFilter{Orgs: []uuid.UUID{s.org}, From: day,
			To: day.AddDate(0, 0, 4), Interval: "day", Zone: "UTC"})
		if err != nil {
			t.Fatal(err)
		}
		var got [][2]int64
		for _, p := range points {
			got = append(got, [2]int64{p.ActiveSubscriptions, p.MonthlyRecurringRevenue})
		}
		if want := [][2]int64{{2, 0}, {1, 0}, {1, 3000}, {1, 3000}}; !cmp.Equal(got, want) {
			t.Errorf("active, MRR per day: got %v, want %v", got, want)
		}
		checkRebuild(t, db, s.org)
	})

	t.Run("the rollups equal a rebuild from the base tables after orders, refunds and folds race", func(t *testing.T) {
		s := newMetricsShop(t, db)
		var wg, folders sync.WaitGroup
		errs := make(chan error, 64)
		writing := make(chan struct{})
		for range 3 {
			folders.Add(1)
			go func() {
				defer folders.Done()
				for {
					if _, err := storage.FoldMetrics(ctx, db); err != nil {
						errs <- fmt.Errorf("fold: %w", err)
						return
					}
					select {
					case <-writing:
						return
					default:
					}
				}
			}()
		}
		for i := range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
					id := s.order(t, tx, day.Add(time.Duration(i%3)*time.Hour), int64(1000+i), "purchase")
					if i%2 == 0 {
						_, err := storage.AddOrderRefund(ctx, tx, id, 100, 0, day)
						return err
					}
					return nil
				})
				if err != nil {
					errs <- fmt.Errorf("order %d: %w", i, err)
				}
			}()
		}
		wg.Wait()
		close(writing)
		folders.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		checkRebuild(t, db, s.org)
		var orders int64
		if err := db.Get(&orders, `SELECT sum(orders) FROM metric_hours WHERE organization_id = $1`, s.org); err != nil || orders != 32 {
			t.Fatalf("orders counted: %d (%v), want 32", orders, err)
		}
	})
}

func TestMetricsWritersOfOneProductAndHourDoNotWaitForEachOther(t *testing.T) {
	t.Parallel()
	db := storagetest.New(t)
	ctx := context.Background()
	s := newMetricsShop(t, db)
	at := time.Date(2026, 3, 10, 9, 15, 0, 0, time.UTC)
	first, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Rollback() }()
	s.order(t, first, at, 1000, "purchase")
	// The second order, of the same product in the same hour, commits while the first
	// transaction is still open.
	waitCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err = storage.InTx(waitCtx, db, func(tx *sqlx.Tx) error {
		_, err := storage.InsertOrder(waitCtx, tx, s.org, at.Add(time.Minute), storage.OrderWrite{CustomerID: s.customer,
			ProductID: &s.product, Status: "paid", BillingReason: "purchase", Currency: "usd", SubtotalAmount: 500,
			NetAmount: 500, TotalAmount: 500})
		return err
	})
	if err != nil {
		t.Fatalf("the second order waited for the first: %v", err)
	}
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	checkRebuild(t, db, s.org)
}

func TestMetricsRefuseAZonePostgreSQLDoesNotKnow(t *testing.T) {
	t.Parallel()
	db := storagetest.New(t)
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, exact := range []bool{false, true} {
		_, err := storage.Metrics(context.Background(), db, storage.MetricsFilter{Orgs: []uuid.UUID{uuid.New()}, From: day,
			To: day.AddDate(0, 0, 2), Interval: "day", Zone: "Mars/Olympus_Mons", Exact: exact})
		if !errors.Is(err, storage.ErrUnknownTimeZone) {
			t.Errorf("exact %v: err = %v, want ErrUnknownTimeZone", exact, err)
		}
	}
}
