package rest_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"till/internal/auth"
	"till/rest"
	"till/rest/resttest"
)

// The metrics routes render their answer without executing GetMetrics. The operation still
// defines the shape: the same queries answered both ways must be the same bytes, failures
// included.
func TestMetricsRoutesRenderExactlyTheirOperation(t *testing.T) {
	t.Parallel()
	f := newMetricsFixture(t)
	// Subscriptions of the product that start, and some end, around the orders, so that the
	// stocks move and the churn rate is a fraction; some in a trial of a day and a half, some
	// set to end after a month.
	f.s.Exec(t, `INSERT INTO subscriptions (organization_id, customer_id, product_id, status, amount, currency,
			recurring_interval, current_period_start, current_period_end, started_at, canceled_at, ended_at,
			customer_cancellation_reason, trial_start, trial_end, ends_at)
		SELECT o.organization_id, o.customer_id, o.product_id, CASE WHEN i % 3 = 0 THEN 'canceled' ELSE 'active' END,
			1000 + 7 * i, 'usd', CASE WHEN i % 2 = 0 THEN 'year' ELSE 'month' END, at, at + interval '1 month', at,
			CASE WHEN i % 3 = 0 THEN at + interval '1 day' END, CASE WHEN i % 3 = 0 THEN at + interval '1 day' END,
			CASE WHEN i % 3 = 0 THEN 'too_expensive' END, CASE WHEN i % 2 = 1 THEN at END,
			CASE WHEN i % 2 = 1 THEN at + interval '36 hours' END,
			CASE WHEN i % 3 = 0 THEN at + interval '1 day' WHEN i % 3 = 1 THEN at + interval '1 month' END
		FROM (SELECT * FROM orders WHERE organization_id = $1 LIMIT 1) o, generate_series(1, 7) i,
			LATERAL (SELECT timestamptz '2026-02-27 09:00:00+00' + i * interval '13 hours' AS at) s`, f.org.ID)
	var customer string
	f.s.Get(t, &customer, `SELECT customer_id FROM orders WHERE organization_id = $1 LIMIT 1`, f.org.ID)
	operationOnly, err := rest.NewRouter(rest.Config{Executor: f.s.Resolver.Executor(), Routes: rest.Routes(),
		Schema: f.s.Resolver.Schema().Schema(), Authenticate: auth.Middleware(f.s.Resolver, f.s.Secret)})
	if err != nil {
		t.Fatal(err)
	}
	const window = "/v1/metrics/?start_date=2026-02-27&end_date=2026-03-04"
	for _, tc := range []struct{ name, target string }{
		{"every metric by day", window + "&interval=day"},
		{"three metrics by day", window + "&interval=day&metrics=revenue&metrics=orders&metrics=net_revenue"},
		{"rates and stocks by hour in a zone", window + "&interval=hour&timezone=Europe/Berlin" +
			"&metrics=churn_rate&metrics=average_order_value&metrics=active_subscriptions&metrics=monthly_recurring_revenue"},
		{"committed and trialing stocks by hour", window + "&interval=hour&metrics=committed_subscriptions" +
			"&metrics=trial_monthly_recurring_revenue&metrics=committed_annual_recurring_revenue"},
		{"a zone of half hours, by week", window + "&interval=week&timezone=Asia/Kolkata"},
		{"one product by month", "/v1/metrics/?start_date=2026-01-01&end_date=2026-04-30&interval=month&product_id=" +
			f.product.String()},
		{"one customer", window + "&interval=day&customer_id=" + customer},
		{"recurring products only", window + "&interval=day&billing_type=recurring&metrics=checkouts_conversion"},
		{"lifetime value and its parts by day", window + "&interval=day&metrics=costs&metrics=ltv" +
			"&metrics=average_revenue_per_user&metrics=churn_rate"},
		{"average revenue per user of one customer", window + "&interval=day&metrics=average_revenue_per_user&customer_id=" +
			customer},
		{"another organization's filter", window + "&interval=day&organization_id=" + f.other.ID.String()},
		{"the export", "/v1/metrics/export?start_date=2026-02-27&end_date=2026-03-04&interval=day"},
		{"an unknown slug", window + "&interval=day&metrics=revenue&metrics=bogus"},
		{"a window too long", "/v1/metrics/?start_date=2026-01-01&end_date=2026-03-04&interval=hour"},
		{"an unknown zone", window + "&interval=day&timezone=Mars/Olympus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer := func(h http.Handler) *httptest.ResponseRecorder {
				return resttest.Serve(t, h, call{target: tc.target, token: f.org.Token}.request())
			}
			viaOperation, direct := answer(operationOnly), answer(f.s.h)
			if viaOperation.Code != direct.Code || viaOperation.Body.String() != direct.Body.String() ||
				viaOperation.Header().Get("Content-Type") != direct.Header().Get("Content-Type") {
				t.Errorf("operation answered %d %s\ndirect answered    %d %s", viaOperation.Code, viaOperation.Body,
					direct.Code, direct.Body)
			}
		})
	}
}
