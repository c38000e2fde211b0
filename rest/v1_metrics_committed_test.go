package rest_test

import (
	"net/http"
	"testing"
)

// The committed and trialing metrics over three days of subscriptions of the metrics
// fixture's product: 1,000 a month since February, committed; 3,000 a month in a trial from
// March 1 to March 2 at noon, committed; 5,000 a year (416.67 a month) in a trial until March
// 3 at noon, set to end with it; and 2,400 a month set to end on March 15.
func TestMetricsCommittedAndTrialingServeTheContract(t *testing.T) {
	t.Parallel()
	f := newMetricsFixture(t)
	f.s.Exec(t, `INSERT INTO subscriptions (organization_id, customer_id, product_id, status, amount, currency,
			recurring_interval, current_period_start, current_period_end, started_at, trial_start, trial_end,
			cancel_at_period_end, canceled_at, ends_at)
		SELECT o.organization_id, o.customer_id, o.product_id, v.status, v.amount, 'usd', v.every, v.started,
			coalesce(v.trial_end, v.started + interval '1 month'), v.started, CASE WHEN v.trial_end IS NOT NULL THEN v.started END,
			v.trial_end, v.ends IS NOT NULL, CASE WHEN v.ends IS NOT NULL THEN v.started END, v.ends
		FROM (SELECT * FROM orders WHERE organization_id = $1 LIMIT 1) o, (VALUES
			('active', 1000, 'month', timestamptz '2026-02-20 09:00Z', NULL::timestamptz, NULL::timestamptz),
			('trialing', 3000, 'month', '2026-03-01 10:00Z', '2026-03-02 12:00Z', NULL),
			('trialing', 5000, 'year', '2026-03-01 10:00Z', '2026-03-03 12:00Z', '2026-03-03 12:00Z'),
			('active', 2400, 'month', '2026-02-01 00:00Z', NULL, '2026-03-15 00:00Z')) AS v (status, amount, every, started, trial_end, ends)`,
		f.org.ID)
	const slugs = "&metrics=committed_subscriptions&metrics=trial_monthly_recurring_revenue" +
		"&metrics=committed_monthly_recurring_revenue&metrics=trial_committed_monthly_recurring_revenue" +
		"&metrics=committed_annual_recurring_revenue"

	rec := f.s.do(t, call{target: "/v1/metrics/?start_date=2026-03-01&end_date=2026-03-03&interval=day" + slugs, token: f.org.Token})
	want{status: 200, body: `{"periods":[` +
		`{"timestamp":"2026-03-01T00:00:00Z","committed_subscriptions":2,"trial_monthly_recurring_revenue":3417,` +
		`"committed_monthly_recurring_revenue":1000,"trial_committed_monthly_recurring_revenue":3000,"committed_annual_recurring_revenue":12000},` +
		`{"timestamp":"2026-03-02T00:00:00Z","committed_subscriptions":2,"trial_monthly_recurring_revenue":417,` +
		`"committed_monthly_recurring_revenue":4000,"trial_committed_monthly_recurring_revenue":0,"committed_annual_recurring_revenue":48000},` +
		`{"timestamp":"2026-03-03T00:00:00Z","committed_subscriptions":2,"trial_monthly_recurring_revenue":0,` +
		`"committed_monthly_recurring_revenue":4000,"trial_committed_monthly_recurring_revenue":0,"committed_annual_recurring_revenue":48000}],` +
		`"totals":{"committed_subscriptions":2,"trial_monthly_recurring_revenue":0,"committed_monthly_recurring_revenue":4000,` +
		`"trial_committed_monthly_recurring_revenue":0,"committed_annual_recurring_revenue":48000},` +
		`"metrics":{"committed_subscriptions":{"slug":"committed_subscriptions","display_name":"Committed Subscriptions","type":"scalar"},` +
		`"trial_monthly_recurring_revenue":{"slug":"trial_monthly_recurring_revenue","display_name":"Trialing MRR Including Cancelations","type":"currency"},` +
		`"committed_monthly_recurring_revenue":{"slug":"committed_monthly_recurring_revenue","display_name":"Committed Monthly Recurring Revenue","type":"currency"},` +
		`"trial_committed_monthly_recurring_revenue":{"slug":"trial_committed_monthly_recurring_revenue","display_name":"Trialing Monthly Recurring Revenue","type":"currency"},` +
		`"committed_annual_recurring_revenue":{"slug":"committed_annual_recurring_revenue","display_name":"Committed Annual Recurring Revenue","type":"currency"}}}`,
	}.check(t, rec)

	rec = f.s.do(t, call{target: "/v1/metrics/export?start_date=2026-03-01&end_date=2026-03-02&interval=day" + slugs, token: f.org.Token})
	csv := "Timestamp,Committed Subscriptions,Trialing MRR Including Cancelations,Committed Monthly Recurring Revenue," +
		"Trialing Monthly Recurring Revenue,Committed Annual Recurring Revenue\r\n" +
		"2026-03-01T00:00:00+00:00,2,3417,1000,3000,12000\r\n" +
		"2026-03-02T00:00:00+00:00,2,417,4000,0,48000\r\n"
	if rec.Code != http.StatusOK || rec.Body.String() != csv {
		t.Errorf("export: %d %q, want %q", rec.Code, rec.Body, csv)
	}
}
