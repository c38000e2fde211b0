package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/storage"
)

// keysFixture is an organization with a license-key benefit (two activations, customers
// may manage them) and three keys: a customer's, its member's and an expired one; plus a
// second organization.
type keysFixture struct {
	s                     *v1
	org, other            org
	benefit, plainBenefit uuid.UUID
	customer, member      uuid.UUID
	key, memberKey        *storage.LicenseKey
	expired, plain        *storage.LicenseKey
}

func newKeysFixture(t *testing.T) keysFixture {
	t.Helper()
	s := newV1(t)
	f := keysFixture{s: s, org: s.NewOrg(t, "license_keys:write customer_sessions:write"), other: s.NewOrg(t, "license_keys:write")}
	f.benefit = f.licenseBenefit(t, `{"prefix": null, "expires": null, "activations": {"limit": 2, "enable_customer_admin": true}, "limit_usage": 5}`)
	f.plainBenefit = f.licenseBenefit(t, `{"prefix": null, "expires": null, "activations": null, "limit_usage": null}`)
	f.customer = s.NewCustomer(t, f.org.ID, "ext-keys").ID
	f.member = uuid.New()
	s.Exec(t, `INSERT INTO members (id, organization_id, customer_id, email, name) VALUES ($1, $2, $3, 'm@example.com', 'Mo')`,
		f.member, f.org.ID, f.customer)
	two, five := 2, 5
	past := time.Now().Add(-time.Hour)
	f.key = f.issue(t, f.benefit, nil, "KEY-A", storage.LicenseKeyTerms{LimitActivations: &two, LimitUsage: &five})
	f.memberKey = f.issue(t, f.benefit, &f.member, "KEY-B", storage.LicenseKeyTerms{LimitActivations: &two})
	f.expired = f.issue(t, f.benefit, nil, "KEY-C", storage.LicenseKeyTerms{LimitActivations: &two, ExpiresAt: &past})
	f.plain = f.issue(t, f.plainBenefit, nil, "KEY-D", storage.LicenseKeyTerms{})
	return f
}

func (f keysFixture) licenseBenefit(tb testing.TB, props string) uuid.UUID {
	tb.Helper()
	var id uuid.UUID
	if err := f.s.DB.GetContext(context.Background(), &id, `INSERT INTO benefits (organization_id, type, description, properties)
		VALUES ($1, 'license_keys', 'Key', $2) RETURNING id`, f.org.ID, props); err != nil {
		tb.Fatal(err)
	}
	return id
}

