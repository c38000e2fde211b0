package rest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/storage"
)

// TestMalformedInputNeverFailsTheServer sends odd but possible requests to every route: each
// must get a 2xx or a 4xx in upstream's shape, never a 500.
func TestMalformedInputNeverFailsTheServer(t *testing.T) {
	t.Parallel()
	f := newPortalFixture(t)
	c := f.customer(t, true)
	const me = "/v1/customer-portal/customers/me"
	const sessions = "/v1/customer-sessions/"
	nulValue := func(loc ...any) item {
		return item{Type: "value_error", Loc: loc, Msg: "Value error, This value contains invalid characters", Ctx: map[string]any{"error": map[string]any{}}}
	}
	tests := []struct {
		name   string
		call   call
		want   want
		header string // Content-Type; application/json when empty
	}{
		{name: "unknown fields in a portal update are ignored",
			call: call{method: http.MethodPatch, target: me, body: `{"billing_name":"Known","nickname":"x","nested":{"a":[1,{"b":null}]}}`},
			want: want{status: 200, has: []string{`"billing_name":"Known"`}}},
		{name: "unknown fields in a session body are ignored",
			call: call{method: http.MethodPost, target: sessions, token: f.org.Token, body: fmt.Sprintf(`{"customer_id":%q,"customer_email":"x@y.z","extra":[1,2]}`, c.id)},
			want: want{status: 201}},
		{name: "a repeated key keeps its last value, as Python's json does",
			call: call{method: http.MethodPatch, target: me, body: `{"billing_name":"first","billing_name":"Last"}`},
			want: want{status: 200, has: []string{`"billing_name":"Last"`}}},
		{name: "U+0000 in a string field is 422 value_error",
			call: call{method: http.MethodPatch, target: me, body: `{"billing_name":"a\u0000b"}`},
			want: validation(nulValue("body", "billing_name"))},
		{name: "U+0000 in a nested string is 422 value_error at its path",
			call: call{method: http.MethodPatch, target: me, body: `{"billing_address":{"country":"FR","city":"Pa\u0000ris"}}`},
			want: validation(nulValue("body", "billing_address", "city"))},
		{name: "U+0000 in an external customer id is 422 in the union",
			call: call{method: http.MethodPost, target: sessions, token: f.org.Token, body: `{"external_customer_id":"a\u0000"}`},
			want: validation(
				item{Type: "missing", Loc: []any{"body", "CustomerSessionCustomerIDCreate", "customer_id"}, Msg: "Field required"},
				nulValue("body", "CustomerSessionCustomerExternalIDCreate", "external_customer_id"))},
		{name: "a number for a string is 422 string_type",
			call: call{method: http.MethodPatch, target: me, body: `{"billing_name":123}`},
			want: validation(item{Type: "string_type", Loc: []any{"body", "billing_name"}, Msg: "Input should be a valid string", Input: float64(123)})},
		{name: "a boolean tax id is 422 string_type",
			call: call{method: http.MethodPatch, target: me, body: `{"tax_id":true}`},
			want: validation(item{Type: "string_type", Loc: []any{"body", "tax_id"}, Msg: "Input should be a valid string", Input: true})},
		{name: "a string for an address is 422 model_attributes_type",
			call: call{method: http.MethodPatch, target: me, body: `{"billing_address":"FR"}`},
			want: validation(item{Type: "model_attributes_type", Loc: []any{"body", "billing_address"},
				Msg: "Input should be a valid dictionary or object to extract fields from", Input: "FR"})},
		{name: "a number for a country is 422 enum",
			call: call{method: http.MethodPatch, target: me, body: `{"billing_address":{"country":33}}`},
			want: validation(item{Type: "enum", Loc: []any{"body", "billing_address", "country"}, Input: float64(33)})},
		{name: "a number for a UUID is 422 uuid_type",
			call: call{method: http.MethodPatch, target: me, body: `{"default_payment_method_id":42}`},
			want: validation(item{Type: "uuid_type", Loc: []any{"body", "default_payment_method_id"}, Msg: "UUID input should be a string, bytes or UUID object"})},
		{name: "a number for a customer id fails both union members",
			call: call{method: http.MethodPost, target: sessions, token: f.org.Token, body: `{"customer_id":1}`},
			want: validation(
				item{Type: "uuid_type", Loc: []any{"body", "CustomerSessionCustomerIDCreate", "customer_id"}, Msg: "UUID input should be a string, bytes or UUID object"},
				item{Type: "missing", Loc: []any{"body", "CustomerSessionCustomerExternalIDCreate", "external_customer_id"}, Msg: "Field required"})},
		{name: "a JSON array body is 422 model_attributes_type at body",
			call: call{method: http.MethodPatch, target: me, body: `[]`},
			want: validation(item{Type: "model_attributes_type", Loc: []any{"body"}, Msg: "Input should be a valid dictionary or object to extract fields from"})},
		{name: "a JSON string body is 422 model_attributes_type at body",
			call: call{method: http.MethodPatch, target: me, body: `"billing_name"`},
			want: validation(item{Type: "model_attributes_type", Loc: []any{"body"}, Input: "billing_name"})},
		{name: "a text/plain body is not parsed as JSON",
			call: call{method: http.MethodPatch, target: me, body: `{"billing_name":"x"}`}, header: "text/plain",
			want: validation(item{Type: "model_attributes_type", Loc: []any{"body"}})},
		{name: "a +json content type is parsed as JSON",
			call: call{method: http.MethodPatch, target: me, body: `{"billing_name":"Vendor"}`}, header: "application/vnd.api+json; charset=utf-8",
			want: want{status: 200, has: []string{`"billing_name":"Vendor"`}}},
		{name: "trailing garbage after the JSON is 422 json_invalid",
			call: call{method: http.MethodPatch, target: me, body: `{} x`},
			want: validation(item{Type: "json_invalid", Loc: []any{"body", 3}, Msg: "JSON decode error", Ctx: map[string]any{"error": "Extra data"}})},
		{name: "invalid UTF-8 is 400, as FastAPI cannot decode the body",
			call: call{method: http.MethodPatch, target: me, body: "{\"billing_name\":\"\xff\"}"},
			want: want{status: 400, body: `{"detail":"There was an error parsing the body"}`}},
		{name: "very deep nesting is answered without a server error",
			call: call{method: http.MethodPatch, target: me, body: `{"x":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`},
			want: want{status: 400, body: `{"detail":"There was an error parsing the body"}`}},
		{name: "a fractional page is 422 int_parsing",
			call: call{target: me + "/payment-methods?page=1.5"},
			want: validation(item{Type: "int_parsing", Loc: []any{"query", "page"}, Input: "1.5"})},
		{name: "an enormous page is an empty page, not an overflow",
			call: call{target: me + "/payment-methods?page=99999999999999999999"},
			want: want{status: 200, body: `{"items":[],"pagination":{"total_count":2,"max_page":1}}`}},
		{name: "a repeated page keeps the last value",
			call: call{target: me + "/payment-methods?page=0&page=1"},
			want: want{status: 200, has: []string{`"pagination":{"total_count":2,"max_page":1}`, `"last4":"2222"`}}},
		{name: "an empty page value is 422 int_parsing",
			call: call{target: me + "/payment-methods?page="},
			want: validation(item{Type: "int_parsing", Loc: []any{"query", "page"}, Input: ""})},
		{name: "a percent-encoded external id is decoded before the lookup",
			call: call{target: "/v1/customers/external/no%20body/payment-methods", token: f.org.Token},
			want: want{status: 404, body: resourceNotFoundBody}},
		{name: "a uuid with upper-case letters and braces is accepted",
			call: call{target: "/v1/customers/{" + strings.ToUpper(c.id.String()) + "}/payment-methods", token: f.org.Token},
			want: want{status: 200}},
		{name: "a Bearer scheme in lower case is still a bearer token",
			call: call{target: me + "/payment-methods", header: map[string]string{"Authorization": "bearer " + c.token}},
			want: want{status: 200}},
		{name: "another auth scheme is anonymous",
			call: call{target: me + "/payment-methods", header: map[string]string{"Authorization": "Basic dXNlcjpwYXNz"}},
			want: unauthorized()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := tt.call
			if cl.token == "" {
				cl.token = c.token
			}
			if tt.header != "" {
				if cl.header == nil {
					cl.header = map[string]string{}
				}
				cl.header["Content-Type"] = tt.header
			}
			rec := f.s.do(t, cl)
			if rec.Code >= 500 {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			tt.want.check(t, rec)
		})
	}
}

