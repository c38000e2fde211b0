package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"till/rest/fastapi/fastapitest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/storage"
)

// portalFixture is an organization with a token that opens sessions, and a way to make a
// fresh customer (with a session and two cards) per case, so cases cannot see each other's
// writes.
type portalFixture struct {
	s   *v1
	org org
}

// portalCustomer is one customer prepared for a portal case.
type portalCustomer struct {
	id            uuid.UUID
	token         string
	older, newer  uuid.UUID // its cards
	strangersCard uuid.UUID // a card of another customer of the same organization
}

func newPortalFixture(t *testing.T) portalFixture {
	t.Helper()
	s := newV1(t)
	return portalFixture{s: s, org: s.NewOrg(t, "customer_sessions:write customers:read")}
}

// customer makes a customer with billing name "Initial"; with address, a French billing
// address and tax id.
func (f portalFixture) customer(t *testing.T, address bool) portalCustomer {
	t.Helper()
	w := storage.CustomerWrite{Email: ptr("p-" + randomHex(4) + "@example.com"), BillingName: ptr("Initial")}
	if address {
		w.BillingAddress = &storage.Address{Line1: ptr("1 rue de Rivoli"), City: ptr("Paris"), PostalCode: ptr("75001"), Country: "FR"}
		w.TaxID, w.TaxIDFormat = ptr("FR40303265045"), ptr("eu_vat")
	}
	c, err := storage.CreateCustomer(t.Context(), f.s.DB, f.org.ID, w)
	if err != nil {
		t.Fatal(err)
	}
	stranger := f.s.NewCustomer(t, f.org.ID, "")
	pc := portalCustomer{id: c.ID,
		older:         f.s.AddCard(t, f.org.ID, c.ID, "1111", 2*time.Hour),
		newer:         f.s.AddCard(t, f.org.ID, c.ID, "2222", time.Hour),
		strangersCard: f.s.AddCard(t, f.org.ID, stranger.ID, "9999", time.Minute),
	}
	pc.token = f.s.NewCustomerSession(t, f.org.ID, c.ID)
	return pc
}

// portalBody is a CustomerPortalCustomer body.
type portalBody struct {
	ID                     uuid.UUID       `json:"id"`
	BillingName            *string         `json:"billing_name"`
	BillingAddress         json.RawMessage `json:"billing_address"`
	TaxID                  []string        `json:"tax_id"`
	DefaultPaymentMethodID *uuid.UUID      `json:"default_payment_method_id"`
	Type                   *string         `json:"type"`
	OAuthAccounts          json.RawMessage `json:"oauth_accounts"`
}

