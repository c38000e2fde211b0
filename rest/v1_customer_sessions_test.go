package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/rest"
)

// sessionBody is a CustomerSession body.
type sessionBody struct {
	ID                uuid.UUID  `json:"id"`
	CreatedAt         time.Time  `json:"created_at"`
	ModifiedAt        *time.Time `json:"modified_at"`
	Token             string     `json:"token"`
	ExpiresAt         time.Time  `json:"expires_at"`
	ReturnURL         *string    `json:"return_url"`
	CustomerPortalURL string     `json:"customer_portal_url"`
	CustomerID        uuid.UUID  `json:"customer_id"`
	Customer          struct {
		ID             uuid.UUID       `json:"id"`
		Email          string          `json:"email"`
		ExternalID     *string         `json:"external_id"`
		Type           string          `json:"type"`
		OrganizationID uuid.UUID       `json:"organization_id"`
		DeletedAt      *string         `json:"deleted_at"`
		Metadata       json.RawMessage `json:"metadata"`
	} `json:"customer"`
}

func TestCreateCustomerSessionServesTheContract(t *testing.T) {
	t.Parallel()
	s := newV1(t)
	o := s.NewOrg(t, "customer_sessions:write")
	other := s.NewOrg(t, "customer_sessions:write")
	c := s.NewCustomer(t, o.ID, "ext-1")
	s.AddCard(t, o.ID, c.ID, "4242", time.Minute)
	deleted := s.NewCustomer(t, o.ID, "ext-deleted")
	s.Exec(t, `UPDATE customers SET deleted_at = now() WHERE id = $1`, deleted.ID)
	foreign := s.NewCustomer(t, other.ID, "ext-foreign")
	members := s.NewOrg(t, "customer_sessions:write")
	s.Exec(t, `UPDATE organizations SET feature_settings = '{"member_model_enabled": true}' WHERE id = $1`, members.ID)
	mc := s.NewCustomer(t, members.ID, "")
	customerSession := s.NewCustomerSession(t, o.ID, c.ID)

	byID := func(id uuid.UUID) string { return fmt.Sprintf(`{"customer_id":%q}`, id) }
	const path = "/v1/customer-sessions/"
	missingID := item{Type: "missing", Loc: []any{"body", "CustomerSessionCustomerIDCreate", "customer_id"}, Msg: "Field required"}
	missingExternal := item{Type: "missing", Loc: []any{"body", "CustomerSessionCustomerExternalIDCreate", "external_customer_id"}, Msg: "Field required"}
	unknown := func(field string, input any) want {
		return polarValidation(item{Type: "value_error", Loc: []any{"body", field}, Msg: "Customer does not exist.", Input: input})
	}
	tests := []struct {
		name     string
		call     call
		want     want
		customer *uuid.UUID // the session's customer on success
		prefix   string     // the token prefix on success; "till_cst_" when empty
		org      org        // whose slug is in the portal URL; o when zero
		returnTo *string
	}{
		{name: "a customer id opens a customer session",
			call: call{body: `{"customer_id":"` + c.ID.String() + `","return_url":"https://example.com/account?x=1"}`},
			want: want{status: 201}, customer: &c.ID, returnTo: ptr("https://example.com/account?x=1")},
		{name: "an external customer id opens a customer session",
			call: call{body: `{"external_customer_id":"ext-1"}`}, want: want{status: 201}, customer: &c.ID},
		{name: "the customer_external_id alias is accepted",
			call: call{body: `{"customer_external_id":"ext-1","return_url":null}`}, want: want{status: 201}, customer: &c.ID},
		{name: "member fields are ignored without the member model",
			call: call{body: `{"customer_id":"` + c.ID.String() + `","member_id":"` + uuid.NewString() + `","external_member_id":"m1"}`},
			want: want{status: 201}, customer: &c.ID},
		{name: "the member model opens a member session for the owner",
			call: call{body: byID(mc.ID), token: members.Token}, want: want{status: 201}, customer: &mc.ID, prefix: "till_mst_", org: members},
		{name: "Polar-Version 2026-04 is echoed",
			call: call{body: byID(c.ID), header: map[string]string{"Polar-Version": "2026-04"}},
			want: want{status: 201, headers: map[string]string{"Polar-Version": "2026-04"}}, customer: &c.ID},

		{name: "an unknown customer id is 422 on customer_id, not 404",
			call: call{body: byID(uuid.MustParse("0b0c2e9a-6a8e-4d51-8a49-6e1d3c3b9f10"))},
			want: unknown("customer_id", "0b0c2e9a-6a8e-4d51-8a49-6e1d3c3b9f10")},
		{name: "an unknown external id is 422 on external_customer_id",
			call: call{body: `{"external_customer_id":"nobody"}`}, want: unknown("external_customer_id", "nobody")},
		{name: "a soft-deleted customer does not exist",
			call: call{body: byID(deleted.ID)}, want: unknown("customer_id", deleted.ID.String())},
		{name: "another organization's customer does not exist",
			call: call{body: byID(foreign.ID)}, want: unknown("customer_id", foreign.ID.String())},
		{name: "another organization's external id does not exist",
			call: call{body: `{"customer_external_id":"ext-foreign"}`}, want: unknown("external_customer_id", "ext-foreign")},
		{name: "an empty object misses the id of both union members",
			call: call{body: `{}`}, want: validation(missingID, missingExternal)},
		{name: "a customer id that is not a UUID fails both members",
			call: call{body: `{"customer_id":"abc"}`},
			want: validation(item{Type: "uuid_parsing", Loc: []any{"body", "CustomerSessionCustomerIDCreate", "customer_id"},
				Msg: "Input should be a valid UUID, invalid length: expected length 32 for simple format, found 3"}, missingExternal)},
		{name: "a version 1 customer id is uuid_version",
			call: call{body: `{"customer_id":"6ba7b810-9dad-11d1-80b4-00c04fd430c8"}`},
			want: validation(item{Type: "uuid_version", Loc: []any{"body", "CustomerSessionCustomerIDCreate", "customer_id"},
				Msg: "UUID version 4 expected", Ctx: map[string]any{"expected_version": float64(4)}}, missingExternal)},
		{name: "a return_url with another scheme is 422 url_scheme",
			call: call{body: `{"customer_id":"` + c.ID.String() + `","return_url":"ftp://example.com"}`},
			want: validation(
				item{Type: "url_scheme", Loc: []any{"body", "CustomerSessionCustomerIDCreate", "return_url"}, Msg: "URL scheme should be 'http' or 'https'"},
				item{Type: "url_scheme", Loc: []any{"body", "CustomerSessionCustomerExternalIDCreate", "return_url"}, Msg: "URL scheme should be 'http' or 'https'"},
				missingExternal)},
		{name: "a return_url that is not a URL is 422 url_parsing",
			call: call{body: `{"external_customer_id":"ext-1","return_url":"not a url"}`},
			want: validation(
				item{Type: "url_parsing", Loc: []any{"body", "CustomerSessionCustomerIDCreate", "return_url"}, Msg: "Input should be a valid URL, relative URL without a base"},
				missingID,
				item{Type: "url_parsing", Loc: []any{"body", "CustomerSessionCustomerExternalIDCreate", "return_url"}, Msg: "Input should be a valid URL, relative URL without a base"})},
		{name: "a return_url over 2083 characters is 422 url_too_long",
			call: call{body: `{"customer_id":"` + c.ID.String() + `","return_url":"https://example.com/` + strings.Repeat("a", 2064) + `"}`},
			want: validation(
				item{Type: "url_too_long", Loc: []any{"body", "CustomerSessionCustomerIDCreate", "return_url"}, Msg: "URL should have at most 2083 characters",
					Ctx: map[string]any{"max_length": float64(2083)}},
				item{Type: "url_too_long", Loc: []any{"body", "CustomerSessionCustomerExternalIDCreate", "return_url"}, Msg: "URL should have at most 2083 characters"},
				missingExternal)},
		{name: "malformed JSON is 422 json_invalid at its offset",
			call: call{body: `{"customer_id": }`},
			want: validation(item{Type: "json_invalid", Loc: []any{"body", 16}, Msg: "JSON decode error", Input: map[string]any{},
				Ctx: map[string]any{"error": "Expecting value"}})},
		{name: "malformed JSON is 422 even without a token, as the body is parsed first",
			call: call{body: `{`, token: "-"},
			want: validation(item{Type: "json_invalid", Loc: []any{"body", 1}, Msg: "JSON decode error"})},
		{name: "an empty body is 422 missing at body",
			call: call{body: ``}, want: validation(item{Type: "missing", Loc: []any{"body"}, Msg: "Field required", Input: jsonNull})},
		{name: "a JSON null body is 422 missing at body",
			call: call{body: `null`}, want: validation(item{Type: "missing", Loc: []any{"body"}, Msg: "Field required", Input: jsonNull})},

		{name: "no Content-Length is 411 LengthRequired",
			call: call{body: byID(c.ID), header: map[string]string{"Content-Length": ""}},
			want: want{status: 411, body: `{"error":"LengthRequired","detail":"A Content-Length header is required."}`}},
		{name: "a Content-Length over 10 MiB is 413 RequestBodyTooLarge",
			call: call{body: byID(c.ID), header: map[string]string{"Content-Length": strconv.Itoa(rest.MaxBodySize + 1)}},
			want: want{status: 413, body: `{"error":"RequestBodyTooLarge","detail":"Request body exceeded the maximum allowed size of 10485760 bytes."}`}},
		{name: "a token without customer_sessions:write is 403 insufficient_scope",
			call: call{body: byID(c.ID), token: s.NewToken(t, o.ID, "customers:read customers:write")},
			want: insufficientScope("customer_sessions:write")},
		{name: "no token is 401 Unauthorized",
			call: call{body: byID(c.ID), token: "-"}, want: unauthorized()},
		{name: "no token beats an invalid body",
			call: call{body: `{}`, token: "-"}, want: unauthorized()},
		{name: "a customer session cannot open sessions",
			call: call{body: byID(c.ID), token: customerSession}, want: unauthorized()},
		{name: "a garbage token is 401 invalid_token",
			call: call{body: byID(c.ID), token: "garbage"}, want: invalidToken()},
		{name: "an unsupported Polar-Version is 404 Not Found",
			call: call{body: byID(c.ID), header: map[string]string{"Polar-Version": "1999-01"}},
			want: want{status: 404, body: notFoundBody, headers: map[string]string{"Polar-Version": ""}}},
		{name: "a malformed Polar-Version is 404 Not Found",
			call: call{body: byID(c.ID), header: map[string]string{"Polar-Version": "latest"}},
			want: want{status: 404, body: notFoundBody}},
		{name: "GET is 405 with Allow POST",
			call: call{method: http.MethodGet}, want: want{status: 405, body: methodNotAllowedBody, headers: map[string]string{"Allow": "POST"}}},
		{name: "the path without its trailing slash redirects with 307",
			call: call{target: "/v1/customer-sessions", body: byID(c.ID)},
			want: want{status: 307, headers: map[string]string{"Location": portalURL + "/v1/customer-sessions/"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := tt.call
			if cl.method == "" {
				cl.method = http.MethodPost
			}
			if cl.target == "" {
				cl.target = path
			}
			switch cl.token {
			case "":
				cl.token = o.Token
			case "-":
				cl.token = ""
			}
			before := time.Now()
			rec := s.do(t, cl)
			tt.want.check(t, rec)
			if tt.want.status != http.StatusCreated {
				return
			}
			owner := tt.org
			if owner.ID == uuid.Nil {
				owner = o
			}
			prefix := tt.prefix
			if prefix == "" {
				prefix = "till_cst_"
			}
			checkSession(t, s, rec.Body.Bytes(), *tt.customer, owner, prefix, tt.returnTo, before)
		})
	}
}

// checkSession checks every CustomerSession field and that the token opens the portal.
func checkSession(t *testing.T, s *v1, body []byte, customerID uuid.UUID, owner org, prefix string, returnTo *string, before time.Time) {
	t.Helper()
	var got sessionBody
	decodeJSON(t, body, &got)
	if got.ID == uuid.Nil || got.CustomerID != customerID || got.Customer.ID != customerID ||
		got.Customer.OrganizationID != owner.ID || got.Customer.Type != "individual" || got.Customer.DeletedAt != nil ||
		got.ModifiedAt != nil || string(got.Customer.Metadata) != "{}" {
		t.Errorf("session = %s", body)
	}
	if !strings.HasPrefix(got.Token, prefix) || len(got.Token) != len(prefix)+43 {
		t.Errorf("token = %q, want %s followed by 43 characters", got.Token, prefix)
	}
	if got.CreatedAt.Before(before.Add(-time.Second)) || got.CreatedAt.After(time.Now().Add(time.Second)) {
		t.Errorf("created_at = %s, want about now", got.CreatedAt)
	}
	if d := got.ExpiresAt.Sub(got.CreatedAt); d < time.Hour-time.Second || d > time.Hour+time.Second {
		t.Errorf("expires_at - created_at = %s, want 1h", d)
	}
	if diff := cmp.Diff(returnTo, got.ReturnURL); diff != "" {
		t.Errorf("return_url (-want +got):\n%s", diff)
	}
	u, err := url.Parse(got.CustomerPortalURL)
	if err != nil || u.Scheme+"://"+u.Host+u.Path != portalURL+"/"+owner.Slug+"/portal" {
		t.Errorf("customer_portal_url = %q, want %s/%s/portal?...", got.CustomerPortalURL, portalURL, owner.Slug)
	} else if q := u.Query(); q.Get("customer_session_token") != got.Token || q.Get("email") != got.Customer.Email {
		t.Errorf("customer_portal_url query = %v, want the token and email %s", q, got.Customer.Email)
	}
	for _, field := range []string{`"modified_at":`, `"return_url":`, `"customer":{`, `"external_id":`, `"avatar_url":`, `"tax_id":`} {
		if !strings.Contains(string(body), field) {
			t.Errorf("body lacks %s: %s", field, body)
		}
	}
	// The token works on the portal at once.
	rec := s.do(t, call{target: "/v1/customer-portal/customers/me/payment-methods", token: got.Token})
	want{status: http.StatusOK}.check(t, rec)
	if p := decodeMethods(t, rec.Body.Bytes()); p.Pagination.TotalCount != len(p.Items) {
		t.Errorf("portal page = %s", rec.Body)
	}
}