// TestMemberSessionsFollowTheBillingRole runs the portal routes with member sessions: the
// owner may manage billing, a plain member gets 403 NotPermitted.
func TestMemberSessionsFollowTheBillingRole(t *testing.T) {
	t.Parallel()
	s := newV1(t)
	o := s.NewOrg(t, "customer_sessions:write customers:read")
	s.Exec(t, `UPDATE organizations SET feature_settings = '{"member_model_enabled": true}' WHERE id = $1`, o.ID)
	c := s.NewCustomer(t, o.ID, "")
	card := s.AddCard(t, o.ID, c.ID, "4242", 0)
	var memberID uuid.UUID
	if err := s.DB.Get(&memberID, `INSERT INTO members (organization_id, customer_id, email, role, external_id)
		VALUES ($1, $2, 'member@example.com', 'member', 'm-1') RETURNING id`, o.ID, c.ID); err != nil {
		t.Fatal(err)
	}
	open := func(t *testing.T, body string) string {
		t.Helper()
		rec := s.do(t, call{method: http.MethodPost, target: "/v1/customer-sessions/", token: o.Token, body: body})
		want{status: 201}.check(t, rec)
		var out sessionBody
		decodeJSON(t, rec.Body.Bytes(), &out)
		if !strings.HasPrefix(out.Token, "till_mst_") {
			t.Fatalf("token = %q, want a member session", out.Token)
		}
		return out.Token
	}
	owner := open(t, fmt.Sprintf(`{"customer_id":%q}`, c.ID))
	member := open(t, fmt.Sprintf(`{"customer_id":%q,"external_member_id":"m-1"}`, c.ID))
	byMemberID := open(t, fmt.Sprintf(`{"customer_id":%q,"member_id":%q}`, c.ID, memberID))

	team, err := storage.CreateCustomer(t.Context(), s.DB, o.ID, storage.CustomerWrite{Type: "team", Name: ptr("Team")})
	if err != nil {
		t.Fatal(err)
	}
	notPermitted := want{status: http.StatusForbidden, error: "NotPermitted"}
	tests := []struct {
		name string
		call call
		want want
	}{
		{"the owner lists the payment methods", call{target: "/v1/customer-portal/customers/me/payment-methods", token: owner}, want{status: 200}},
		{"the owner sets the default payment method",
			call{method: http.MethodPatch, target: "/v1/customer-portal/customers/me", token: owner, body: fmt.Sprintf(`{"default_payment_method_id":%q}`, card)},
			want{status: 200}},
		{"a plain member may not list payment methods", call{target: "/v1/customer-portal/customers/me/payment-methods", token: member}, notPermitted},
		{"a plain member may not update billing details",
			call{method: http.MethodPatch, target: "/v1/customer-portal/customers/me", token: byMemberID, body: `{"billing_name":"Member"}`}, notPermitted},
		{"a plain member is refused before a malformed body is validated, as upstream authorizes first",
			call{method: http.MethodPatch, target: "/v1/customer-portal/customers/me", token: member, body: `{"billing_address":{"country":"XX"}}`}, notPermitted},
		{"a plain member is refused before bad query parameters are validated",
			call{target: "/v1/customer-portal/orders/?page=0", token: member}, notPermitted},
		{"a member session is downgraded on organization routes",
			call{target: "/v1/customers/" + c.ID.String() + "/payment-methods", token: owner}, unauthorized()},
		{"a team customer needs a member id",
			call{method: http.MethodPost, target: "/v1/customer-sessions/", token: o.Token, body: fmt.Sprintf(`{"customer_id":%q}`, team.ID)},
			polarValidation(item{Type: "value_error", Loc: []any{"body", "member_id"}, Msg: "member_id is required for team customers."})},
		{"an unknown member id is 422",
			call{method: http.MethodPost, target: "/v1/customer-sessions/", token: o.Token, body: fmt.Sprintf(`{"customer_id":%q,"member_id":%q}`, c.ID, uuid.New())},
			polarValidation(item{Type: "value_error", Loc: []any{"body", "member_id"}, Msg: "Member does not exist for this customer."})},
		{"an unknown external member id is 422",
			call{method: http.MethodPost, target: "/v1/customer-sessions/", token: o.Token, body: fmt.Sprintf(`{"customer_id":%q,"external_member_id":"nobody"}`, c.ID)},
			polarValidation(item{Type: "value_error", Loc: []any{"body", "external_member_id"}, Msg: "Member does not exist for this customer.", Input: "nobody"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.check(t, s.do(t, tt.call))
		})
	}
}
