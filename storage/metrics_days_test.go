package storage_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// seedAroundDST stores, for s and a second product of its organization, orders every seven hours from February to mid-April 2026 (over
// the American, European and New Zealand daylight saving changes, and every hour around
// them) in turn one time, new and renewal, a
// third of them refunded a month after they were paid; an order backdated to December, as a
// test clock makes one; and subscriptions started before and during the window, some in a
// trial ending at an odd hour of it, some canceled and ended in it (one during its trial),
// some set to end (one before its trial would have ended).
func seedAroundDST(t *testing.T, db *sqlx.DB, s metricsShop) {
	t.Helper()
	ctx := context.Background()
	reasons := []string{"purchase", "subscription_create", "subscription_cycle"}
	other, err := storage.CreateProduct(ctx, db, s.org, storage.ProductWrite{Name: "Other", Visibility: "public"})
	if err != nil {
		t.Fatal(err)
	}
	shops := []metricsShop{s, {org: s.org, customer: s.customer, product: other.ID}}
	start := time.Date(2026, 2, 20, 3, 0, 0, 0, time.UTC)
	for i, at := 0, start; at.Before(time.Date(2026, 4, 15, 0, 0, 0, 0, time.UTC)); i, at = i+1, at.Add(7*time.Hour) {
		id := shops[i%5%2].order(t, db, at.Add(time.Duration(i%60)*time.Minute), int64(100+i), reasons[i%3])
		if i%3 == 0 {
			if _, err := storage.AddOrderRefund(ctx, db, id, int64(10+i), 0, at.AddDate(0, 1, 0)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Every hour of the days around the changes, so that an hour too many or too few shows.
	for _, change := range []time.Time{time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC), time.Date(2026, 4, 5, 0, 0, 0, 0, time.UTC)} {
		for h := -36; h < 36; h++ {
			s.order(t, db, change.Add(time.Duration(h)*time.Hour+20*time.Minute), int64(100+h), reasons[(h+36)%3])
		}
	}
	s.order(t, db, time.Date(2025, 12, 31, 23, 30, 0, 0, time.UTC), 5000, "subscription_cycle")
	for i := range 12 {
		began := time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 97 * time.Hour)
		w := storage.SubscriptionWrite{CustomerID: s.customer,
			ProductID: shops[i%2].product, Status: "active", Amount: int64(1000 + 100*i), Currency: "usd", RecurringInterval: "month",
			RecurringIntervalCount: 1, CurrentPeriodStart: began, CurrentPeriodEnd: began.AddDate(0, 1, 0), StartedAt: &began}
		if i%2 == 0 || i%4 == 1 {
			trialEnd := began.Add(time.Duration(40+60*i) * time.Hour)
			w.Status, w.TrialStart, w.TrialEnd = "trialing", &began, &trialEnd
		}
		sub, err := storage.CreateSubscription(ctx, db, s.org, began, w)
		if err != nil {
			t.Fatal(err)
		}
		if i%3 == 2 {
			if _, err := db.Exec(`UPDATE subscriptions SET cancel_at_period_end = true, canceled_at = $2, ends_at = $3
				WHERE id = $1`, sub.ID, began.Add(100*time.Hour), began.Add(time.Duration(100+48*i)*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		if i%3 == 1 {
			if _, err := db.Exec(`UPDATE subscriptions SET canceled_at = $2, ended_at = $3, status = 'canceled',
				customer_cancellation_reason = 'too_expensive' WHERE id = $1`,
				sub.ID, began.Add(250*time.Hour), began.Add(500*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestMetricsDailyRollupsEqualTheBaseTables checks that the daily rollups answer, in zones
// of whole-hour offsets with and without daylight saving time, what the base tables answer:
// per day across the changes (23- and 25-hour days), per week and month, and per hour.
func TestMetricsDailyRollupsEqualTheBaseTables(t *testing.T) {
	t.Parallel()
	db := storagetest.New(t)
	ctx := context.Background()
	s := newMetricsShop(t, db)
	seedAroundDST(t, db, s)
	checkRebuild(t, db, s.org)

	windows := []struct {
		interval   string
		from, to   [3]int // year, month, day of the first day and of the day after the last
		wantPoints int
	}{
		{"day", [3]int{2026, 3, 1}, [3]int{2026, 4, 5}, 35},
		{"week", [3]int{2026, 2, 18}, [3]int{2026, 4, 20}, 9},
		{"month", [3]int{2025, 12, 1}, [3]int{2026, 5, 1}, 5},
		{"hour", [3]int{2026, 3, 7}, [3]int{2026, 3, 10}, 72},
	}
	zones := []string{"UTC", "America/New_York", "Europe/Berlin", "Asia/Tokyo", "Pacific/Auckland", "America/Sao_Paulo"}
	for _, zone := range zones {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range windows {
			t.Run(fmt.Sprintf("%s points in %s", w.interval, zone), func(t *testing.T) {
				f := storage.MetricsFilter{Orgs: []uuid.UUID{s.org}, Interval: w.interval, Zone: zone,
					From: time.Date(w.from[0], time.Month(w.from[1]), w.from[2], 0, 0, 0, 0, loc),
					To:   time.Date(w.to[0], time.Month(w.to[1]), w.to[2], 0, 0, 0, 0, loc)}
				rolled, err := storage.Metrics(ctx, db, f)
				if err != nil {
					t.Fatal(err)
				}
				base, err := storage.MetricsFromBase(ctx, db, f)
				if err != nil {
					t.Fatal(err)
				}
				if w.interval != "hour" && len(rolled) != w.wantPoints {
					t.Errorf("%d points, want %d", len(rolled), w.wantPoints)
				}
				if diff := cmp.Diff(base, rolled); diff != "" {
					t.Errorf("rollups differ from the base tables (-base +rollups):\n%s", diff)
				}
				f.Products = []uuid.UUID{s.product}
				narrowed, err := storage.Metrics(ctx, db, f)
				if err != nil {
					t.Fatal(err)
				}
				if base, err = storage.MetricsFromBase(ctx, db, f); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(base, narrowed); diff != "" {
					t.Errorf("rollups of one product differ from the base tables (-base +rollups):\n%s", diff)
				}
				if cmp.Equal(narrowed, rolled) {
					t.Error("one product's points are all products'")
				}
			})
		}
	}

	t.Run("some columns are computed alone as among all", func(t *testing.T) {
		f := storage.MetricsFilter{Orgs: []uuid.UUID{s.org}, Interval: "day", Zone: "America/New_York",
			From: time.Date(2026, 3, 1, 5, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 20, 4, 0, 0, 0, time.UTC)}
		all, err := storage.Metrics(ctx, db, f)
		if err != nil {
			t.Fatal(err)
		}
		// The seed gives every split stock a value in this window, so that comparing them
		// compares something.
		splits := splitStocks(all)
		for i := range 4 {
			if !slices.ContainsFunc(splits, func(s [4]int64) bool { return s[i] != 0 }) {
				t.Fatalf("split stock %d is 0 on every day", i)
			}
		}
		tests := []struct {
			cols []string
			pick func(p storage.MetricsPoint) storage.MetricsPoint
		}{
			{[]string{"net_cumulative_revenue"}, func(p storage.MetricsPoint) storage.MetricsPoint {
				return storage.MetricsPoint{Timestamp: p.Timestamp, NetCumulativeRevenue: p.NetCumulativeRevenue}
			}},
			// Each stock column is computed alone.
			{[]string{"active_at_start", "churned"}, func(p storage.MetricsPoint) storage.MetricsPoint {
				return storage.MetricsPoint{Timestamp: p.Timestamp, ActiveAtStart: p.ActiveAtStart, Churned: p.Churned}
			}},
			{[]string{"monthly_recurring_revenue"}, func(p storage.MetricsPoint) storage.MetricsPoint {
				return storage.MetricsPoint{Timestamp: p.Timestamp, MonthlyRecurringRevenue: p.MonthlyRecurringRevenue}
			}},
			// Their committed and trialing splits do not.
			{[]string{"committed_subscriptions", "trial_monthly_recurring_revenue"}, func(p storage.MetricsPoint) storage.MetricsPoint {
				return storage.MetricsPoint{Timestamp: p.Timestamp, CommittedSubscriptions: p.CommittedSubscriptions,
					TrialMonthlyRecurringRevenue: p.TrialMonthlyRecurringRevenue}
			}},
			{[]string{"committed_monthly_recurring_revenue", "trial_committed_monthly_recurring_revenue", "active_subscriptions"},
				func(p storage.MetricsPoint) storage.MetricsPoint {
					return storage.MetricsPoint{Timestamp: p.Timestamp, ActiveSubscriptions: p.ActiveSubscriptions,
						CommittedMonthlyRecurringRevenue:      p.CommittedMonthlyRecurringRevenue,
						TrialCommittedMonthlyRecurringRevenue: p.TrialCommittedMonthlyRecurringRevenue}
				}},
			{[]string{}, func(p storage.MetricsPoint) storage.MetricsPoint { return storage.MetricsPoint{Timestamp: p.Timestamp} }},
		}
		for _, tt := range tests {
			f.Columns = tt.cols
			some, err := storage.Metrics(ctx, db, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(some) != len(all) {
				t.Fatalf("%v: %d points, want %d", tt.cols, len(some), len(all))
			}
			for i := range all {
				if diff := cmp.Diff(tt.pick(all[i]), some[i]); diff != "" {
					t.Fatalf("%v, point %d (-want +got):\n%s", tt.cols, i, diff)
				}
			}
		}
	})
}
