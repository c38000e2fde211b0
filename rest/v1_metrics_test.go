package rest_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/storage"
)

// metricsFixture is an organization with two paid orders a day apart, a refund and two
// seats of the first order, a metrics reader, a token of another scope and a second organization.
type metricsFixture struct {
	s          *v1
	org, other org
	wrongScope string
	product    uuid.UUID
}

func newMetricsFixture(t *testing.T) metricsFixture {
	t.Helper()
	s := newV1(t)
	f := metricsFixture{s: s, org: s.NewOrg(t, "metrics:read metrics:write"), other: s.NewOrg(t, "metrics:read metrics:write")}
	f.wrongScope = s.NewToken(t, f.org.ID, "orders:read")
	f.product = s.NewProduct(t, f.org.ID, "Book").ID
	customer := s.NewCustomer(t, f.org.ID, "")
	for i, amount := range []int64{1000, 3000} {
		o, err := storage.InsertOrder(t.Context(), s.DB, f.org.ID, time.Date(2026, 3, 1+i, 10, 0, 0, 0, time.UTC),
			storage.OrderWrite{CustomerID: customer.ID, ProductID: &f.product, Status: "paid", BillingReason: "purchase",
				Currency: "usd", SubtotalAmount: amount, NetAmount: amount, TotalAmount: amount})
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			s.Exec(t, `UPDATE orders SET refunded_amount = 500, status = 'partially_refunded' WHERE id = $1`, o.ID)
		}
		if i == 0 { // seats of the first order: one claimed the next day, one still pending
			s.Exec(t, `INSERT INTO customer_seats (organization_id, order_id, status, created_at, claimed_at) VALUES
				($1, $2, 'claimed', '2026-03-01T12:00:00Z', '2026-03-02T09:00:00Z'),
				($1, $2, 'pending', '2026-03-02T15:00:00Z', NULL)`, f.org.ID, o.ID)
		}
	}
	// Usage costs: a number, and a decimal string as /v1 keeps it.
	for i, cost := range []string{`0.5`, `"1.25"`} {
		if _, err := storage.IngestEvents(t.Context(), s.DB, []storage.EventWrite{{ID: uuid.New(), OrganizationID: f.org.ID,
			Timestamp: time.Date(2026, 3, 1+i, 11, 0, 0, 0, time.UTC), Name: "llm", CustomerID: &customer.ID,
			Metadata: `{"_cost": {"amount": ` + cost + `, "currency": "usd"}}`}}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func TestMetricsServeTheContract(t *testing.T) {
	t.Parallel()
	f := newMetricsFixture(t)
	get := func(query string) call {
		return call{target: "/v1/metrics/?" + query, token: f.org.Token}
	}
	const window = "start_date=2026-03-01&end_date=2026-03-03&interval=day"
	tests := []struct {
		name string
		call call
		want want
	}{
		{"the metrics asked for are answered per day, the others left out", get(window + "&metrics=revenue&metrics=net_revenue&metrics=orders"),
			want{status: 200, body: `{"periods":[` +
				`{"timestamp":"2026-03-01T00:00:00Z","orders":1,"revenue":1000,"net_revenue":1000},` +
				`{"timestamp":"2026-03-02T00:00:00Z","orders":1,"revenue":3000,"net_revenue":2500},` +
				`{"timestamp":"2026-03-03T00:00:00Z","orders":0,"revenue":0,"net_revenue":0}],` +
				`"totals":{"orders":2,"revenue":4000,"net_revenue":3500},` +
				`"metrics":{"orders":{"slug":"orders","display_name":"Orders","type":"scalar"},` +
				`"revenue":{"slug":"revenue","display_name":"Revenue","type":"currency"},` +
				`"net_revenue":{"slug":"net_revenue","display_name":"Net Revenue","type":"currency"}}}`}},
		{"cumulative revenue counts the orders before the window", get("start_date=2026-03-02&end_date=2026-03-02&interval=day" +
			"&metrics=cumulative_revenue&metrics=net_cumulative_revenue"),
			want{status: 200, has: []string{`"periods":[{"timestamp":"2026-03-02T00:00:00Z","cumulative_revenue":4000,"net_cumulative_revenue":3500}]`,
				`"totals":{"cumulative_revenue":4000,"net_cumulative_revenue":3500}`}}},
		{"usage costs, users and margins", get("start_date=2026-03-01&end_date=2026-03-02&interval=day&metrics=costs&metrics=cumulative_costs" +
			"&metrics=active_user_by_event&metrics=cost_per_user&metrics=gross_margin&metrics=gross_margin_percentage&metrics=cashflow"),
			want{status: 200, has: []string{
				`{"timestamp":"2026-03-01T00:00:00Z","costs":0.5,"cumulative_costs":0.5,"cost_per_user":0.5,"active_user_by_event":1,` +
					`"gross_margin":999.5,"gross_margin_percentage":0.9995,"cashflow":999.5}`,
				`{"timestamp":"2026-03-02T00:00:00Z","costs":1.25,"cumulative_costs":1.75,"cost_per_user":1.25,"active_user_by_event":1,` +
					`"gross_margin":3998.25,"gross_margin_percentage":0.9995625,"cashflow":2998.75}`,
				`"totals":{"costs":1.75,"cumulative_costs":1.75,"cost_per_user":1.75,"active_user_by_event":1,` +
					`"gross_margin":3998.25,"gross_margin_percentage":0.9995625,"cashflow":3998.25}`,
				`"cost_per_user":{"slug":"cost_per_user","display_name":"Cost Per User","type":"currency_sub_cent"}`}}},
		{"seats", get("start_date=2026-03-01&end_date=2026-03-02&interval=day&metrics=seats_total&metrics=seats_claimed" +
			"&metrics=seats_pending&metrics=seat_customers&metrics=new_seat_customers&metrics=churned_seat_customers" +
			"&metrics=average_seats_per_customer&metrics=seat_utilization_rate"),
			want{status: 200, body: `{"periods":[` +
				`{"timestamp":"2026-03-01T00:00:00Z","seats_total":1,"seats_claimed":0,"seats_pending":1,"seat_customers":1,` +
				`"new_seat_customers":1,"churned_seat_customers":0,"average_seats_per_customer":1,"seat_utilization_rate":0},` +
				`{"timestamp":"2026-03-02T00:00:00Z","seats_total":2,"seats_claimed":1,"seats_pending":1,"seat_customers":1,` +
				`"new_seat_customers":0,"churned_seat_customers":0,"average_seats_per_customer":2,"seat_utilization_rate":0.5}],` +
				`"totals":{"seats_total":2,"seats_claimed":1,"seats_pending":1,"seat_customers":1,"new_seat_customers":1,` +
				`"churned_seat_customers":0,"average_seats_per_customer":2,"seat_utilization_rate":0.5},` +
				`"metrics":{"seats_total":{"slug":"seats_total","display_name":"Seat Count","type":"scalar"},` +
				`"seats_claimed":{"slug":"seats_claimed","display_name":"Claimed Seats","type":"scalar"},` +
				`"seats_pending":{"slug":"seats_pending","display_name":"Pending Seats","type":"scalar"},` +
				`"seat_customers":{"slug":"seat_customers","display_name":"Active Customers","type":"scalar"},` +
				`"new_seat_customers":{"slug":"new_seat_customers","display_name":"New Customers","type":"scalar"},` +
				`"churned_seat_customers":{"slug":"churned_seat_customers","display_name":"Churned Customers","type":"scalar"},` +
				`"average_seats_per_customer":{"slug":"average_seats_per_customer","display_name":"Average Seats per Customer","type":"scalar"},` +
				`"seat_utilization_rate":{"slug":"seat_utilization_rate","display_name":"Seat Utilization Rate","type":"percentage"}}}`}},
		{"every metric Till computes is answered without a selection", get(window),
			want{status: 200, has: []string{`"active_subscriptions":0`, `"checkouts_conversion":0`, `"annual_recurring_revenue":0`,
				`"canceled_subscriptions_other":0`}}},
		{"a product of another filter narrows to nothing", get(window + "&metrics=orders&billing_type=recurring"),
			want{status: 200, has: []string{`"totals":{"orders":0}`}}},
		{"another organization sees none of it", call{target: "/v1/metrics/?" + window + "&metrics=orders&product_id=" + f.product.String(),
			token: f.other.Token}, want{status: 200, has: []string{`"totals":{"orders":0}`}}},
		{"an unknown slug is refused by name", get(window + "&metrics=revenue&metrics=bogus"),
			polarValidation(item{Type: "value_error", Loc: []any{"query", "metrics"}, Msg: "Invalid metric slugs: bogus"})},
		{"a window too long for the interval is refused", get("start_date=2026-01-01&end_date=2026-01-09&interval=hour"),
			polarValidation(item{Type: "value_error", Loc: []any{"query"},
				Msg: "The interval is too small for the given date range. Use a larger interval or reduce the date range."})},
		{"a missing start date is refused", get("end_date=2026-01-09&interval=day"),
			validation(item{Type: "missing", Loc: []any{"query", "start_date"}, Msg: "Field required"})},
		{"a date that is not a date is refused", get("start_date=2026-02-30&end_date=2026-03-01&interval=day"),
			validation(item{Type: "date_from_datetime_parsing", Loc: []any{"query", "start_date"}})},
		{"an unknown time zone is refused", get(window + "&timezone=Mars/Olympus"),
			validation(item{Type: "TimeZoneName", Loc: []any{"query", "timezone"}, Msg: "Invalid timezone name."})},
		{"a token without metrics:read is refused", call{target: "/v1/metrics/?" + window, token: f.wrongScope},
			insufficientScope("metrics:read")},
		{"the limits are upstream's", call{target: "/v1/metrics/limits", token: f.org.Token},
			want{status: 200, body: `{"min_date":"2023-01-01","intervals":{"hour":{"min_days":0,"max_days":7},` +
				`"day":{"min_days":0,"max_days":366},"week":{"min_days":14,"max_days":371},` +
				`"month":{"min_days":60,"max_days":1460},"year":{"min_days":366,"max_days":3650}}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.want.check(t, f.s.do(t, tt.call)) })
	}
}

func TestMetricsExportWritesUpstreamsCSV(t *testing.T) {
	t.Parallel()
	f := newMetricsFixture(t)
	rec := f.s.do(t, call{target: "/v1/metrics/export?start_date=2026-03-01&end_date=2026-03-02&interval=day" +
		"&metrics=net_revenue&metrics=orders", token: f.org.Token})
	want := "Timestamp,Orders,Net Revenue\r\n" +
		"2026-03-01T00:00:00+00:00,1,1000\r\n" +
		"2026-03-02T00:00:00+00:00,1,2500\r\n"
	if rec.Code != http.StatusOK || rec.Body.String() != want {
		t.Errorf("export: %d %q, want %q", rec.Code, rec.Body, want)
	}
	if ct, cd := rec.Header().Get("Content-Type"), rec.Header().Get("Content-Disposition"); ct != "text/csv; charset=utf-8" ||
		cd != `attachment; filename="polar-metrics.csv"` {
		t.Errorf("headers: %q, %q", ct, cd)
	}
}

func TestMetricDashboardsServeTheContract(t *testing.T) {
	t.Parallel()
	f := newMetricsFixture(t)
	rec := f.s.do(t, call{method: http.MethodPost, target: "/v1/metrics/dashboards", token: f.org.Token,
		body: `{"name":"Revenue","metrics":["revenue","orders"]}`})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	var d struct{ ID uuid.UUID }
	decodeJSON(t, rec.Body.Bytes(), &d)
	one := "/v1/metrics/dashboards/" + d.ID.String()
	tests := []struct {
		name string
		call call
		want want
	}{
		{"the dashboard is listed", call{target: "/v1/metrics/dashboards", token: f.org.Token},
			want{status: 200, has: []string{`"name":"Revenue"`, `"metrics":["revenue","orders"]`, `"modified_at":null`}}},
		{"it is read by id", call{target: one, token: f.org.Token}, want{status: 200, has: []string{`"organization_id":"` + f.org.ID.String()}}},
		{"another organization does not find it", call{target: one, token: f.other.Token}, want{status: 404, error: "ResourceNotFound"}},
		{"another organization cannot change it", call{method: http.MethodPatch, target: one, token: f.other.Token, body: `{"name":"x"}`},
			want{status: 404, error: "ResourceNotFound"}},
		{"more than ten metrics are refused", call{method: http.MethodPatch, target: one, token: f.org.Token,
			body: `{"metrics":["a","b","c","d","e","f","g","h","i","j","k"]}`}, validation(item{Type: "too_long", Loc: []any{"body", "metrics"}})},
		{"an empty name is refused", call{method: http.MethodPost, target: "/v1/metrics/dashboards", token: f.org.Token, body: `{"name":""}`},
			validation(item{Type: "string_too_short", Loc: []any{"body", "name"}})},
		{"a huge name is refused", call{method: http.MethodPost, target: "/v1/metrics/dashboards", token: f.org.Token,
			body: `{"name":"` + strings.Repeat("n", 300) + `"}`}, validation(item{Type: "string_too_long", Loc: []any{"body", "name"}})},
		{"it is renamed", call{method: http.MethodPatch, target: one, token: f.org.Token, body: `{"name":"Sales"}`},
			want{status: 200, has: []string{`"name":"Sales"`, `"metrics":["revenue","orders"]`}}},
		{"a reader cannot create one", call{method: http.MethodPost, target: "/v1/metrics/dashboards",
			token: f.s.NewToken(t, f.org.ID, "metrics:read"), body: `{"name":"x"}`}, insufficientScope("metrics:write")},
		{"another organization cannot delete it", call{method: http.MethodDelete, target: one, token: f.other.Token},
			want{status: 404, error: "ResourceNotFound"}},
		{"it is deleted", call{method: http.MethodDelete, target: one, token: f.org.Token}, want{status: 204}},
		{"it is gone", call{target: one, token: f.org.Token}, want{status: 404, error: "ResourceNotFound"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.want.check(t, f.s.do(t, tt.call)) })
	}
	var left int
	f.s.Get(t, &left, `SELECT count(*) FROM metric_dashboards WHERE organization_id = $1`, f.org.ID)
	if left != 0 {
		t.Errorf("%d dashboards left", left)
	}
}
