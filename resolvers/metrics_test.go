package resolvers_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/internal/payment"
	"till/resolvers/resolverstest"
)

const metricsQuery = `query($start: String!, $end: String!, $interval: TimeInterval!, $tz: String, $customers: [UUID!],
		$products: [UUID!], $metrics: [String!]) {
	metrics(startDate: $start, endDate: $end, interval: $interval, timezone: $tz, customerId: $customers,
			productId: $products, metrics: $metrics) {
		periods { timestamp orders revenue netRevenue renewedSubscriptions activeSubscriptions monthlyRecurringRevenue
			averageOrderValue }
		totals { orders revenue renewedSubscriptions activeSubscriptions averageOrderValue }
		metrics { revenue { slug displayName type } renewedSubscriptions { slug } }
	}
}`

type metricsPeriod struct {
	Orders, Revenue, NetRevenue, RenewedSubscriptions, ActiveSubscriptions, MonthlyRecurringRevenue *int
	AverageOrderValue                                                                               *float64
}

type metricsOut struct {
	Metrics struct {
		Periods []metricsPeriod
		Totals  struct {
			Orders, Revenue, RenewedSubscriptions, ActiveSubscriptions *int
			AverageOrderValue                                          *float64
		}
		Metrics struct {
			Revenue              *struct{ Slug, DisplayName, Type string }
			RenewedSubscriptions *struct{ Slug string }
		}
	}
}