func TestPortalUpdateCustomerServesTheContract(t *testing.T) {
	t.Parallel()
	f := newPortalFixture(t)
	const path = "/v1/customer-portal/customers/me"
	tests := []struct {
		name    string
		address bool                                                 // the customer starts with a French address and tax id
		body    func(c portalCustomer) string                        // the request body
		token   func(c portalCustomer) string                        // the bearer; the customer's session when nil
		want    want                                                 // the answer
		check   func(t *testing.T, c portalCustomer, got portalBody) // extra checks of a 200
	}{
		{name: "billing_name is updated",
			body: fixed(`{"billing_name":"Ada Lovelace Ltd"}`), want: want{status: 200},
			check: func(t *testing.T, _ portalCustomer, got portalBody) {
				wantString(t, "billing_name", got.BillingName, "Ada Lovelace Ltd")
			}},
		{name: "an empty billing_name is ignored",
			body: fixed(`{"billing_name":""}`), want: want{status: 200},
			check: func(t *testing.T, _ portalCustomer, got portalBody) {
				wantString(t, "billing_name", got.BillingName, "Initial")
			}},
		{name: "a null billing_name is ignored",
			body: fixed(`{"billing_name":null}`), want: want{status: 200},
			check: func(t *testing.T, _ portalCustomer, got portalBody) {
				wantString(t, "billing_name", got.BillingName, "Initial")
			}},
		{name: "an empty object leaves every field as it was",
			body: fixed(`{}`), address: true, want: want{status: 200},
			check: func(t *testing.T, c portalCustomer, got portalBody) {
				if got.ID != c.id || string(got.OAuthAccounts) != "{}" || got.Type == nil || *got.Type != "individual" {
					t.Errorf("customer = %+v", got)
				}
				wantTaxID(t, got, []string{"FR40303265045", "eu_vat"})
			}},
		{name: "a billing address is set with null for the lines not given",
			body: fixed(`{"billing_address":{"country":"DE","city":"Berlin"}}`), want: want{status: 200},
			check: func(t *testing.T, _ portalCustomer, got portalBody) {
				wantJSON(t, "billing_address", got.BillingAddress,
					`{"line1":null,"line2":null,"postal_code":null,"city":"Berlin","state":null,"country":"DE"}`)
			}},
		{name: "an EU VAT number is validated against the new address",
			body: fixed(`{"billing_address":{"country":"FR"},"tax_id":"FR40303265045"}`), want: want{status: 200},
			check: func(t *testing.T, _ portalCustomer, got portalBody) {
				wantTaxID(t, got, []string{"FR40303265045", "eu_vat"})
			}},
		{name: "an EU VAT number is validated against the stored address",
			address: true, body: fixed(`{"tax_id":"FR 40 303 265 045"}`), want: want{status: 200},
			check: func(t *testing.T, _ portalCustomer, got portalBody) {
				wantTaxID(t, got, []string{"FR40303265045", "eu_vat"})
			}},
		{name: "a null tax_id clears it",
			address: true, body: fixed(`{"tax_id":null}`), want: want{status: 200},
			check: func(t *testing.T, _ portalCustomer, got portalBody) { wantTaxID(t, got, nil) }},
		{name: "an empty tax_id clears it too",
			address: true, body: fixed(`{"tax_id":""}`), want: want{status: 200},
			check: func(t *testing.T, _ portalCustomer, got portalBody) { wantTaxID(t, got, nil) }},
		{name: "an own payment method becomes the default",
			body: func(c portalCustomer) string { return fmt.Sprintf(`{"default_payment_method_id":%q}`, c.older) },
			want: want{status: 200},
			check: func(t *testing.T, c portalCustomer, got portalBody) {
				if got.DefaultPaymentMethodID == nil || *got.DefaultPaymentMethodID != c.older {
					t.Errorf("default_payment_method_id = %v, want %s", got.DefaultPaymentMethodID, c.older)
				}
				rec := f.s.do(t, call{target: "/v1/customers/" + c.id.String() + "/payment-methods", token: f.org.Token})
				want{status: 200}.check(t, rec)
				for _, it := range decodeMethods(t, rec.Body.Bytes()).Items {
					if it.IsDefault == nil || *it.IsDefault != (it.ID == c.older) {
						t.Errorf("item %s is_default = %v on the organization route", it.ID, it.IsDefault)
					}
				}
			}},

		{name: "a null billing address is refused even when none was set",
			body: fixed(`{"billing_address":null}`),
			want: polarValidation(item{Type: "missing", Loc: []any{"body", "billing_address"}, Msg: "Customer billing address cannot be reset to null once set."})},
		{name: "a null billing address is refused when one was set",
			address: true, body: fixed(`{"billing_name":"Changed","billing_address":null}`),
			want: polarValidation(item{Type: "missing", Loc: []any{"body", "billing_address"}, Msg: "Customer billing address cannot be reset to null once set."})},
		{name: "an unknown country is 422 enum",
			body: fixed(`{"billing_address":{"country":"XX"}}`),
			want: validation(item{Type: "enum", Loc: []any{"body", "billing_address", "country"}, Input: "XX"})},
		{name: "an address without country is 422 missing",
			body: fixed(`{"billing_address":{"line1":"1 Main St"}}`),
			want: validation(item{Type: "missing", Loc: []any{"body", "billing_address", "country"}, Msg: "Field required",
				Input: map[string]any{"line1": "1 Main St"}})},
		{name: "a tax id without any address cannot be validated",
			body: fixed(`{"billing_name":"Changed","tax_id":"FR40303265045"}`),
			want: polarValidation(item{Type: "value_error", Loc: []any{"body", "tax_id"}, Msg: "Country is required to validate tax ID.", Input: "FR40303265045"})},
		{name: "an invalid tax id is 422 invalid",
			address: true, body: fixed(`{"billing_name":"Changed","tax_id":"FR123"}`),
			want: polarValidation(item{Type: "invalid", Loc: []any{"body", "tax_id"}, Msg: "Invalid tax ID.", Input: "FR123"})},
		{name: "moving the address re-validates the stored tax id",
			address: true, body: fixed(`{"billing_address":{"country":"DE"}}`),
			want: polarValidation(item{Type: "invalid", Loc: []any{"body", "tax_id"}, Msg: "Invalid tax ID."})},
		{name: "another customer's payment method is not found",
			body: func(c portalCustomer) string {
				return fmt.Sprintf(`{"billing_name":"Changed","default_payment_method_id":%q}`, c.strangersCard)
			},
			want: polarValidation(item{Type: "invalid", Loc: []any{"body", "default_payment_method_id"}, Msg: "Payment method not found."})},
		{name: "an unknown payment method is not found, with the id as input",
			body: fixed(`{"default_payment_method_id":"0b0c2e9a-6a8e-4d51-8a49-6e1d3c3b9f10"}`),
			want: polarValidation(item{Type: "invalid", Loc: []any{"body", "default_payment_method_id"}, Msg: "Payment method not found.",
				Input: "0b0c2e9a-6a8e-4d51-8a49-6e1d3c3b9f10"})},
		{name: "a removed payment method of my own is not found",
			body: func(c portalCustomer) string {
				f.s.Exec(t, `UPDATE payment_methods SET deleted_at = now() WHERE id = $1`, c.older)
				return fmt.Sprintf(`{"default_payment_method_id":%q}`, c.older)
			},
			want: polarValidation(item{Type: "invalid", Loc: []any{"body", "default_payment_method_id"}, Msg: "Payment method not found."})},
		{name: "a null default payment method is refused",
			body: fixed(`{"default_payment_method_id":null}`),
			want: polarValidation(item{Type: "value_error", Loc: []any{"body", "default_payment_method_id"}, Msg: "Default payment method cannot be reset to null."})},
		{name: "a default payment method that is not a UUID is 422 uuid_parsing",
			body: fixed(`{"default_payment_method_id":"pm_123"}`),
			want: validation(item{Type: "uuid_parsing", Loc: []any{"body", "default_payment_method_id"},
				Msg: "Input should be a valid UUID, invalid character: found `p` at 1", Input: "pm_123"})},
		{name: "a missing body is 422 missing at body",
			body: fixed(``), want: validation(item{Type: "missing", Loc: []any{"body"}, Msg: "Field required", Input: jsonNull})},
		{name: "an organization token is downgraded to anonymous: 401",
			body: fixed(`{"billing_name":"Changed"}`), token: func(portalCustomer) string { return f.org.Token }, want: unauthorized()},
		{name: "no token is 401",
			body: fixed(`{"billing_name":"Changed"}`), token: func(portalCustomer) string { return "" }, want: unauthorized()},
		{name: "a session whose customer was deleted is 401 invalid_token",
			body: fixed(`{"billing_name":"Changed"}`), want: invalidToken(),
			token: func(c portalCustomer) string {
				f.s.Exec(t, `UPDATE customers SET deleted_at = now() WHERE id = $1`, c.id)
				return c.token
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := f.customer(t, tt.address)
			token := c.token
			if tt.token != nil {
				token = tt.token(c)
			}
			before := f.s.Row(t, "customers", c.id)
			rec := f.s.do(t, call{method: http.MethodPatch, target: path, token: token, body: tt.body(c)})
			tt.want.check(t, rec)
			if rec.Code != http.StatusOK {
				if after := f.s.Row(t, "customers", c.id); after != before && !deletedBy(tt.name) {
					t.Errorf("a failed update wrote the customer:\nbefore %s\nafter  %s", before, after)
				}
				return
			}
			var got portalBody
			decodeJSON(t, rec.Body.Bytes(), &got)
			if got.ID != c.id {
				t.Errorf("id = %s, want %s", got.ID, c.id)
			}
			if tt.check != nil {
				tt.check(t, c, got)
			}
		})
	}
}

