package rest_test

import (
	"net/http"
	"testing"
)

// Average revenue per user and lifetime value over three days of subscriptions of the
// metrics fixture's product. The fixture's customer holds 1,000 a month throughout and
// 2,000 a month until March 2 at 10:00; a second customer 3,000 a month until March 3 at
// 05:00 and, from March 1, 500 a month in a trial past the window. The fixture's usage
// costs are 0.50 on March 1 and 1.25 on March 2, one user each day.
//
//	end of   MRR   subscribers  ARPU  churn rate  cost per user  LTV
//	Mar 1    6000  2            3000  0/3         0.50           0 (no churn)
//	Mar 2    4000  2            2000  1/4         1.25           int(1998.75 / 0.25) = 7995
//	Mar 3    1000  2 (a trial)  500   1/3         0              int(500 / (1/3)) = 1500
func TestMetricsAverageRevenuePerUserAndLifetimeValueServeTheContract(t *testing.T) {
	t.Parallel()
	f := newMetricsFixture(t)
	second := f.s.NewCustomer(t, f.org.ID, "")
	f.s.Exec(t, `INSERT INTO subscriptions (organization_id, customer_id, product_id, status, amount, currency,
			recurring_interval, current_period_start, current_period_end, started_at, ended_at, trial_start, trial_end)
		SELECT o.organization_id, coalesce(v.customer, o.customer_id), o.product_id, v.status, v.amount, 'usd', 'month',
			v.started, v.started + interval '1 month', v.started, v.ended, CASE WHEN v.trial_end IS NOT NULL THEN v.started END,
			v.trial_end
		FROM (SELECT * FROM orders WHERE organization_id = $1 LIMIT 1) o, (VALUES
			(NULL::uuid, 'active', 1000, timestamptz '2026-02-20 09:00Z', NULL::timestamptz, NULL::timestamptz),
			(NULL, 'canceled', 2000, '2026-02-25 00:00Z', '2026-03-02 10:00Z', NULL),
			($2, 'canceled', 3000, '2026-02-26 00:00Z', '2026-03-03 05:00Z', NULL),
			($2, 'trialing', 500, '2026-03-01 08:00Z', NULL, '2026-03-10 00:00Z')) AS v (customer, status, amount, started, ended, trial_end)`,
		f.org.ID, second.ID)
	const slugs = "&metrics=ltv&metrics=average_revenue_per_user"

	rec := f.s.do(t, call{target: "/v1/metrics/?start_date=2026-03-01&end_date=2026-03-03&interval=day" + slugs, token: f.org.Token})
	want{status: 200, body: `{"periods":[` +
		`{"timestamp":"2026-03-01T00:00:00Z","average_revenue_per_user":3000,"ltv":0},` +
		`{"timestamp":"2026-03-02T00:00:00Z","average_revenue_per_user":2000,"ltv":7995},` +
		`{"timestamp":"2026-03-03T00:00:00Z","average_revenue_per_user":500,"ltv":1500}],` +
		`"totals":{"average_revenue_per_user":500,"ltv":1500},` +
		`"metrics":{"average_revenue_per_user":{"slug":"average_revenue_per_user","display_name":"Average Revenue Per User","type":"currency"},` +
		`"ltv":{"slug":"ltv","display_name":"Lifetime Value","type":"currency"}}}`,
	}.check(t, rec)

	// One customer: the second's 3,000 until March 3, then its trial alone.
	rec = f.s.do(t, call{target: "/v1/metrics/?start_date=2026-03-02&end_date=2026-03-03&interval=day" +
		"&metrics=average_revenue_per_user&customer_id=" + second.ID.String(), token: f.org.Token})
	want{status: 200, body: `{"periods":[` +
		`{"timestamp":"2026-03-02T00:00:00Z","average_revenue_per_user":3000},` +
		`{"timestamp":"2026-03-03T00:00:00Z","average_revenue_per_user":0}],` +
		`"totals":{"average_revenue_per_user":0},` +
		`"metrics":{"average_revenue_per_user":{"slug":"average_revenue_per_user","display_name":"Average Revenue Per User","type":"currency"}}}`,
	}.check(t, rec)

	rec = f.s.do(t, call{target: "/v1/metrics/export?start_date=2026-03-01&end_date=2026-03-03&interval=day" + slugs, token: f.org.Token})
	csv := "Timestamp,Average Revenue Per User,Lifetime Value\r\n" +
		"2026-03-01T00:00:00+00:00,3000,0\r\n" +
		"2026-03-02T00:00:00+00:00,2000,7995\r\n" +
		"2026-03-03T00:00:00+00:00,500,1500\r\n"
	if rec.Code != http.StatusOK || rec.Body.String() != csv {
		t.Errorf("export: %d %q, want %q", rec.Code, rec.Body, csv)
	}
}