func TestMetricsFollowRenewalsAndRefunds(t *testing.T) {
	t.Parallel()
	w := newSubWorld(t, payment.TokenVisa)
	w.subscribePlan(t)
	// Each advance renews at the clock's new time, years ahead of the wall clock.
	for _, to := range []time.Time{at(3, 1), at(4, 1)} {
		if n := w.advance(t, to); n != 1 {
			t.Fatalf("%d renewals at %s, want 1", n, to)
		}
	}
	monthly := vars{"start": "2030-01-01", "end": "2030-04-30", "interval": "month"}

	t.Run("renewals a test clock makes land in the months of its time, not of the wall clock", func(t *testing.T) {
		var out metricsOut
		w.s.Query(t, w.org.Token, metricsQuery, monthly, &out)
		var renewed, active []int
		for _, p := range out.Metrics.Periods {
			renewed, active = append(renewed, *p.RenewedSubscriptions), append(active, *p.ActiveSubscriptions)
		}
		if diff := cmp.Diff([]int{0, 0, 1, 1}, renewed); diff != "" {
			t.Errorf("renewed subscriptions per month (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int{1, 1, 1, 1}, active); diff != "" {
			t.Errorf("active subscriptions per month (-want +got):\n%s", diff)
		}
		if got := out.Metrics.Periods[1].MonthlyRecurringRevenue; got == nil || *got != 1000 {
			t.Errorf("MRR in February: %v, want 1000", got)
		}
		if got := out.Metrics.Totals.RenewedSubscriptions; got == nil || *got != 2 {
			t.Errorf("renewals over the window: %v, want 2", got)
		}
		if m := out.Metrics.Metrics.Revenue; m == nil || m.Slug != "revenue" || m.DisplayName != "Revenue" || m.Type != "currency" {
			t.Errorf("revenue's catalog entry: %+v", m)
		}
	})

	t.Run("a refund made later lowers the net revenue of the order's month only", func(t *testing.T) {
		var orderID uuid.UUID
		w.s.Get(t, &orderID, `SELECT id FROM orders WHERE organization_id = $1 AND billing_reason = 'subscription_cycle'
			ORDER BY created_at LIMIT 1`, w.org.ID)
		w.s.Exec(t, `UPDATE orders SET refunded_amount = 400, status = 'partially_refunded' WHERE id = $1`, orderID)
		var out metricsOut
		w.s.Query(t, w.org.Token, metricsQuery, monthly, &out)
		mar := out.Metrics.Periods[2]
		if *mar.Revenue != 1000 || *mar.NetRevenue != 600 || *out.Metrics.Periods[3].NetRevenue != 1000 {
			t.Errorf("March revenue %d net %d, April net %d; want 1000, 600 and 1000",
				*mar.Revenue, *mar.NetRevenue, *out.Metrics.Periods[3].NetRevenue)
		}
	})

	t.Run("per customer and in a half-hour zone the base tables answer what the rollups answer", func(t *testing.T) {
		var rolled, perCustomer, kolkata, kolkataPerCustomer metricsOut
		w.s.Query(t, w.org.Token, metricsQuery, monthly, &rolled)
		w.s.Query(t, w.org.Token, metricsQuery, merge(monthly, vars{"customers": []uuid.UUID{w.customer.ID}}), &perCustomer)
		if diff := cmp.Diff(rolled, perCustomer); diff != "" {
			t.Errorf("the customer's metrics differ from the organization's (-org +customer):\n%s", diff)
		}
		w.s.Query(t, w.org.Token, metricsQuery, merge(monthly, vars{"tz": "Asia/Kolkata"}), &kolkata)
		w.s.Query(t, w.org.Token, metricsQuery, merge(monthly, vars{"tz": "Asia/Kolkata", "customers": []uuid.UUID{w.customer.ID}}),
			&kolkataPerCustomer)
		if diff := cmp.Diff(kolkata, kolkataPerCustomer); diff != "" {
			t.Errorf("Kolkata metrics differ (-org +customer):\n%s", diff)
		}
	})

	t.Run("daily points in zones with and without daylight saving time and in offsets of part hours equal the base tables", func(t *testing.T) {
		daily := vars{"start": "2030-02-20", "end": "2030-04-10", "interval": "day"}
		for _, zone := range []string{"UTC", "America/New_York", "Pacific/Kiritimati", "Asia/Kolkata", "Asia/Kathmandu"} {
			var rolled, perCustomer metricsOut
			w.s.Query(t, w.org.Token, metricsQuery, merge(daily, vars{"tz": zone}), &rolled)
			w.s.Query(t, w.org.Token, metricsQuery, merge(daily, vars{"tz": zone, "customers": []uuid.UUID{w.customer.ID}}),
				&perCustomer)
			if len(rolled.Metrics.Periods) != 50 {
				t.Fatalf("%s: %d daily points, want 50", zone, len(rolled.Metrics.Periods))
			}
			if diff := cmp.Diff(rolled, perCustomer); diff != "" {
				t.Errorf("%s: the organization's daily metrics differ from the customer's (-org +customer):\n%s", zone, diff)
			}
			if got := *rolled.Metrics.Totals.RenewedSubscriptions; got != 2 {
				t.Errorf("%s: %d renewals over the window, want 2", zone, got)
			}
		}
	})

	t.Run("CET keeps summer time, as the zone database and upstream read it", func(t *testing.T) {
		// PostgreSQL reads the name CET as the abbreviation of UTC+1 all year.
		const q = `query($tz: String) { metrics(startDate: "2030-03-25", endDate: "2030-04-05", interval: day, timezone: $tz) {
			periods { timestamp renewedSubscriptions } } }`
		type out struct {
			Metrics struct {
				Periods []struct {
					Timestamp            time.Time
					RenewedSubscriptions int
				}
			}
		}
		var cet, brussels out
		w.s.Query(t, w.org.Token, q, vars{"tz": "CET"}, &cet)
		w.s.Query(t, w.org.Token, q, vars{"tz": "Europe/Brussels"}, &brussels)
		if diff := cmp.Diff(brussels, cet); diff != "" {
			t.Errorf("CET differs from Europe/Brussels (-Brussels +CET):\n%s", diff)
		}
		var renewedAt []time.Time
		for _, p := range cet.Metrics.Periods {
			if p.RenewedSubscriptions > 0 {
				renewedAt = append(renewedAt, p.Timestamp.UTC())
			}
		}
		// 1 April 2030 starts at 22:00 UTC the day before, in summer time.
		if want := []time.Time{time.Date(2030, 3, 31, 22, 0, 0, 0, time.UTC)}; len(cet.Metrics.Periods) != 12 || !slices.Equal(renewedAt, want) {
			t.Errorf("%d days, the renewal in the days starting %v; want 12 and %v", len(cet.Metrics.Periods), renewedAt, want)
		}
	})

	t.Run("each metric asked alone answers what it answers among all", func(t *testing.T) {
		var all metricsOut
		w.s.Query(t, w.org.Token, metricsQuery, monthly, &all)
		pick := map[string]func(p metricsPeriod) any{
			"orders":                    func(p metricsPeriod) any { return p.Orders },
			"revenue":                   func(p metricsPeriod) any { return p.Revenue },
			"net_revenue":               func(p metricsPeriod) any { return p.NetRevenue },
			"renewed_subscriptions":     func(p metricsPeriod) any { return p.RenewedSubscriptions },
			"active_subscriptions":      func(p metricsPeriod) any { return p.ActiveSubscriptions },
			"monthly_recurring_revenue": func(p metricsPeriod) any { return p.MonthlyRecurringRevenue },
			"average_order_value":       func(p metricsPeriod) any { return p.AverageOrderValue },
		}
		for slug, of := range pick {
			var alone metricsOut
			w.s.Query(t, w.org.Token, metricsQuery, merge(monthly, vars{"metrics": []string{slug}}), &alone)
			for i, p := range alone.Metrics.Periods {
				if diff := cmp.Diff(of(all.Metrics.Periods[i]), of(p)); diff != "" {
					t.Errorf("%s in period %d (-among all +alone):\n%s", slug, i, diff)
				}
			}
		}
	})

	t.Run("another organization's token sees none of it, even naming the customer and product", func(t *testing.T) {
		other := w.s.NewOrg(t, resolverstest.AllScopes)
		var out metricsOut
		w.s.Query(t, other.Token, metricsQuery, merge(monthly, vars{"customers": []uuid.UUID{w.customer.ID},
			"products": []uuid.UUID{w.plan.ID}}), &out)
		for _, p := range out.Metrics.Periods {
			if *p.Orders != 0 || *p.ActiveSubscriptions != 0 {
				t.Fatalf("a foreign organization sees %+v", p)
			}
		}
	})

	t.Run("only the metrics asked for are answered", func(t *testing.T) {
		var out metricsOut
		w.s.Query(t, w.org.Token, metricsQuery, merge(monthly, vars{"metrics": []string{"revenue", "seats_total"}}), &out)
		p := out.Metrics.Periods[1]
		if p.Revenue == nil || p.Orders != nil || out.Metrics.Metrics.RenewedSubscriptions != nil {
			t.Errorf("asked for revenue, got %+v and catalog %+v", p, out.Metrics.Metrics)
		}
	})
}

func TestMetricsRefusals(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	tests := []struct {
		name     string
		vars     vars
		token    string
		code     string
		contains string
	}{
		{"an unknown metric slug is refused by name", vars{"metrics": []string{"revenue", "nope", "bogus"}}, org.Token,
			"BAD_USER_INPUT", "Invalid metric slugs: bogus, nope"},
		{"a window longer than the interval allows is refused", vars{"end": "2031-01-03"}, org.Token,
			"BAD_USER_INPUT", "The interval is too small"},
		{"an end before the start is refused", vars{"end": "2029-12-31"}, org.Token, "BAD_USER_INPUT", "The interval is too small"},
		{"a time zone path is refused", vars{"tz": "../../../etc/passwd"}, org.Token, "BAD_USER_INPUT", "Invalid timezone name"},
		{"a time zone with a NUL byte is refused", vars{"tz": "UTC\x00"}, org.Token, "BAD_USER_INPUT", ""},
		{"a date that is not a date is refused", vars{"start": "2030-02-30"}, org.Token, "BAD_USER_INPUT", "valid date"},
		{"a token without metrics:read is refused", vars{}, s.NewToken(t, org.ID, "orders:read"), "FORBIDDEN", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := s.QueryError(t, tt.token, metricsQuery, merge(vars{"start": "2030-01-01", "end": "2030-12-31",
				"interval": "day"}, tt.vars))
			if e.Extensions.Code != tt.code || !strings.Contains(e.Message, tt.contains) {
				t.Errorf("got %s %q, want %s containing %q", e.Extensions.Code, e.Message, tt.code, tt.contains)
			}
		})
	}
}

