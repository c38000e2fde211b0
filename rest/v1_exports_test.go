package rest_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// exportWorld is an organization with one customer, product, paid order and subscription
// whose every exported value is pinned, and another organization with its own.
type exportWorld struct {
	s                   *v1
	org, other          org
	customer, order     uuid.UUID
	otherOrder, product uuid.UUID
}

func newExportWorld(t *testing.T) *exportWorld {
	t.Helper()
	s := newV1(t)
	w := &exportWorld{s: s, org: s.NewOrg(t, resolverstest.AllScopes), other: s.NewOrg(t, resolverstest.AllScopes)}
	c := s.NewCustomer(t, w.org.ID, "ext-1")
	w.customer = c.ID
	s.Exec(t, `UPDATE customers SET email = 'ada@example.com', name = 'Ada, "the first"', created_at = '2026-03-01T12:00:00.25Z',
		tax_id = 'FR61954506077', tax_id_format = 'eu_vat', metadata = '{"tier": "gold", "n": 2, "ville": "Orléans"}',
		billing_address = '{"line1": "1 Rue", "line2": null, "postal_code": "75001", "city": "Paris", "state": null, "country": "FR"}'
		WHERE id = $1`, c.ID)
	w.product = s.NewProduct(t, w.org.ID, "Pro plan").ID
	w.order = s.NewPaidOrder(t, w.org.ID, c.ID, w.product, nil)
	s.Exec(t, `UPDATE orders SET created_at = '2026-03-01T23:30:00Z', description = '=SUM(A1)', invoice_number = 'INV-1',
		subtotal_amount = 1999, net_amount = 1999, tax_amount = 400, total_amount = 2399, refunded_amount = 0,
		billing_name = 'Ada L', billing_address = '{"country": "FR"}' WHERE id = $1`, w.order)
	sub := s.NewSubscription(t, w.org.ID, c.ID, w.product, nil)
	s.Exec(t, `UPDATE subscriptions SET started_at = '2026-02-01T00:00:00Z', amount = 1000, recurring_interval_count = 3,
		current_period_start = '2026-02-01T00:00:00Z', current_period_end = '2026-05-01T00:00:00Z' WHERE id = $1`, sub)
	oc := s.NewCustomer(t, w.other.ID, "")
	w.otherOrder = s.NewPaidOrder(t, w.other.ID, oc.ID, s.NewProduct(t, w.other.ID, "Other").ID, nil)
	return w
}

// csvOf fetches an export and returns its status, headers and body.
func (w *exportWorld) get(t *testing.T, token, target string) (int, http.Header, string) {
	t.Helper()
	if strings.HasPrefix(target, "/v1/") {
		rec := w.s.do(t, call{target: target, token: token})
		return rec.Code, rec.Header(), rec.Body.String()
	}
	rec := httptest.NewRecorder() // Till's own exports have no published contract
	w.s.h.ServeHTTP(rec, call{target: target, token: token}.request())
	return rec.Code, rec.Header(), rec.Body.String()
}

func TestUpstreamExportsWriteUpstreamsCSV(t *testing.T) {
	w := newExportWorld(t)
	for _, tt := range []struct {
		name, target, filename, body string
	}{
		{"the order export writes the default columns", "/v1/orders/export", "polar-orders.csv",
			"Email,Created At,Product,Net Amount,Currency,Status,Invoice number\r\n" +
				"ada@example.com,2026-03-01T23:30:00+00:00,=SUM(A1),19.99,usd,paid,INV-1\r\n"},
		{"the order export writes the asked columns in the asked order and time zone",
			"/v1/orders/export?columns=total_amount&columns=created_at&columns=billing_country&columns=customer_name&timezone=Europe/Paris&created_after=2026-03-01T00:00:00%2B01:00",
			"polar-orders-2026-03-01.csv",
			"Total,Created At,Billing Country,Customer Name\r\n" +
				"23.99,2026-03-02T00:30:00+01:00,FR,\"Ada, \"\"the first\"\"\"\r\n"},
		{"the order export filters by status", "/v1/orders/export?status=refunded", "polar-orders.csv",
			"Email,Created At,Product,Net Amount,Currency,Status,Invoice number\r\n"},
		{"the subscription export writes the default columns", "/v1/subscriptions/export", "polar-subscriptions.csv",
			"Email,Started At,Product,Amount,Currency,Status,Billing Interval\r\n" +
				"ada@example.com,2026-02-01T00:00:00+00:00,Pro plan,10.0,usd,active,3 months\r\n"},
		{"the subscription export writes one column", "/v1/subscriptions/export?columns=cancel_at_period_end&started_before=2026-03-01T00:00:00Z",
			"polar-subscriptions-2026-03-01.csv", "Cancels At Period End\r\nfalse\r\n"},
		{"the customer export writes every column", "/v1/customers/export", "polar-customers.csv",
			"ID,External ID,Created At,Email,Name,Tax ID,Billing Address Line 1,Billing Address Line 2,Billing Address City,Billing Address State,Billing Address Zip,Billing Address Country,Metadata\r\n" +
				w.customer.String() + ",ext-1,2026-03-01T12:00:00.250000+00:00,ada@example.com,\"Ada, \"\"the first\"\"\"," +
				"\"('FR61954506077', <TaxIDFormat.eu_vat: 'eu_vat'>)\",1 Rue,,Paris,,75001,FR," +
				`"{""n"": 2, ""tier"": ""gold"", ""ville"": ""Orl\u00e9ans""}"` + "\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, h, body := w.get(t, w.org.Token, tt.target)
			if code != http.StatusOK || body != tt.body {
				t.Fatalf("%d\n%q\nwant\n%q", code, body, tt.body)
			}
			if got := h.Get("Content-Disposition"); got != `attachment; filename="`+tt.filename+`"` {
				t.Errorf("Content-Disposition %q, want file %s", got, tt.filename)
			}
			if got := h.Get("Content-Type"); got != "text/csv; charset=utf-8" {
				t.Errorf("Content-Type %q", got)
			}
		})
	}
}

