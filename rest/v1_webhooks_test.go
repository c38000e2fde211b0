package rest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/internal/webhook"
	"till/resolvers"
	"till/resolvers/resolverstest"
)

// webhooksFixture is an organization with write, read and unrelated tokens, a second
// organization, and a user of both who holds a personal access token.
type webhooksFixture struct {
	s                *v1
	org, other       org
	read, wrongScope string
	user             string
}

func newWebhooksFixture(t *testing.T) webhooksFixture {
	t.Helper()
	s := newV1(t)
	f := webhooksFixture{s: s, org: s.NewOrg(t, "webhooks:write"), other: s.NewOrg(t, "webhooks:write")}
	f.read = s.NewToken(t, f.org.ID, "webhooks:read")
	f.wrongScope = s.NewToken(t, f.org.ID, "orders:read")
	f.user = s.NewUser(t, resolverstest.UserSpec{Scope: "webhooks:write", Orgs: []uuid.UUID{f.org.ID, f.other.ID}}).Token
	return f
}

// create makes an endpoint through /v1 with an organization token and returns its id.
func (f webhooksFixture) create(tb testing.TB, token, url string) uuid.UUID {
	tb.Helper()
	rec := f.s.do(tb, call{method: http.MethodPost, target: "/v1/webhooks/endpoints", token: token,
		body: fmt.Sprintf(`{"url":%q,"format":"raw","events":["order.updated"]}`, url)})
	if rec.Code != http.StatusCreated {
		tb.Fatalf("creating endpoint: %d %s", rec.Code, rec.Body)
	}
	var out struct{ ID uuid.UUID }
	decodeJSON(tb, rec.Body.Bytes(), &out)
	return out.ID
}

