package resolvers_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"till/internal/payment"
)

const arpuMetricsQuery = `query($metrics: [String!]) {
	metrics(startDate: "2030-01-31", endDate: "2030-02-03", interval: day, metrics: $metrics) {
		periods { averageRevenuePerUser ltv }
		totals { averageRevenuePerUser ltv }
		metrics { averageRevenuePerUser { slug displayName type } ltv { slug displayName type } }
	}
}`

// arpuValues are a period's or the totals' average revenue per user and lifetime value.
type arpuValues struct{ AverageRevenuePerUser, Ltv *int }

type catalogEntry struct{ Slug, DisplayName, Type string }

// The world's customer holds the 1,000 plan and a 2,000 subscription, revoked on February 1
// at noon; a second customer a 3,000 one in a trial until February 2 at noon.
//
//	end of   MRR   subscribers  ARPU  churn rate  LTV
//	Jan 31   3000  2            1500  0           0
//	Feb 1    1000  2            500   1/3         int(500 / (1/3)) = 1500
//	Feb 2    4000  2            2000  0/2         0
//	Feb 3    4000  2            2000  0/2         0
func TestMetricsAverageRevenuePerUserAndLifetimeValue(t *testing.T) {
	t.Parallel()
	w := newSubWorld(t, payment.TokenVisa)
	w.subscribePlan(t)
	second := w.subscribe(t, w.plan.ID, w.customer.ID, &w.card, 2000, 0, nil)
	other := w.s.NewCustomer(t, w.org.ID, "")
	w.subscribe(t, w.plan.ID, other.ID, ptrTo(w.saveCard(t, other.ID, payment.TokenVisa)), 3000, 48*time.Hour, nil)
	w.advance(t, time.Date(2030, 2, 1, 12, 0, 0, 0, time.UTC))
	w.mutate(t, w.org.Token, "revokeSubscription", vars{"id": second.ID})

	read := func(t *testing.T, metrics []string) ([]arpuValues, arpuValues, [2]*catalogEntry) {
		t.Helper()
		var out struct {
			Metrics struct {
				Periods []arpuValues
				Totals  arpuValues
				Metrics struct{ AverageRevenuePerUser, Ltv *catalogEntry }
			}
		}
		w.s.Query(t, w.org.Token, arpuMetricsQuery, vars{"metrics": metrics}, &out)
		m := out.Metrics
		return m.Periods, m.Totals, [2]*catalogEntry{m.Metrics.AverageRevenuePerUser, m.Metrics.Ltv}
	}
	arpu := []int{1500, 500, 2000, 2000}
	ltv := []int{0, 1500, 0, 0}
	arpuEntry := &catalogEntry{"average_revenue_per_user", "Average Revenue Per User", "currency"}
	ltvEntry := &catalogEntry{"ltv", "Lifetime Value", "currency"}
	tests := []struct {
		name    string
		metrics []string
		arpu    []int
		ltv     []int
		entries [2]*catalogEntry
	}{
		{"both, per day and as of the last day", []string{"average_revenue_per_user", "ltv"}, arpu, ltv,
			[2]*catalogEntry{arpuEntry, ltvEntry}},
		{"average revenue per user alone", []string{"average_revenue_per_user"}, arpu, nil, [2]*catalogEntry{arpuEntry, nil}},
		{"lifetime value alone, which reads what it is made of", []string{"ltv"}, nil, ltv, [2]*catalogEntry{nil, ltvEntry}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			periods, totals, entries := read(t, tt.metrics)
			want := make([]arpuValues, len(periods))
			for i := range want {
				if tt.arpu != nil {
					want[i].AverageRevenuePerUser = &tt.arpu[i]
				}
				if tt.ltv != nil {
					want[i].Ltv = &tt.ltv[i]
				}
			}
			if diff := cmp.Diff(want, periods); diff != "" {
				t.Errorf("ARPU and LTV per day (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want[len(want)-1], totals); diff != "" {
				t.Errorf("totals are the last day's (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.entries, entries); diff != "" {
				t.Errorf("catalog entries (-want +got):\n%s", diff)
			}
		})
	}
}