func merge(a, b vars) vars {
	out := vars{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// A window's days are PostgreSQL's local days: where a change skips a midnight (Santiago
// sprang from 00:00 to 01:00 on 3 September 2023), the window starts after the gap, not an
// hour before it on the day before.
func TestMetricsWindowsStartAtTheMidnightsPostgreSQLReads(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	const q = `query($start: String!, $end: String!, $interval: TimeInterval!) {
		metrics(startDate: $start, endDate: $end, interval: $interval, timezone: "America/Santiago") { periods { timestamp } } }`
	tests := []struct {
		start, end, interval string
		want                 []string
	}{
		{"2023-09-03", "2023-09-03", "day", []string{"2023-09-03T04:00:00Z"}},
		{"2023-09-02", "2023-09-04", "day", []string{"2023-09-02T04:00:00Z", "2023-09-03T04:00:00Z", "2023-09-04T03:00:00Z"}},
		{"2023-09-03", "2023-09-03", "hour", nil},
	}
	for _, tt := range tests {
		var out struct {
			Metrics struct{ Periods []struct{ Timestamp string } }
		}
		s.Query(t, org.Token, q, vars{"start": tt.start, "end": tt.end, "interval": tt.interval}, &out)
		var got []string
		for _, p := range out.Metrics.Periods {
			got = append(got, p.Timestamp)
		}
		if tt.want == nil {
			// Hourly: the 23 hours of the day, from 01:00 after the gap.
			if len(got) != 23 || got[0] != "2023-09-03T04:00:00Z" {
				t.Errorf("%s by hour: %d hours from %v, want 23 from 2023-09-03T04:00:00Z", tt.start, len(got), got[:min(1, len(got))])
			}
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s to %s by %s (-want +got):\n%s", tt.start, tt.end, tt.interval, diff)
		}
	}
}
