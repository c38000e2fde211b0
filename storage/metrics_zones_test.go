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
	"github.com/lib/pq"

	"till/storage"
	"till/storage/storagetest"
)

// splitZones are zones whose offset is not whole hours: India (+5:30), Nepal (+5:45), and two
// of half hours with daylight saving time, Newfoundland (its change on 8 March 2026) and
// Adelaide (its change on 5 April 2026).
var splitZones = []string{"Asia/Kolkata", "Asia/Kathmandu", "America/St_Johns", "Australia/Adelaide"}

// cutTimes are, for each local midnight of the zones from first to last (dates), the
// midnight itself, a microsecond before and after it, and the start of the UTC hour it falls
// in and a microsecond before that, in time order.
func cutTimes(t *testing.T, zones []string, first, last time.Time) []time.Time {
	t.Helper()
	var times []time.Time
	for _, zone := range zones {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
			x := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc)
			hour := x.Truncate(time.Hour)
			times = append(times, x.Add(-time.Microsecond), x, x.Add(time.Microsecond), hour.Add(-time.Microsecond), hour)
		}
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	return times
}

// seedAtCuts stores, at each of times, an order (one time, new and renewal in turn, some
// partly refunded) and a checkout (some succeeded), alternately of s.product and other; and
// at every fifth a subscription started then, of either product, monthly or yearly, some in
// a trial, some canceled and ended, some set to end (some of these during their trial), each
// of these times taken from times further on, so that every stock change also falls at, just
// before and just after the cuts.
func seedAtCuts(t *testing.T, db *sqlx.DB, s metricsShop, other uuid.UUID, times []time.Time) {
	t.Helper()
	at := pq.Array(times)
	if _, err := db.Exec(`INSERT INTO orders (organization_id, customer_id, product_id, status, billing_reason, currency,
			subtotal_amount, net_amount, total_amount, refunded_amount, created_at)
		SELECT $1, $2, CASE WHEN i % 2 = 0 THEN $3 ELSE $4 END::uuid,
			CASE WHEN i % 4 = 0 THEN 'partially_refunded' ELSE 'paid' END,
			(ARRAY['purchase', 'subscription_create', 'subscription_cycle'])[1 + i % 3], 'usd',
			100 + i, 100 + i, 100 + i, CASE WHEN i % 4 = 0 THEN 7 + i % 13 ELSE 0 END, x
		FROM unnest($5::timestamptz[]) WITH ORDINALITY u (x, i)`, s.org, s.customer, s.product, other, at); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO checkouts (organization_id, client_secret, expires_at, success_url, product_id, status,
			created_at)
		SELECT $1, gen_random_uuid()::text, x + interval '1 hour', 'https://example.com/ok',
			CASE WHEN i % 2 = 1 THEN $2 ELSE $3 END::uuid, CASE WHEN i % 3 = 0 THEN 'succeeded' ELSE 'open' END, x
		FROM unnest($4::timestamptz[]) WITH ORDINALITY u (x, i)`, s.org, s.product, other, at); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO subscriptions (organization_id, customer_id, product_id, status, amount, currency,
			recurring_interval, current_period_start, current_period_end, started_at, trial_start, trial_end,
			canceled_at, ended_at, ends_at, cancel_at_period_end, customer_cancellation_reason)
		SELECT $1, $2, CASE WHEN i % 2 = 0 THEN $3 ELSE $4 END::uuid,
			CASE WHEN i % 4 = 1 THEN 'canceled' WHEN i % 3 = 0 THEN 'trialing' ELSE 'active' END,
			1000 + 10 * i, 'usd', CASE WHEN i % 7 = 0 THEN 'year' ELSE 'month' END, a[i], a[i] + interval '1 month', a[i],
			CASE WHEN i % 3 = 0 THEN a[i] END, CASE WHEN i % 3 = 0 THEN a[i + 31] END,
			CASE WHEN i % 4 IN (1, 2) THEN a[i + 17] END,
			CASE WHEN i % 8 = 1 THEN a[i + 53] WHEN i % 8 = 5 THEN a[i + 19] END,
			CASE WHEN i % 8 = 2 THEN a[i + 41] WHEN i % 8 = 6 THEN a[i + 23] END, i % 4 = 2,
			CASE WHEN i % 4 = 1 THEN 'too_expensive' WHEN i % 8 = 2 THEN 'unused' END
		FROM (SELECT $5::timestamptz[] AS a) t, generate_series(1, cardinality($5::timestamptz[]), 5) i`,
		s.org, s.customer, s.product, other, at); err != nil {
		t.Fatal(err)
	}
}