// webhookBody is a create body with the given url and extra fields.
func webhookBody(url, extra string) string {
	b := fmt.Sprintf(`{"url":%q,"format":"raw","events":["order.paid","subscription.active"]`, url)
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

func TestWebhookEndpointCreateServesTheContract(t *testing.T) {
	t.Parallel()
	f := newWebhooksFixture(t)
	post := func(body string) call {
		return call{method: http.MethodPost, target: "/v1/webhooks/endpoints", body: body}
	}
	ownSecret := strings.Repeat("s", 32)
	urlItem := func(typ, msg string) want {
		return validation(item{Type: typ, Loc: []any{"body", "url"}, Msg: msg})
	}
	const (
		privateMsg  = "Value error, Webhook URLs cannot point to localhost or private IP addresses."
		hostnameMsg = "Value error, Invalid webhook URL: the hostname contains characters not allowed in domain names."
	)
	tests := []struct {
		name string
		call call
		want want
	}{
		{"an endpoint is created enabled, with a whsec_ secret", post(webhookBody(" https://Hooks.Example.com ", "")),
			want{status: 201, has: []string{`"url":"https://hooks.example.com/"`, `"name":null`, `"format":"raw"`,
				`"secret":"whsec_`, `"organization_id":"` + f.org.ID.String() + `"`,
				`"events":["order.paid","subscription.active"]`, `"enabled":true`, `"modified_at":null`}}},
		{"name and format are kept", post(`{"url":"https://chat.example.com/x","name":"Team","format":"slack","events":[]}`),
			want{status: 201, has: []string{`"name":"Team"`, `"format":"slack"`, `"events":[]`}}},
		{"the deprecated secret is still accepted", post(webhookBody("https://example.com/", `"secret":"`+ownSecret+`"`)),
			want{status: 201, has: []string{`"secret":"` + ownSecret + `"`}}},
		{"a deprecated secret under 32 characters is 422", post(webhookBody("https://example.com/", `"secret":"short"`)),
			validation(item{Type: "string_too_short", Loc: []any{"body", "secret"}, Msg: "String should have at least 32 characters"})},
		{"required fields are reported in schema order", post(`{}`),
			validation(
				item{Type: "missing", Loc: []any{"body", "url"}, Msg: "Field required"},
				item{Type: "missing", Loc: []any{"body", "format"}, Msg: "Field required"},
				item{Type: "missing", Loc: []any{"body", "events"}, Msg: "Field required"})},
		{"an unknown format is 422", post(`{"url":"https://example.com/","format":"xml","events":[]}`),
			validation(item{Type: "enum", Loc: []any{"body", "format"}, Msg: "Input should be 'raw', 'discord' or 'slack'"})},
		{"an unknown event type is 422 at its index", post(`{"url":"https://example.com/","format":"raw","events":["order.paid","order.exploded"]}`),
			validation(item{Type: "enum", Loc: []any{"body", "events", 1}})},
		{"http is refused", post(webhookBody("http://example.com/", "")),
			urlItem("url_scheme", "URL scheme should be 'https'")},
		{"localhost is refused", post(webhookBody("https://localhost:8443/hook", "")), urlItem("value_error", privateMsg)},
		{"127.0.0.1 is refused", post(webhookBody("https://127.0.0.1/", "")), urlItem("value_error", privateMsg)},
		{"[::1] is refused", post(webhookBody("https://[::1]/", "")), urlItem("value_error", privateMsg)},
		{"a private address is refused", post(webhookBody("https://10.0.0.1/", "")), urlItem("value_error", privateMsg)},
		{"the cloud metadata address is refused", post(webhookBody("https://169.254.169.254/", "")), urlItem("value_error", privateMsg)},
		{"an underscore in the host is refused", post(webhookBody("https://my_hooks.example.com/", "")), urlItem("value_error", hostnameMsg)},
		{"a URL that does not parse is refused", post(webhookBody("not a url", "")),
			urlItem("url_parsing", "Input should be a valid URL, relative URL without a base")},
		{"a URL over 2083 characters is refused", post(webhookBody("https://example.com/"+strings.Repeat("a", 2070), "")),
			urlItem("url_too_long", "URL should have at most 2083 characters")},
		{"an organization token may not name an organization", post(webhookBody("https://example.com/", fmt.Sprintf(`"organization_id":%q`, f.org.ID))),
			polarValidation(item{Type: "organization_token", Loc: []any{"body", "organization_id"},
				Msg: "Setting organization_id is disallowed when using an organization token."})},
		{"a user of several organizations must name one", call{method: http.MethodPost, target: "/v1/webhooks/endpoints", token: f.user,
			body: webhookBody("https://example.com/", "")},
			polarValidation(item{Type: "missing", Loc: []any{"body", "organization_id"}, Msg: "organization_id is required."})},
		{"a user may not name an organization of others", call{method: http.MethodPost, target: "/v1/webhooks/endpoints", token: f.user,
			body: webhookBody("https://example.com/", fmt.Sprintf(`"organization_id":%q`, uuid.New()))},
			polarValidation(item{Type: "value_error", Loc: []any{"body", "organization_id"}, Msg: "Organization not found."})},
		{"a user creates in the organization named", call{method: http.MethodPost, target: "/v1/webhooks/endpoints", token: f.user,
			body: webhookBody("https://example.com/", fmt.Sprintf(`"organization_id":%q`, f.other.ID))},
			want{status: 201, has: []string{`"organization_id":"` + f.other.ID.String() + `"`}}},
		{"a read token is 403", call{method: http.MethodPost, target: "/v1/webhooks/endpoints", token: f.read, body: webhookBody("https://example.com/", "")},
			insufficientScope("webhooks:write")},
		{"no token is 401", call{method: http.MethodPost, target: "/v1/webhooks/endpoints", token: "-", body: webhookBody("https://example.com/", "")},
			unauthorized()},
		{"the trailing-slash spelling redirects with 307", call{method: http.MethodPost, target: "/v1/webhooks/endpoints/", body: `{}`},
			want{status: http.StatusTemporaryRedirect, headers: map[string]string{"Location": portalURL + "/v1/webhooks/endpoints"}}},
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
}

func TestWebhookEndpointListAndDeleteServeTheContract(t *testing.T) {
	t.Parallel()
	f := newWebhooksFixture(t)
	first := f.create(t, f.org.Token, "https://a.example.com/")
	second := f.create(t, f.org.Token, "https://b.example.com/")
	f.s.Exec(t, `UPDATE webhook_endpoints SET created_at = now() - interval '1 minute' WHERE id = $1`, first)
	foreign := f.create(t, f.other.Token, "https://c.example.com/")

	list := func(query, token string) call {
		return call{target: "/v1/webhooks/endpoints" + query, token: token}
	}
	tests := []struct {
		name string
		call call
		want want
	}{
		{"the organization's endpoints, newest first, secrets included", list("", f.org.Token),
			want{status: 200, has: []string{`"items":[{"created_at":`, `"id":"` + second.String() + `"`, `"secret":"whsec_`,
				`"pagination":{"total_count":2,"max_page":1}`}}},
		{"a read token may list", list("?page=2&limit=1", f.read),
			want{status: 200, has: []string{`"id":"` + first.String() + `"`, `"pagination":{"total_count":2,"max_page":2}`}}},
		{"organization_id repeats for a user of several organizations", list(fmt.Sprintf("?organization_id=%s&organization_id=%s", f.org.ID, f.other.ID), f.user),
			want{status: 200, has: []string{`"id":"` + foreign.String() + `"`, `"total_count":3`}}},
		{"organization_id narrows", list("?organization_id="+f.other.ID.String(), f.user),
			want{status: 200, has: []string{`"id":"` + foreign.String() + `"`, `"total_count":1`}}},
		{"another organization's filter shows nothing", list("?organization_id="+f.other.ID.String(), f.org.Token),
			want{status: 200, body: `{"items":[],"pagination":{"total_count":0,"max_page":0}}`}},
		{"a malformed organization_id is 422", list("?organization_id=nope", f.org.Token),
			validation(item{Type: "uuid_type", Loc: []any{"query", "organization_id", "uuid"}},
				item{Type: "uuid_parsing", Loc: []any{"query", "organization_id",
					"json-or-python[json=list[uuid],python=chain[is-instance[Sequence],function-wrap[sequence_validator()]]]", 0}})},
		{"limit 0 is 422", list("?limit=0", f.org.Token),
			validation(item{Type: "greater_than", Loc: []any{"query", "limit"}, Msg: "Input should be greater than 0"})},
		{"another scope is 403", list("", f.wrongScope), insufficientScope("webhooks:read webhooks:write")},
		{"no token is 401", list("", ""), unauthorized()},
		{"the trailing-slash spelling redirects with 307", list("/?page=2", f.org.Token),
			want{status: http.StatusTemporaryRedirect, headers: map[string]string{"Location": portalURL + "/v1/webhooks/endpoints?page=2"}}},
		{"delete: a read token is 403", call{method: http.MethodDelete, target: "/v1/webhooks/endpoints/" + first.String(), token: f.read},
			insufficientScope("webhooks:write")},
		{"delete: another organization's endpoint is 404", call{method: http.MethodDelete, target: "/v1/webhooks/endpoints/" + foreign.String(), token: f.org.Token},
			want{status: 404, body: resourceNotFoundBody}},
		{"delete: a malformed id is 422", call{method: http.MethodDelete, target: "/v1/webhooks/endpoints/nope", token: f.org.Token},
			validation(item{Type: "uuid_parsing", Loc: []any{"path", "id"}, Input: "nope"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.want.check(t, f.s.do(t, tt.call)) })
	}

	t.Run("delete is 204 with no body, then 404, and the list forgets it", func(t *testing.T) {
		del := call{method: http.MethodDelete, target: "/v1/webhooks/endpoints/" + second.String(), token: f.org.Token}
		rec := f.s.do(t, del)
		want{status: 204}.check(t, rec)
		if rec.Body.Len() != 0 {
			t.Errorf("204 body = %q, want none", rec.Body)
		}
		want{status: 404, body: resourceNotFoundBody}.check(t, f.s.do(t, del))
		want{status: 200, has: []string{`"id":"` + first.String() + `"`, `"total_count":1`}}.check(t, f.s.do(t, list("", f.org.Token)))
	})
}

func TestWebhookEndpointsMayBeLocalWhenDeliveriesMayBe(t *testing.T) {
	t.Parallel()
	s := newV1(t, func(d *resolvers.Deps) {
		d.Webhooks = resolvers.NewWebhookDelivery(&webhook.Sender{AllowPrivate: true})
	})
	o := s.NewOrg(t, "webhooks:write")
	post := func(url string) call {
		return call{method: http.MethodPost, target: "/v1/webhooks/endpoints", token: o.Token, body: webhookBody(url, "")}
	}
	want{status: 201, has: []string{`"url":"http://localhost:8080/hook"`}}.check(t, s.do(t, post("http://localhost:8080/hook")))
	want{status: 201, has: []string{`"url":"http://10.0.0.7/"`}}.check(t, s.do(t, post("http://10.0.0.7/")))
	validation(item{Type: "url_scheme", Loc: []any{"body", "url"}, Msg: "URL scheme should be 'http' or 'https'"}).
		check(t, s.do(t, post("ftp://10.0.0.7/")))
	validation(item{Type: "value_error", Loc: []any{"body", "url"},
		Msg: "Value error, Invalid webhook URL: the hostname contains characters not allowed in domain names."}).
		check(t, s.do(t, post("http://my_receiver/")))
}
