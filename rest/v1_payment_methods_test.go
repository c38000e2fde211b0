package rest_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/internal/auth"
	"till/storage"
)

// paymentMethodsFixture is one organization whose customer has three cards and a default,
// plus the customers the tenancy and deletion cases need.
type paymentMethodsFixture struct {
	s                      *v1
	org, other             org
	customer               uuid.UUID // external id "ext-1"
	newest, middle, oldest uuid.UUID // cards, middle is the default
	deleted, foreign       uuid.UUID // customers hidden from org's tokens
	many, empty            uuid.UUID // customers with 101 cards and with none
	sole, soleMethod       uuid.UUID // a customer whose only, default, method is not a card
}

func newPaymentMethodsFixture(t *testing.T) paymentMethodsFixture {
	t.Helper()
	s := newV1(t)
	f := paymentMethodsFixture{s: s, org: s.NewOrg(t, "customers:read"), other: s.NewOrg(t, "customers:read")}
	c := s.NewCustomer(t, f.org.ID, "ext-1")
	f.customer = c.ID
	f.oldest = s.AddCard(t, f.org.ID, c.ID, "1111", 3*time.Hour)
	f.middle = s.AddCard(t, f.org.ID, c.ID, "2222", 2*time.Hour)
	f.newest = s.AddCard(t, f.org.ID, c.ID, "3333", time.Hour)
	s.Exec(t, `UPDATE customers SET default_payment_method_id = $1 WHERE id = $2`, f.middle, c.ID)
	removed := s.AddCard(t, f.org.ID, c.ID, "0000", time.Minute) // the newest, but removed
	s.Exec(t, `UPDATE payment_methods SET deleted_at = now() WHERE id = $1`, removed)

	d := s.NewCustomer(t, f.org.ID, "ext-deleted")
	s.AddCard(t, f.org.ID, d.ID, "4444", time.Hour)
	s.Exec(t, `UPDATE customers SET deleted_at = now() WHERE id = $1`, d.ID)
	f.deleted = d.ID

	fc := s.NewCustomer(t, f.other.ID, "ext-foreign")
	s.AddCard(t, f.other.ID, fc.ID, "5555", time.Hour)
	f.foreign = fc.ID

	// 101 cards, so a clamped limit of 100 leaves a second page.
	m := s.NewCustomer(t, f.org.ID, "")
	s.Exec(t, `INSERT INTO payment_methods (organization_id, customer_id, processor_id, type, brand, last4, exp_month, exp_year, created_at)
		SELECT $1, $2, 'pm_many_' || i, 'card', 'mastercard', lpad(i::text, 4, '0'), 1, 2031, now() - i * interval '1 minute'
		FROM generate_series(1, 101) AS i`, f.org.ID, m.ID)
	f.many = m.ID

	f.empty = s.NewCustomer(t, f.org.ID, "").ID
	f.sole = s.NewCustomer(t, f.org.ID, "").ID
	f.soleMethod = s.AddPaymentMethod(t, f.org.ID, f.sole, storage.PaymentMethodWrite{Type: "sepa_debit"}, time.Minute)
	s.Exec(t, `UPDATE customers SET default_payment_method_id = $1 WHERE id = $2`, f.soleMethod, f.sole)
	return f
}