// deletedBy reports the one case whose setup itself changes the row.
func deletedBy(name string) bool {
	return name == "a session whose customer was deleted is 401 invalid_token"
}

func TestPortalListPaymentMethodsServesTheContract(t *testing.T) {
	t.Parallel()
	f := newPortalFixture(t)
	c := f.customer(t, false)
	f.s.Exec(t, `UPDATE customers SET default_payment_method_id = $1 WHERE id = $2`, c.older, c.id)
	const path = "/v1/customer-portal/customers/me/payment-methods"
	tests := []struct {
		name  string
		call  call
		want  want
		ids   []uuid.UUID
		total int
		max   int
	}{
		{name: "my methods come newest first, without is_default",
			call: call{target: path}, want: want{status: 200}, ids: []uuid.UUID{c.newer, c.older}, total: 2, max: 1},
		{name: "page two of size one holds the older card",
			call: call{target: path + "?page=2&limit=1"}, want: want{status: 200}, ids: []uuid.UUID{c.older}, total: 2, max: 2},
		{name: "a page past the last is empty",
			call: call{target: path + "?page=3&limit=1"}, want: want{status: 200}, ids: []uuid.UUID{}, total: 2, max: 2},
		{name: "a limit above 100 is clamped",
			call: call{target: path + "?limit=101"}, want: want{status: 200}, ids: []uuid.UUID{c.newer, c.older}, total: 2, max: 1},
		{name: "HEAD is answered like GET",
			call: call{method: http.MethodHead, target: path}, want: want{status: 200}},
		{name: "page 0 is 422 greater_than",
			call: call{target: path + "?page=0"},
			want: validation(item{Type: "greater_than", Loc: []any{"query", "page"}, Msg: "Input should be greater than 0", Input: "0"})},
		{name: "a limit that is not a number is 422 int_parsing",
			call: call{target: path + "?limit=ten"},
			want: validation(item{Type: "int_parsing", Loc: []any{"query", "limit"}, Msg: "Input should be a valid integer, unable to parse string as an integer"})},
		{name: "an organization token is downgraded to anonymous: 401",
			call: call{target: path, token: f.org.Token}, want: unauthorized()},
		{name: "no token is 401", call: call{target: path, token: "-"}, want: unauthorized()},
		{name: "a garbage token is 401 invalid_token", call: call{target: path, token: "till_cst_nope"}, want: invalidToken()},
		{name: "an expired session is 401 invalid_token", call: call{target: path, token: expiredSession(t, f)}, want: invalidToken()},
		{name: "a trailing slash redirects with 307",
			call: call{target: path + "/"}, want: want{status: 307, headers: map[string]string{"Location": portalURL + path}}},
		{name: "DELETE is 405", call: call{method: http.MethodDelete, target: path},
			want: want{status: 405, body: methodNotAllowedBody, headers: map[string]string{"Allow": "GET, HEAD"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := tt.call
			switch cl.token {
			case "":
				cl.token = c.token
			case "-":
				cl.token = ""
			}
			rec := f.s.do(t, cl)
			tt.want.check(t, rec)
			if rec.Code != http.StatusOK || tt.ids == nil {
				return
			}
			p := decodeMethods(t, rec.Body.Bytes())
			if diff := cmp.Diff(tt.ids, p.ids()); diff != "" {
				t.Errorf("item order (-want +got):\n%s", diff)
			}
			if p.Pagination.TotalCount != tt.total || p.Pagination.MaxPage != tt.max {
				t.Errorf("pagination = %+v, want %d/%d", p.Pagination, tt.total, tt.max)
			}
			for i, raw := range p.raw {
				if diff := cmp.Diff([]string{"created_at", "customer_id", "id", "method_metadata", "modified_at", "processor", "type"}, keysOf(t, raw)); diff != "" {
					t.Errorf("item %d keys (-want +got):\n%s", i, diff)
				}
				if m := p.Items[i].MethodMetadata; m == nil || m.Brand != "visa" || m.ExpYear != 2030 || p.Items[i].CustomerID != c.id {
					t.Errorf("item %d = %s", i, raw)
				}
			}
		})
	}
}

// expiredSession is a session token of a fresh customer whose session has expired.
func expiredSession(t *testing.T, f portalFixture) string {
	t.Helper()
	c := f.customer(t, false)
	f.s.Exec(t, `UPDATE customer_sessions SET expires_at = now() - interval '1 second' WHERE customer_id = $1`, c.id)
	return c.token
}

// fixed is a body that does not depend on the case's customer.
func fixed(body string) func(portalCustomer) string {
	return func(portalCustomer) string { return body }
}

func wantString(t *testing.T, field string, got *string, want string) {
	t.Helper()
	if got == nil || *got != want {
		t.Errorf("%s = %v, want %q", field, got, want)
	}
}

func wantTaxID(t *testing.T, got portalBody, want []string) {
	t.Helper()
	if diff := cmp.Diff(want, got.TaxID); diff != "" {
		t.Errorf("tax_id (-want +got):\n%s", diff)
	}
}

func wantJSON(t *testing.T, field string, got json.RawMessage, want string) {
	t.Helper()
	if string(got) != fastapitest.CompactJSON(t, want) {
		t.Errorf("%s = %s, want %s", field, got, fastapitest.CompactJSON(t, want))
	}
}
