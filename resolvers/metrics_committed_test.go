package resolvers_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"till/internal/payment"
)

const committedMetricsQuery = `query($metrics: [String!]) {
	metrics(startDate: "2030-02-08", endDate: "2030-02-11", interval: day, metrics: $metrics) {
		periods { committedSubscriptions trialMonthlyRecurringRevenue committedMonthlyRecurringRevenue
			trialCommittedMonthlyRecurringRevenue committedAnnualRecurringRevenue }
		totals { committedSubscriptions trialMonthlyRecurringRevenue committedMonthlyRecurringRevenue
			trialCommittedMonthlyRecurringRevenue committedAnnualRecurringRevenue }
		metrics { trialMonthlyRecurringRevenue { slug displayName type }
			trialCommittedMonthlyRecurringRevenue { slug displayName type } }
	}
}`

// committedStocks are the committed and trialing metrics of a period or of the totals.
type committedStocks struct {
	CommittedSubscriptions, TrialMonthlyRecurringRevenue, CommittedMonthlyRecurringRevenue,
	TrialCommittedMonthlyRecurringRevenue, CommittedAnnualRecurringRevenue *int
}

func TestMetricsCommittedFollowCancellations(t *testing.T) {
	t.Parallel()
	w := newSubWorld(t, payment.TokenVisa)
	w.subscribePlan(t)
	// 2,000 a month after a trial that ends on February 10 at noon.
	trialing := w.subscribe(t, w.plan.ID, w.customer.ID, &w.card, 2000, 240*time.Hour, nil)
	read := func(t *testing.T, metrics []string) (periods []committedStocks, totals committedStocks, entry *struct{ Slug, DisplayName, Type string }) {
		t.Helper()
		var out struct {
			Metrics struct {
				Periods []committedStocks
				Totals  committedStocks
				Metrics struct {
					TrialMonthlyRecurringRevenue, TrialCommittedMonthlyRecurringRevenue *struct{ Slug, DisplayName, Type string }
				}
			}
		}
		w.s.Query(t, w.org.Token, committedMetricsQuery, vars{"metrics": metrics}, &out)
		return out.Metrics.Periods, out.Metrics.Totals, out.Metrics.Metrics.TrialMonthlyRecurringRevenue
	}
	stocks := func(v ...int) committedStocks {
		return committedStocks{&v[0], &v[1], &v[2], &v[3], &v[4]}
	}
	all := []string{"committed_subscriptions", "trial_monthly_recurring_revenue", "committed_monthly_recurring_revenue",
		"trial_committed_monthly_recurring_revenue", "committed_annual_recurring_revenue"}
	committed := []committedStocks{stocks(2, 2000, 1000, 2000, 12000), stocks(2, 2000, 1000, 2000, 12000),
		stocks(2, 0, 3000, 0, 36000), stocks(2, 0, 3000, 0, 36000)}
	tests := []struct {
		name     string
		mutation string
		want     []committedStocks
	}{
		{"the trial counts until it ends, then the committed revenue", "", committed},
		// Canceled at the end of its period, which its trial is, the subscription leaves the
		// committed metrics of every day and stays in the trial's.
		{"a cancellation takes the subscription out of what is committed", "cancelSubscription",
			[]committedStocks{stocks(1, 2000, 1000, 0, 12000), stocks(1, 2000, 1000, 0, 12000),
				stocks(1, 0, 1000, 0, 12000), stocks(1, 0, 1000, 0, 12000)}},
		{"taking it back commits it again", "uncancelSubscription", committed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.mutation != "" {
				w.mutate(t, w.org.Token, tt.mutation, vars{"id": trialing.ID})
			}
			periods, totals, entry := read(t, all)
			if diff := cmp.Diff(tt.want, periods); diff != "" {
				t.Errorf("committed, trial MRR, committed MRR, trial committed MRR, committed ARR per day (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want[len(tt.want)-1], totals); diff != "" {
				t.Errorf("totals are the last day's (-want +got):\n%s", diff)
			}
			if entry == nil || *entry != (struct{ Slug, DisplayName, Type string }{"trial_monthly_recurring_revenue",
				"Trialing MRR Including Cancelations", "currency"}) {
				t.Errorf("trial MRR's catalog entry: %+v", entry)
			}
		})
	}

	t.Run("each metric asked alone answers what it answers among all", func(t *testing.T) {
		among, _, _ := read(t, all)
		for i, slug := range all {
			alone, _, _ := read(t, []string{slug})
			for p := range alone {
				got, want := []*int{alone[p].CommittedSubscriptions, alone[p].TrialMonthlyRecurringRevenue,
					alone[p].CommittedMonthlyRecurringRevenue, alone[p].TrialCommittedMonthlyRecurringRevenue,
					alone[p].CommittedAnnualRecurringRevenue}, []*int{nil, nil, nil, nil, nil}
				want[i] = []*int{among[p].CommittedSubscriptions, among[p].TrialMonthlyRecurringRevenue,
					among[p].CommittedMonthlyRecurringRevenue, among[p].TrialCommittedMonthlyRecurringRevenue,
					among[p].CommittedAnnualRecurringRevenue}[i]
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s alone, day %d (-want +got):\n%s", slug, p, diff)
				}
			}
		}
	})
}
