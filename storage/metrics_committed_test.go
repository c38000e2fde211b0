package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/storage"
	"till/storage/storagetest"
)

// splitStocks are a point's committed and trialing stocks, in the order of upstream's
// catalog: committed subscriptions, trial MRR, committed MRR, trial committed MRR.
func splitStocks(points []storage.MetricsPoint) [][4]int64 {
	out := make([][4]int64, len(points))
	for i, p := range points {
		out[i] = [4]int64{p.CommittedSubscriptions, p.TrialMonthlyRecurringRevenue, p.CommittedMonthlyRecurringRevenue,
			p.TrialCommittedMonthlyRecurringRevenue}
	}
	return out
}

func TestMetricsCommittedAndTrialingStocks(t *testing.T) {
	t.Parallel()
	db := storagetest.New(t)
	ctx := context.Background()
	s := newMetricsShop(t, db)
	day := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	start, trialEnd := day.Add(2*time.Hour), day.AddDate(0, 0, 2).Add(time.Hour)
	// subscribe starts a monthly subscription on the first day, in a trial until trialEnd when
	// trial is set, and runs set (SQL over the subscription, $1) on it.
	subscribe := func(amount int64, trial bool, set string, args ...any) uuid.UUID {
		t.Helper()
		w := storage.SubscriptionWrite{CustomerID: s.customer, ProductID: s.product, Status: "active", Amount: amount,
			Currency: "usd", RecurringInterval: "month", RecurringIntervalCount: 1, CurrentPeriodStart: start,
			CurrentPeriodEnd: start.AddDate(0, 1, 0), StartedAt: &start}
		if trial {
			w.Status, w.TrialStart, w.TrialEnd, w.CurrentPeriodEnd = "trialing", &start, &trialEnd, trialEnd
		}
		sub, err := storage.CreateSubscription(ctx, db, s.org, start, w)
		if err != nil {
			t.Fatal(err)
		}
		if set != "" {
			if _, err := db.Exec(`UPDATE subscriptions SET `+set+` WHERE id = $1`, append([]any{sub.ID}, args...)...); err != nil {
				t.Fatal(err)
			}
		}
		return sub.ID
	}
	cancelAtPeriodEnd := `cancel_at_period_end = true, canceled_at = $2, ends_at = current_period_end`
	plain := subscribe(1000, false, "")
	subscribe(2000, true, "")
	inTrialCanceled := subscribe(4000, true, cancelAtPeriodEnd, start)
	subscribe(8000, false, `ended_at = $2, ends_at = $2, status = 'canceled'`, day.AddDate(0, 0, 1).Add(5*time.Hour))
	subscribe(16000, true, `ended_at = $2, ends_at = $2, status = 'canceled'`, day.AddDate(0, 0, 1).Add(time.Hour))
	subscribe(32000, false, cancelAtPeriodEnd, start)

	read := func(t *testing.T, f storage.MetricsFilter) [][4]int64 {
		t.Helper()
		points, err := storage.Metrics(ctx, db, f)
		if err != nil {
			t.Fatal(err)
		}
		return splitStocks(points)
	}
	check := func(t *testing.T, want [][4]int64) {
		t.Helper()
		f := storage.MetricsFilter{Orgs: []uuid.UUID{s.org}, From: day.AddDate(0, 0, -1), To: day.AddDate(0, 0, 4),
			Interval: "day", Zone: "UTC"}
		if diff := cmp.Diff(want, read(t, f)); diff != "" {
			t.Errorf("committed, trial MRR, committed MRR, trial committed MRR per day (-want +got):\n%s", diff)
		}
		base, err := storage.MetricsFromBase(ctx, db, f)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, splitStocks(base)); diff != "" {
			t.Errorf("from the base tables (-want +got):\n%s", diff)
		}
		f.Exact = true
		if diff := cmp.Diff(want, read(t, f)); diff != "" {
			t.Errorf("cut as in a zone of half hours (-want +got):\n%s", diff)
		}
		f.Exact, f.Interval, f.From, f.To = false, "hour", day.AddDate(0, 0, 2), day.AddDate(0, 0, 2).Add(2*time.Hour)
		if diff := cmp.Diff(want[2:4], read(t, f)); diff != "" {
			t.Errorf("by the hour, the trials ending at the end of the first (-want +got):\n%s", diff)
		}
		checkRebuild(t, db, s.org)
	}

	t.Run("a subscription is committed while nothing ends it, and trialing until its trial or itself ends", func(t *testing.T) {
		// The committed ones are the first two; the trials are 2,000 (committed), 4,000 (set
		// to end with its trial) and 16,000 (ended in its first day); 8,000 ended after
		// paying, 32,000 pays until its period ends.
		check(t, [][4]int64{{0, 0, 0, 0}, {2, 22000, 1000, 2000}, {2, 6000, 1000, 2000}, {2, 0, 3000, 0}, {2, 0, 3000, 0}})
	})

	t.Run("taking a cancellation back commits the subscription in every period", func(t *testing.T) {
		if _, err := db.Exec(`UPDATE subscriptions SET cancel_at_period_end = false, canceled_at = NULL, ends_at = NULL
			WHERE id = $1`, inTrialCanceled); err != nil {
			t.Fatal(err)
		}
		check(t, [][4]int64{{0, 0, 0, 0}, {3, 22000, 1000, 6000}, {3, 6000, 1000, 6000}, {3, 0, 7000, 0}, {3, 0, 7000, 0}})
	})

	t.Run("a cancellation at period end takes the subscription out of every period", func(t *testing.T) {
		if _, err := db.Exec(`UPDATE subscriptions SET cancel_at_period_end = true, canceled_at = $2,
			ends_at = current_period_end WHERE id = $1`, plain, day.AddDate(0, 0, 3)); err != nil {
			t.Fatal(err)
		}
		check(t, [][4]int64{{0, 0, 0, 0}, {2, 22000, 0, 6000}, {2, 6000, 0, 6000}, {2, 0, 6000, 0}, {2, 0, 6000, 0}})
	})
}