func TestListCustomerPaymentMethodsServesTheContract(t *testing.T) {
	t.Parallel()
	f := newPaymentMethodsFixture(t)
	byID := func(id uuid.UUID, query string) string {
		return "/v1/customers/" + id.String() + "/payment-methods" + query
	}
	byExternal := func(ext, query string) string {
		return "/v1/customers/external/" + ext + "/payment-methods" + query
	}
	customerSession := f.s.NewCustomerSession(t, f.org.ID, f.customer)

	all := []uuid.UUID{f.newest, f.middle, f.oldest}
	tests := []struct {
		name  string
		call  call
		want  want
		ids   []uuid.UUID // expected item order, when the answer is a page
		total int
		max   int
	}{
		{name: "a customer's live methods come newest first with the default marked",
			call: call{target: byID(f.customer, "")}, ids: all, total: 3, max: 1,
			want: want{status: 200, headers: map[string]string{"Content-Type": "application/json",
				"Polar-Version": "2026-04", "Cache-Control": "private, no-store", "WWW-Authenticate": ""}}},
		{name: "the external id finds the same customer",
			call: call{target: byExternal("ext-1", "")}, want: want{status: 200}, ids: all, total: 3, max: 1},
		{name: "page two of size two holds the oldest card",
			call: call{target: byID(f.customer, "?page=2&limit=2")}, want: want{status: 200}, ids: []uuid.UUID{f.oldest}, total: 3, max: 2},
		{name: "page two of size two by external id holds the oldest card",
			call: call{target: byExternal("ext-1", "?page=2&limit=2")}, want: want{status: 200}, ids: []uuid.UUID{f.oldest}, total: 3, max: 2},
		{name: "a page past the last is empty, not an error",
			call: call{target: byID(f.customer, "?page=9")}, want: want{status: 200}, ids: []uuid.UUID{}, total: 3, max: 1},
		{name: "a limit above 100 is clamped to 100",
			call: call{target: byID(f.many, "?limit=1000")}, want: want{status: 200}, total: 101, max: 2},
		{name: "a customer without methods has an empty page and max_page 0",
			call: call{target: byID(f.empty, "")}, want: want{status: 200}, ids: []uuid.UUID{}, total: 0, max: 0},
		{name: "a token with customers:write alone may list",
			call: call{target: byID(f.customer, ""), token: f.s.NewToken(t, f.org.ID, "customers:write")}, want: want{status: 200}, ids: all, total: 3, max: 1},
		{name: "the /api/v1 prefix is served as /v1",
			call: call{target: "/api" + byID(f.customer, "")}, want: want{status: 200}, ids: all, total: 3, max: 1},
		{name: "an explicit Polar-Version 2026-04 is echoed",
			call: call{target: byID(f.customer, ""), header: map[string]string{"Polar-Version": "2026-04"}},
			want: want{status: 200, headers: map[string]string{"Polar-Version": "2026-04", "Cache-Control": "private, no-store"}}, ids: all, total: 3, max: 1},

		{name: "page 0 is 422 greater_than",
			call: call{target: byID(f.customer, "?page=0")},
			want: validation(item{Type: "greater_than", Loc: []any{"query", "page"}, Msg: "Input should be greater than 0", Input: "0", Ctx: map[string]any{"gt": float64(0)}})},
		{name: "a negative limit is 422 greater_than",
			call: call{target: byExternal("ext-1", "?limit=-1")},
			want: validation(item{Type: "greater_than", Loc: []any{"query", "limit"}, Msg: "Input should be greater than 0", Input: "-1"})},
		{name: "a limit that is not a number is 422 int_parsing",
			call: call{target: byID(f.customer, "?limit=abc")},
			want: validation(item{Type: "int_parsing", Loc: []any{"query", "limit"}, Msg: "Input should be a valid integer, unable to parse string as an integer", Input: "abc"})},
		{name: "both bad parameters are reported together, page first",
			call: call{target: byID(f.customer, "?limit=x&page=0")},
			want: validation(
				item{Type: "greater_than", Loc: []any{"query", "page"}, Msg: "Input should be greater than 0"},
				item{Type: "int_parsing", Loc: []any{"query", "limit"}, Msg: "Input should be a valid integer, unable to parse string as an integer"})},
		{name: "an id that is not a UUID is 422 uuid_parsing",
			call: call{target: "/v1/customers/not-a-uuid/payment-methods"},
			want: validation(item{Type: "uuid_parsing", Loc: []any{"path", "id"},
				Msg: "Input should be a valid UUID, invalid character: found `n` at 1", Input: "not-a-uuid"})},
		{name: "a version 1 UUID is 422 uuid_version",
			call: call{target: byID(uuid.MustParse("6ba7b810-9dad-11d1-80b4-00c04fd430c8"), "")},
			want: validation(item{Type: "uuid_version", Loc: []any{"path", "id"}, Msg: "UUID version 4 expected", Ctx: map[string]any{"expected_version": float64(4)}})},

		{name: "an unknown customer is 404 ResourceNotFound",
			call: call{target: byID(uuid.New(), "")}, want: want{status: 404, body: resourceNotFoundBody}},
		{name: "an unknown external id is 404 ResourceNotFound",
			call: call{target: byExternal("nobody", "")}, want: want{status: 404, body: resourceNotFoundBody}},
		{name: "a soft-deleted customer is 404 ResourceNotFound",
			call: call{target: byID(f.deleted, "")}, want: want{status: 404, body: resourceNotFoundBody}},
		{name: "a soft-deleted customer's external id is 404 ResourceNotFound",
			call: call{target: byExternal("ext-deleted", "")}, want: want{status: 404, body: resourceNotFoundBody}},
		{name: "another organization's customer is 404, never 403",
			call: call{target: byID(f.foreign, "")}, want: want{status: 404, body: resourceNotFoundBody}},
		{name: "another organization's external id is 404, never 403",
			call: call{target: byExternal("ext-foreign", "")}, want: want{status: 404, body: resourceNotFoundBody}},

		{name: "no token is 401 Unauthorized with a Bearer challenge",
			call: call{target: byID(f.customer, ""), token: "-"}, want: unauthorized()},
		{name: "no token beats a bad query parameter",
			call: call{target: byID(f.customer, "?page=0"), token: "-"}, want: unauthorized()},
		{name: "a token without customers scopes is 403 insufficient_scope",
			call: call{target: byID(f.customer, ""), token: f.s.NewToken(t, f.org.ID, "customer_sessions:write orders:read")},
			want: insufficientScope("customers:read customers:write")},
		{name: "a token without customers scopes is 403 on the external route too",
			call: call{target: byExternal("ext-1", ""), token: f.s.NewToken(t, f.org.ID, "products:read")},
			want: insufficientScope("customers:read customers:write")},
		{name: "a customer session is downgraded to anonymous: 401 Unauthorized",
			call: call{target: byID(f.customer, ""), token: customerSession}, want: unauthorized()},
		{name: "a garbage token is 401 invalid_token",
			call: call{target: byID(f.customer, ""), token: "not-a-till-token"}, want: invalidToken()},
		{name: "a well-formed token nobody issued is 401 invalid_token",
			call: call{target: byID(f.customer, ""), token: "till_oat_" + "0123456789abcdefghijklmnopqrstuvwxyzABCDEF"}, want: invalidToken()},
		{name: "a revoked token is 401 invalid_token",
			call: call{target: byID(f.customer, ""), token: f.deadToken(t, "deleted_at")}, want: invalidToken()},
		{name: "an expired token is 401 invalid_token",
			call: call{target: byExternal("ext-1", ""), token: f.deadToken(t, "expires_at")}, want: invalidToken()},

		{name: "a trailing slash redirects with 307 to the upstream spelling",
			call: call{target: byID(f.customer, "/?page=2")},
			want: want{status: 307, headers: map[string]string{"Location": portalURL + byID(f.customer, "?page=2")}}},
		{name: "POST on the list is 405 with Allow",
			call: call{method: http.MethodPost, target: byID(f.customer, ""), body: "{}"},
			want: want{status: 405, body: methodNotAllowedBody, headers: map[string]string{"Allow": "GET, HEAD"}}},
		{name: "an unsupported Polar-Version is 404 before authentication",
			call: call{target: byID(f.customer, ""), token: "garbage", header: map[string]string{"Polar-Version": "1999-01"}},
			want: want{status: 404, body: notFoundBody, headers: map[string]string{"Polar-Version": ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.call
			switch c.token {
			case "":
				c.token = f.org.Token
			case "-":
				c.token = ""
			}
			rec := f.s.do(t, c)
			tt.want.check(t, rec)
			if tt.want.status != http.StatusOK {
				return
			}
			p := decodeMethods(t, rec.Body.Bytes())
			if p.Pagination.TotalCount != tt.total || p.Pagination.MaxPage != tt.max {
				t.Errorf("pagination = %+v, want total_count %d, max_page %d", p.Pagination, tt.total, tt.max)
			}
			if tt.ids != nil {
				if diff := cmp.Diff(tt.ids, p.ids()); diff != "" {
					t.Errorf("item order (-want +got):\n%s", diff)
				}
			} else if len(p.Items) != 100 {
				t.Errorf("got %d items, want the clamped 100", len(p.Items))
			}
			for i, it := range p.Items {
				if it.IsDefault == nil {
					t.Fatalf("item %d has no is_default: %s", i, p.raw[i])
				}
				if *it.IsDefault != (it.ID == f.middle) {
					t.Errorf("item %s is_default = %v", it.ID, *it.IsDefault)
				}
			}
		})
	}
}

// TestListCustomerPaymentMethodsShowsCardDetails pins every field of a card item.
func TestListCustomerPaymentMethodsShowsCardDetails(t *testing.T) {
	t.Parallel()
	f := newPaymentMethodsFixture(t)
	rec := f.s.do(t, call{target: fmt.Sprintf("/v1/customers/%s/payment-methods?limit=1", f.customer), token: f.org.Token})
	want{status: 200}.check(t, rec)
	p := decodeMethods(t, rec.Body.Bytes())
	if len(p.Items) != 1 {
		t.Fatalf("got %d items: %s", len(p.Items), rec.Body)
	}
	if diff := cmp.Diff([]string{"created_at", "customer_id", "id", "is_default", "method_metadata", "modified_at", "processor", "type"}, keysOf(t, p.raw[0])); diff != "" {
		t.Errorf("item keys (-want +got):\n%s", diff)
	}
	it := p.Items[0]
	if it.ID != f.newest || it.CustomerID != f.customer || it.Type != "card" || it.Processor != "stripe" || it.MethodMetadata == nil {
		t.Fatalf("item = %s", p.raw[0])
	}
	m := *it.MethodMetadata
	if m.Brand != "visa" || m.Last4 != "3333" || m.ExpMonth != 12 || m.ExpYear != 2030 || m.Wallet != nil {
		t.Errorf("method_metadata = %+v", m)
	}

	t.Run("a method that is not a card is a generic item, default included", func(t *testing.T) {
		rec := f.s.do(t, call{target: fmt.Sprintf("/v1/customers/%s/payment-methods", f.sole), token: f.org.Token})
		want{status: 200}.check(t, rec)
		p := decodeMethods(t, rec.Body.Bytes())
		if len(p.Items) != 1 || p.Items[0].Type != "sepa_debit" || p.Items[0].IsDefault == nil || !*p.Items[0].IsDefault {
			t.Errorf("items = %s", rec.Body)
		}
	})
}

// deadToken is an organization token of the fixture's organization whose column (deleted_at
// or expires_at) was set in the past.
func (f paymentMethodsFixture) deadToken(tb testing.TB, column string) string {
	tb.Helper()
	tok := f.s.NewToken(tb, f.org.ID, "customers:read")
	f.s.Exec(tb, `UPDATE organization_access_tokens SET `+column+` = now() - interval '1 second' WHERE token = $1`,
		auth.Hash(f.s.Secret, tok))
	return tok
}