func (f keysFixture) issue(tb testing.TB, benefit uuid.UUID, member *uuid.UUID, key string, terms storage.LicenseKeyTerms) *storage.LicenseKey {
	tb.Helper()
	k, err := storage.IssueLicenseKey(context.Background(), f.s.DB, f.org.ID, benefit, f.customer, member, key, terms, time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// body is a license request body for one of the fixture's keys.
func (f keysFixture) body(key string, extra string) string {
	b := fmt.Sprintf(`{"key":%q,"organization_id":%q`, key, f.org.ID)
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

// activate activates a key through /v1 and returns the activation id.
func (f keysFixture) activate(tb testing.TB, key, extra string) uuid.UUID {
	tb.Helper()
	rec := f.s.do(tb, call{method: http.MethodPost, target: "/v1/license-keys/activate", token: f.org.Token,
		body: f.body(key, `"label":"laptop"`+extra)})
	if rec.Code != http.StatusOK {
		tb.Fatalf("activate: %d %s", rec.Code, rec.Body)
	}
	var out struct{ ID uuid.UUID }
	decodeJSON(tb, rec.Body.Bytes(), &out)
	return out.ID
}

func TestLicenseKeyOperationsServeTheContract(t *testing.T) {
	t.Parallel()
	f := newKeysFixture(t)
	activation := f.activate(t, "KEY-A", `,"conditions":{"major":2},"meta":{"os":"linux"}`)
	readOnly := f.s.NewToken(t, f.org.ID, "license_keys:read")
	longKey := strings.Repeat("k", 41)
	many := make([]string, 51)
	for i := range many {
		many[i] = fmt.Sprintf(`"c%d":1`, i)
	}
	post := func(path, body string) call { return call{method: http.MethodPost, target: path, body: body} }
	tests := []struct {
		name string
		call call
		want want
	}{
		{"list: every key, oldest first, with its customer", call{target: "/v1/license-keys/?status=granted"},
			want{status: 200, has: []string{`"key":"KEY-A"`, `"key":"KEY-D"`, `"total_count":4`, `"customer":{"id":"` + f.customer.String()}}},
		{"list: benefit filter", call{target: "/v1/license-keys/?benefit_id=" + f.plainBenefit.String()},
			want{status: 200, has: []string{`"key":"KEY-D"`, `"total_count":1`}}},
		{"list: a read token may list", call{target: "/v1/license-keys/", token: readOnly}, want{status: 200}},
		{"list: another scope is 403", call{target: "/v1/license-keys/", token: f.s.NewToken(t, f.org.ID, "orders:read")},
			insufficientScope("license_keys:read license_keys:write")},
		{"list: no token is 401", call{target: "/v1/license-keys/", token: "-"}, unauthorized()},
		{"get: the key with its live activations", call{target: "/v1/license-keys/" + f.key.ID.String()},
			want{status: 200, has: []string{`"activations":[{"id":"` + activation.String() + `","license_key_id":"` + f.key.ID.String() +
				`","label":"laptop","meta":{"os":"linux"}`}}},
		{"get: another organization's key is 404", call{target: "/v1/license-keys/" + f.key.ID.String(), token: f.other.Token},
			want{status: 404, body: resourceNotFoundBody}},
		{"get: a malformed id is 422", call{target: "/v1/license-keys/nope"},
			validation(item{Type: "uuid_parsing", Loc: []any{"path", "id"}, Input: "nope"})},
		{"patch: partial, null clears", call{method: http.MethodPatch, target: "/v1/license-keys/" + f.plain.ID.String(),
			body: `{"usage": 3, "limit_usage": null, "expires_at": "2030-01-01T00:00:00Z"}`},
			want{status: 200, has: []string{`"usage":3`, `"limit_usage":null`, `"expires_at":"2030-01-01T00:00:00Z"`, `"status":"granted"`}}},
		{"patch: a zero limit is 422 greater_than", call{method: http.MethodPatch, target: "/v1/license-keys/" + f.plain.ID.String(),
			body: `{"limit_activations": 0}`},
			validation(item{Type: "greater_than", Loc: []any{"body", "limit_activations"}, Msg: "Input should be greater than 0"})},
		{"patch: a read token is 403", call{method: http.MethodPatch, target: "/v1/license-keys/" + f.plain.ID.String(), body: `{}`, token: readOnly},
			insufficientScope("license_keys:write")},
		{"validate: valid, activation null", post("/v1/license-keys/validate", f.body("KEY-D", "")),
			want{status: 200, has: []string{`"validations":1`, `"activation":null`}}},
		{"validate: with the activation and its conditions", post("/v1/license-keys/validate",
			f.body("KEY-A", fmt.Sprintf(`"activation_id":%q,"conditions":{"major":2.0},"increment_usage":2`, activation))),
			want{status: 200, has: []string{`"usage":2`, `"activation":{"id":"` + activation.String() + `"`}}},
		{"validate: wrong conditions", post("/v1/license-keys/validate", f.body("KEY-A", fmt.Sprintf(`"activation_id":%q`, activation))),
			want{status: 404, body: `{"error":"ResourceNotFound","detail":"License key does not match required conditions"}`}},
		{"validate: expired", post("/v1/license-keys/validate", f.body("KEY-C", "")),
			want{status: 404, body: `{"error":"ResourceNotFound","detail":"License key has expired."}`}},
		{"validate: usage beyond the limit is 400", post("/v1/license-keys/validate", f.body("KEY-A", `"increment_usage":4`)),
			want{status: 400, body: `{"error":"BadRequest","detail":"License key only has 3 more usages."}`}},
		{"validate: another organization's token does not find the key",
			call{method: http.MethodPost, target: "/v1/license-keys/validate", body: f.body("KEY-D", ""), token: f.other.Token},
			want{status: 404, body: resourceNotFoundBody}},
		{"validate: negative increment_usage", post("/v1/license-keys/validate", f.body("KEY-D", `"increment_usage":-1`)),
			validation(item{Type: "greater_than_equal", Loc: []any{"body", "increment_usage"}, Msg: "Input should be greater than or equal to 0"})},
		{"validate: 51 conditions", post("/v1/license-keys/validate", f.body("KEY-D", `"conditions":{`+strings.Join(many, ",")+`}`)),
			validation(item{Type: "too_long", Loc: []any{"body", "conditions"},
				Msg: "Dictionary should have at most 50 items after validation, not 51"})},
		{"validate: a 41-character condition key", post("/v1/license-keys/validate", f.body("KEY-D", `"conditions":{"`+longKey+`":1}`)),
			validation(item{Type: "string_too_long", Loc: []any{"body", "conditions", longKey, "[key]"}, Msg: "String should have at most 40 characters"})},
		{"validate: a 501-character condition value", post("/v1/license-keys/validate", f.body("KEY-D", `"conditions":{"k":"`+strings.Repeat("v", 501)+`"}`)),
			validation(
				item{Type: "string_too_long", Loc: []any{"body", "conditions", "k", "constrained-str"}},
				item{Type: "int_parsing", Loc: []any{"body", "conditions", "k", "int"}},
				item{Type: "float_parsing", Loc: []any{"body", "conditions", "k", "float"}},
				item{Type: "bool_parsing", Loc: []any{"body", "conditions", "k", "bool"}})},
		{"validate: a malformed organization id", post("/v1/license-keys/validate", `{"key":"KEY-D","organization_id":"nope"}`),
			validation(item{Type: "uuid_parsing", Loc: []any{"body", "organization_id"}})},
		{"validate: no key", post("/v1/license-keys/validate", fmt.Sprintf(`{"organization_id":%q}`, f.org.ID)),
			validation(item{Type: "missing", Loc: []any{"body", "key"}, Msg: "Field required"})},
		{"activate: a key without activations is 403", post("/v1/license-keys/activate", f.body("KEY-D", `"label":"x"`)),
			want{status: 403, body: `{"error":"NotPermitted","detail":"This license key does not support activations. Use the /validate endpoint instead to check license validity."}`}},
		{"activate: an expired key is 403", post("/v1/license-keys/activate", f.body("KEY-C", `"label":"x"`)),
			want{status: 403, body: `{"error":"NotPermitted","detail":"License key has expired."}`}},
		{"activate: an unknown key is 404", post("/v1/license-keys/activate", f.body("NOPE", `"label":"x"`)),
			want{status: 404, body: resourceNotFoundBody}},
		{"activate: a label is required", post("/v1/license-keys/activate", f.body("KEY-B", "")),
			validation(item{Type: "missing", Loc: []any{"body", "label"}, Msg: "Field required"})},
		{"activate: a 41-character meta key", post("/v1/license-keys/activate", f.body("KEY-B", `"label":"x","meta":{"`+longKey+`":"v"}`)),
			validation(item{Type: "string_too_long", Loc: []any{"body", "meta", longKey, "[key]"}})},
		{"activate: success is 200 with the key", post("/v1/license-keys/activate", f.body("KEY-B", `"label":"desk"`)),
			want{status: 200, has: []string{`"label":"desk"`, `"license_key":{"id":"` + f.memberKey.ID.String() + `"`}}},
		{"deactivate: an unknown activation is 404", post("/v1/license-keys/deactivate", f.body("KEY-A", fmt.Sprintf(`"activation_id":%q`, uuid.New()))),
			want{status: 404, body: resourceNotFoundBody}},
		{"public validate needs no token", call{method: http.MethodPost, target: "/v1/customer-portal/license-keys/validate", token: "-",
			body: f.body("KEY-D", "")}, want{status: 200, has: []string{`"key":"KEY-D"`}}},
		{"public validate with a bad bearer token is 401", call{method: http.MethodPost, target: "/v1/customer-portal/license-keys/validate",
			token: "till_oat_bogus", body: f.body("KEY-D", "")}, invalidToken()},
		{"public activate needs no token", call{method: http.MethodPost, target: "/v1/customer-portal/license-keys/activate", token: "-",
			body: f.body("KEY-C", `"label":"x"`)}, want{status: 403, body: `{"error":"NotPermitted","detail":"License key has expired."}`}},
		{"public activate of an unknown key is 404", call{method: http.MethodPost, target: "/v1/customer-portal/license-keys/activate", token: "-",
			body: f.body("NOPE", `"label":"x"`)}, want{status: 404, body: resourceNotFoundBody}},
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
			tt.want.check(t, f.s.do(t, c))
		})
	}

	t.Run("deactivate is 204 with no body, then 404", func(t *testing.T) {
		for _, path := range []string{"/v1/license-keys/deactivate", "/v1/customer-portal/license-keys/deactivate"} {
			id := f.activate(t, "KEY-B", "")
			c := call{method: http.MethodPost, target: path, token: f.org.Token, body: f.body("KEY-B", fmt.Sprintf(`"activation_id":%q`, id))}
			if strings.Contains(path, "portal") {
				c.token = ""
			}
			rec := f.s.do(t, c)
			want{status: 204, headers: map[string]string{"Content-Type": "application/json"}}.check(t, rec)
			if rec.Body.Len() != 0 {
				t.Errorf("204 body = %q, want none", rec.Body)
			}
			want{status: 404, body: resourceNotFoundBody}.check(t, f.s.do(t, c))
		}
	})
}

func TestPortalLicenseKeysServeTheContract(t *testing.T) {
	t.Parallel()
	f := newKeysFixture(t)
	f.activate(t, "KEY-A", "")
	f.activate(t, "KEY-B", "")
	customerSession := f.s.NewCustomerSession(t, f.org.ID, f.customer)
	f.s.Exec(t, `UPDATE organizations SET feature_settings = '{"member_model_enabled": true}' WHERE id = $1`, f.org.ID)
	var memberSession string
	// A member session for the member holding KEY-B.
	rec := f.s.do(t, call{method: http.MethodPost, target: "/v1/customer-sessions/", token: f.org.Token,
		body: fmt.Sprintf(`{"customer_id":%q,"member_id":%q}`, f.customer, f.member)})
	if rec.Code != http.StatusCreated {
		t.Fatalf("member session: %d %s", rec.Code, rec.Body)
	}
	var out struct{ Token string }
	decodeJSON(t, rec.Body.Bytes(), &out)
	memberSession = out.Token
	f.s.Exec(t, `UPDATE benefits SET properties = jsonb_set(properties, '{activations,enable_customer_admin}', 'false') WHERE id = $1`, f.benefit)

	tests := []struct {
		name string
		call call
		want want
	}{
		{"a customer session lists all the customer's keys", call{target: "/v1/customer-portal/license-keys/", token: customerSession},
			want{status: 200, has: []string{`"total_count":4`}}},
		{"a member session lists only its keys", call{target: "/v1/customer-portal/license-keys/", token: memberSession},
			want{status: 200, has: []string{`"key":"KEY-B"`, `"total_count":1`}}},
		{"benefit_id filters", call{target: "/v1/customer-portal/license-keys/?benefit_id=" + f.plainBenefit.String(), token: customerSession},
			want{status: 200, has: []string{`"key":"KEY-D"`, `"total_count":1`}}},
		{"get hides activations unless customers may manage them", call{target: "/v1/customer-portal/license-keys/" + f.key.ID.String(), token: customerSession},
			want{status: 200, has: []string{`"activations":[]`}}},
		{"a member cannot get the customer's other keys", call{target: "/v1/customer-portal/license-keys/" + f.key.ID.String(), token: memberSession},
			want{status: 404, body: resourceNotFoundBody}},
		{"public activate works with a customer session too", call{method: http.MethodPost,
			target: "/v1/customer-portal/license-keys/activate", token: customerSession, body: f.body("KEY-B", `"label":"y"`)},
			want{status: 200, has: []string{`"label":"y"`}}},
		{"an organization token is downgraded: 401", call{target: "/v1/customer-portal/license-keys/", token: f.org.Token}, unauthorized()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.want.check(t, f.s.do(t, tt.call)) })
	}
}