// TestMetricsOfSplitZonesEqualTheBaseTables checks that in zones whose offset is not whole
// hours the rollups cut with pieces of the quarter-hour rollups, or of the base tables,
// answer what the base tables alone answer, every column, per day (over the daylight saving
// time changes), week and month, of all products and of one, with the changes unfolded,
// partly folded and folded, and with orders, checkouts and subscription changes at, just
// before and just after every cut.
func TestMetricsOfSplitZonesEqualTheBaseTables(t *testing.T) {
	t.Parallel()
	db := storagetest.New(t)
	ctx := context.Background()
	s := newMetricsShop(t, db)
	other, err := storage.CreateProduct(ctx, db, s.org, storage.ProductWrite{Name: "Other", Visibility: "public"})
	if err != nil {
		t.Fatal(err)
	}
	times := cutTimes(t, splitZones, time.Date(2025, 11, 25, 0, 0, 0, 0, time.UTC), time.Date(2026, 5, 3, 0, 0, 0, 0, time.UTC))
	var early, late []time.Time
	for i, at := range times {
		if i%2 == 0 {
			early = append(early, at)
		} else {
			late = append(late, at)
		}
	}

	type window struct {
		interval   string
		from, to   [5]int // local year, month, day, hour, minute
		wantPoints int
	}
	windows := []window{
		{"day", [5]int{2026, 3, 1, 0, 0}, [5]int{2026, 4, 10, 0, 0}, 40},
		{"week", [5]int{2026, 2, 18, 0, 0}, [5]int{2026, 4, 20, 0, 0}, 9},
		{"month", [5]int{2025, 12, 1, 0, 0}, [5]int{2026, 5, 1, 0, 0}, 5},
		// Windows cut inside hours apart from midnight, and one within an hour.
		{"day", [5]int{2026, 3, 7, 5, 10}, [5]int{2026, 3, 10, 7, 50}, 4},
		{"week", [5]int{2026, 3, 2, 0, 10}, [5]int{2026, 3, 2, 0, 40}, 1},
	}
	var seen storage.MetricsPoint // sums of the references, so that none compared is zero throughout
	check := func(t *testing.T, stage string) {
		t.Helper()
		for _, zone := range splitZones {
			loc, err := time.LoadLocation(zone)
			if err != nil {
				t.Fatal(err)
			}
			local := func(d [5]int) time.Time { return time.Date(d[0], time.Month(d[1]), d[2], d[3], d[4], 0, 0, loc) }
			for _, w := range windows {
				for i, products := range [][]uuid.UUID{nil, {s.product}, nil, {s.product}} {
					// Pieces from the quarter rollups, then from the base tables, as a cut off
					// the quarter hours reads them.
					quarters := i < 2
					name := fmt.Sprintf("%s, %s points from %v in %s, products %v, quarters %v", stage, w.interval, w.from,
						zone, products, quarters)
					f := storage.MetricsFilter{Orgs: []uuid.UUID{s.org}, Interval: w.interval, Zone: zone, Exact: true,
						Quarters: quarters, From: local(w.from), To: local(w.to), Products: products}
					cut, err := storage.Metrics(ctx, db, f)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					base, err := storage.MetricsFromBase(ctx, db, f)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if len(cut) != w.wantPoints {
						t.Errorf("%s: %d points, want %d", name, len(cut), w.wantPoints)
					}
					if diff := cmp.Diff(base, cut); diff != "" {
						t.Errorf("%s: the cut rollups differ from the base tables (-base +cut):\n%s", name, diff)
					}
					for _, p := range base {
						seen.Orders += p.Orders
						seen.NetRevenue += p.NetRevenue
						seen.NetCumulativeRevenue += p.NetCumulativeRevenue
						seen.Checkouts += p.Checkouts
						seen.SucceededCheckouts += p.SucceededCheckouts
						seen.Canceled += p.Canceled
						seen.Churned += p.Churned
						seen.ActiveSubscriptions += p.ActiveSubscriptions
						seen.MonthlyRecurringRevenue += p.MonthlyRecurringRevenue
						seen.CommittedSubscriptions += p.CommittedSubscriptions
						seen.TrialMonthlyRecurringRevenue += p.TrialMonthlyRecurringRevenue
						seen.TrialCommittedMonthlyRecurringRevenue += p.TrialCommittedMonthlyRecurringRevenue
					}
				}
			}
		}
	}

	// Every change is unfolded, then those of the early times folded and the late ones not
	// (and some early subscriptions changed since), then all folded.
	seedAtCuts(t, db, s, other.ID, early)
	check(t, "unfolded")
	if _, err := storage.FoldMetrics(ctx, db); err != nil {
		t.Fatal(err)
	}
	seedAtCuts(t, db, s, other.ID, late)
	if _, err := db.Exec(`UPDATE subscriptions SET ended_at = canceled_at + interval '30 minutes', status = 'canceled'
		WHERE organization_id = $1 AND canceled_at IS NOT NULL AND ended_at IS NULL AND amount % 30 = 0`, s.org); err != nil {
		t.Fatal(err)
	}
	check(t, "partly folded")
	if _, err := storage.FoldMetrics(ctx, db); err != nil {
		t.Fatal(err)
	}
	check(t, "folded")
	if seen.Orders == 0 || seen.NetRevenue == 0 || seen.NetCumulativeRevenue == 0 || seen.Checkouts == 0 ||
		seen.SucceededCheckouts == 0 || seen.Canceled == 0 || seen.Churned == 0 || seen.ActiveSubscriptions == 0 ||
		seen.MonthlyRecurringRevenue == 0 || seen.CommittedSubscriptions == 0 || seen.TrialMonthlyRecurringRevenue == 0 ||
		seen.TrialCommittedMonthlyRecurringRevenue == 0 {
		t.Errorf("the seed exercises too little: %+v", seen)
	}
	checkRebuild(t, db, s.org)
}