func TestUpstreamExportsNeverShowAnotherOrganizationsRows(t *testing.T) {
	w := newExportWorld(t)
	for _, target := range []string{"/v1/orders/export?columns=email", "/v1/orders/export?organization_id=" + w.other.ID.String(),
		"/v1/customers/export?organization_id=" + w.other.ID.String(), "/v1/subscriptions/export?organization_id=" + w.other.ID.String()} {
		t.Run(target, func(t *testing.T) {
			code, _, body := w.get(t, w.org.Token, target)
			if code != http.StatusOK || strings.Contains(body, w.other.ID.String()) || strings.Count(body, "\r\n") > 2 ||
				(strings.Contains(target, "organization_id") && strings.Count(body, "\r\n") != 1) {
				t.Fatalf("%d %q", code, body)
			}
		})
	}
}

func TestUpstreamExportsRefuseAsUpstreamDoes(t *testing.T) {
	w := newExportWorld(t)
	for _, tt := range []struct {
		name, target string
		token        func() string
		want         want
	}{
		{"a time zone that is no IANA name is a value error", "/v1/orders/export?timezone=Mars/Olympus",
			func() string { return w.org.Token }, want{status: 422, items: []item{{Type: "value_error",
				Loc: []any{"query", "timezone"}, Msg: "Value error, 'Mars/Olympus' is not a valid IANA time zone"}}}},
		{"Local is no IANA time zone", "/v1/subscriptions/export?timezone=Local",
			func() string { return w.org.Token }, want{status: 422, items: []item{{Type: "value_error",
				Loc: []any{"query", "timezone"}, Msg: "Value error, 'Local' is not a valid IANA time zone"}}}},
		{"a bound without offset is refused", "/v1/orders/export?created_after=2026-03-01T00:00:00",
			func() string { return w.org.Token }, want{status: 422, items: []item{{Type: "timezone_aware",
				Loc: []any{"query", "created_after"}, Msg: "Input should have timezone info"}}}},
		{"an unknown column is refused", "/v1/orders/export?columns=password",
			func() string { return w.org.Token }, want{status: 422, items: []item{
				{Type: "enum", Loc: []any{"query", "columns", "str-enum[OrderExportColumn]"}},
				{Type: "enum", Loc: []any{"query", "columns", "json-or-python[json=list[str-enum[OrderExportColumn]],python=chain[is-instance[Sequence],function-wrap[sequence_validator()]]]", 0}},
			}}},
		{"no token is unauthorized", "/v1/orders/export", func() string { return "" }, want{status: 401}},
		{"a token without the list's scope is refused", "/v1/customers/export",
			func() string { return w.s.NewToken(t, w.org.ID, "orders:read") }, want{status: 403, error: "insufficient_scope"}},
		{"a portal session is unauthorized", "/v1/subscriptions/export",
			func() string { return w.s.NewCustomerSession(t, w.org.ID, w.customer) }, want{status: 401}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.check(t, w.s.do(t, call{target: tt.target, token: tt.token()}))
		})
	}
}

func TestUpstreamExportsAdmitEveryRoleThatReadsTheList(t *testing.T) {
	w := newExportWorld(t)
	for _, role := range []string{"owner", "admin", "member", "finance"} {
		t.Run("a "+role+" exports the orders its role reads", func(t *testing.T) {
			u := w.s.NewUser(t, resolverstest.UserSpec{Scope: "orders:read customers:read subscriptions:read",
				Orgs: []uuid.UUID{w.org.ID}, Role: role})
			for _, target := range []string{"/v1/orders/export", "/v1/customers/export", "/v1/subscriptions/export"} {
				code, _, body := w.get(t, u.Token, target)
				if code != http.StatusOK || strings.Count(body, "\r\n") != 2 {
					t.Errorf("%s: %d %q", target, code, body)
				}
			}
		})
	}
}
