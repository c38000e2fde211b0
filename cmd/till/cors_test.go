package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

const (
	listedOrigin   = "https://dash.example.com"
	unlistedOrigin = "https://elsewhere.example"
)

// corsCase is one request of TestCORS and what its CORS answer must be.
type corsCase struct {
	name    string
	closed  bool // served by a Till without TILL_CORS_ORIGINS
	method  string
	path    string
	origin  string
	token   bool   // sends the organization token
	body    string // JSON body, for POST
	status  int    // 0: not checked
	allow   string // Access-Control-Allow-Origin, "" when no CORS header may be present
	creds   bool   // Access-Control-Allow-Credentials: true
	vary    bool   // Vary names Origin
	inBody  string // a text the body holds
	request string // Access-Control-Request-Method: makes the request a preflight
}

func TestCORS(t *testing.T) {
	app := newTestApp(t, map[string]string{"TILL_CORS_ORIGINS": listedOrigin + ", http://localhost:5173"}, &syncBuffer{})
	closed := newTestApp(t, map[string]string{}, &syncBuffer{})
	org, token, err := newDemoOrganization(context.Background(), app.db.DB, app.secret)
	if err != nil {
		t.Fatal(err)
	}
	graphql := `{"query":"{ organization { slug } }"}`
	validate := `{"key":"NO-SUCH-KEY","organization_id":"` + org.ID.String() + `"}`
	cases := []corsCase{
		{name: "a listed origin's preflight for /graphql is answered with credentials", method: "OPTIONS",
			path: "/graphql", origin: listedOrigin, request: "POST", status: 204, allow: listedOrigin, creds: true, vary: true},
		{name: "a listed origin reads a /graphql answer with credentials", method: "POST", path: "/graphql",
			origin: listedOrigin, token: true, body: graphql, status: 200, allow: listedOrigin, creds: true, vary: true,
			inBody: org.Slug},
		{name: "the second listed origin is listed too", method: "OPTIONS", path: "/graphql",
			origin: "http://localhost:5173", request: "POST", status: 204, allow: "http://localhost:5173", creds: true, vary: true},
		{name: "an unlisted origin's preflight for /graphql gets no CORS header", method: "OPTIONS", path: "/graphql",
			origin: unlistedOrigin, request: "POST", vary: true},
		{name: "an unlisted origin's /graphql answer carries no CORS header", method: "POST", path: "/graphql",
			origin: unlistedOrigin, token: true, body: graphql, status: 200, vary: true},
		{name: "a listed origin with another port is another origin", method: "OPTIONS", path: "/graphql",
			origin: listedOrigin + ":8443", request: "POST", vary: true},
		{name: "the opaque origin null is never listed", method: "OPTIONS", path: "/graphql", origin: "null",
			request: "POST", vary: true},
		{name: "a listed origin's preflight for an organization route of /v1 is answered", method: "OPTIONS",
			path: "/v1/orders/", origin: listedOrigin, request: "GET", status: 204, allow: listedOrigin, creds: true, vary: true},
		{name: "a listed origin reads an organization route of /v1", method: "GET", path: "/v1/orders/",
			origin: listedOrigin, token: true, status: 200, allow: listedOrigin, creds: true, vary: true, inBody: `"items"`},
		{name: "a listed origin reads /api/v1 as /v1", method: "GET", path: "/api/v1/orders/", origin: listedOrigin,
			token: true, status: 200, allow: listedOrigin, creds: true, vary: true},
		{name: "an unlisted origin's preflight for an organization route of /v1 is left to the router", method: "OPTIONS",
			path: "/v1/orders/", origin: unlistedOrigin, request: "GET", status: 405, vary: true},
		{name: "an unlisted origin's organization /v1 answer carries no CORS header", method: "GET", path: "/v1/orders/",
			origin: unlistedOrigin, token: true, status: 200, vary: true},
		{name: "any origin's preflight for license-key validation is answered without credentials", method: "OPTIONS",
			path: "/v1/customer-portal/license-keys/validate", origin: unlistedOrigin, request: "POST", status: 204,
			allow: "*", vary: true},
		{name: "any origin reads a license-key validation without credentials", method: "POST",
			path: "/v1/customer-portal/license-keys/validate", origin: unlistedOrigin, body: validate, status: 404,
			allow: "*", vary: true, inBody: "ResourceNotFound"},
		{name: "any origin may activate and deactivate too", method: "OPTIONS",
			path: "/api/v1/customer-portal/license-keys/deactivate", origin: unlistedOrigin, request: "POST", status: 204,
			allow: "*", vary: true},
		{name: "a listed origin keeps its credentials on a public route", method: "OPTIONS",
			path: "/v1/customer-portal/license-keys/activate", origin: listedOrigin, request: "POST", status: 204,
			allow: listedOrigin, creds: true, vary: true},
		{name: "any origin reads the customer portal's answers, refusals included", method: "GET",
			path: "/v1/customer-portal/orders/", origin: unlistedOrigin, status: 401, allow: "*", vary: true},
		{name: "any origin may reach the checkout client routes", method: "OPTIONS",
			path: "/v1/checkouts/client/some-secret", origin: unlistedOrigin, request: "PATCH", status: 204, allow: "*", vary: true},
		{name: "any origin may exchange a code at the OAuth2 token endpoint", method: "OPTIONS", path: "/v1/oauth2/token",
			origin: unlistedOrigin, request: "POST", status: 204, allow: "*", vary: true},
		{name: "the organization's checkout list is no public route", method: "OPTIONS", path: "/v1/checkouts/",
			origin: unlistedOrigin, request: "GET", status: 405, vary: true},
		{name: "a request without Origin gets no CORS header but varies by origin", method: "POST", path: "/graphql",
			token: true, body: graphql, status: 200, vary: true},
		{name: "paths outside /graphql and /v1 are left alone", method: "GET", path: "/healthz", origin: listedOrigin,
			status: 200},
		{name: "without TILL_CORS_ORIGINS /graphql answers no origin", closed: true, method: "OPTIONS", path: "/graphql",
			origin: listedOrigin, request: "POST"},
		{name: "without TILL_CORS_ORIGINS /v1 organization routes answer no origin", closed: true, method: "GET",
			path: "/v1/orders/", origin: listedOrigin, status: 401},
		{name: "without TILL_CORS_ORIGINS license-key validation still answers any origin", closed: true,
			method: "OPTIONS", path: "/v1/customer-portal/license-keys/validate", origin: listedOrigin, request: "POST",
			status: 204, allow: "*", vary: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := app.handler
			if c.closed {
				h = closed.handler
			}
			checkCORS(t, h, c, token)
		})
	}
}

// checkCORS sends c's request to h and checks the answer.
func checkCORS(t *testing.T, h http.Handler, c corsCase, token string) {
	t.Helper()
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req := httptest.NewRequest(c.method, c.path, body)
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Content-Length", strconv.Itoa(len(c.body)))
	}
	if c.origin != "" {
		req.Header.Set("Origin", c.origin)
	}
	if c.token {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if c.request != "" {
		req.Header.Set("Access-Control-Request-Method", c.request)
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,polar-version,x-request-id")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	if c.status != 0 && res.StatusCode != c.status {
		t.Errorf("status %d, want %d: %s", res.StatusCode, c.status, rec.Body)
	}
	if !strings.Contains(rec.Body.String(), c.inBody) {
		t.Errorf("body %s, want it to hold %s", rec.Body, c.inBody)
	}
	if got := hasToken(res.Header.Values("Vary"), "Origin"); got != c.vary {
		t.Errorf("Vary %q names Origin: %t, want %t", res.Header.Values("Vary"), got, c.vary)
	}
	if c.allow == "" {
		for name := range res.Header {
			if strings.HasPrefix(name, "Access-Control-") {
				t.Errorf("%s: %q on an answer that must carry no CORS header", name, res.Header.Get(name))
			}
		}
		return
	}
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != c.allow {
		t.Errorf("Access-Control-Allow-Origin %q, want %q", got, c.allow)
	}
	if got := res.Header.Get("Access-Control-Allow-Credentials"); (got == "true") != c.creds || got != "" && got != "true" {
		t.Errorf("Access-Control-Allow-Credentials %q, want it only with credentials (%t)", got, c.creds)
	}
	if c.request != "" {
		if rec.Body.Len() != 0 {
			t.Errorf("a preflight answer has a body: %q", rec.Body)
		}
		allowed := map[string][]string{
			"Access-Control-Allow-Methods": {"GET", "POST", "PATCH", "DELETE", c.request},
			"Access-Control-Allow-Headers": {"Authorization", "Content-Type", "Accept", "Polar-Version", "X-Request-Id"},
		}
		for header, want := range allowed {
			for _, v := range want {
				if !hasToken(res.Header.Values(header), v) {
					t.Errorf("%s %q lacks %s", header, res.Header.Get(header), v)
				}
			}
		}
		if got := res.Header.Get("Access-Control-Max-Age"); got != "600" {
			t.Errorf("Access-Control-Max-Age %q, want 600", got)
		}
		return
	}
	for _, v := range []string{"Retry-After", "X-Request-Id", "WWW-Authenticate", "Content-Disposition", "Polar-Version"} {
		if !hasToken(res.Header.Values("Access-Control-Expose-Headers"), v) {
			t.Errorf("Access-Control-Expose-Headers %q lacks %s", res.Header.Get("Access-Control-Expose-Headers"), v)
		}
	}
}

// hasToken reports whether a comma-separated header list holds token (case-insensitively).
func hasToken(values []string, token string) bool {
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(item), token) {
				return true
			}
		}
	}
	return false
}

func TestCORSOriginsConfiguration(t *testing.T) {
	valid := []struct {
		name, value, want string
	}{
		{"exact origins are kept in order", "https://dash.example.com,http://localhost:5173",
			"https://dash.example.com,http://localhost:5173"},
		{"spaces and empty entries are ignored", " https://a.example , ,https://b.example,", "https://a.example,https://b.example"},
		{"scheme and host are lowercased as browsers send them", "HTTPS://Dash.Example.COM", "https://dash.example.com"},
		{"a default port is dropped", "https://a.example:443,http://b.example:80", "https://a.example,http://b.example"},
		{"another port is kept", "https://a.example:8443", "https://a.example:8443"},
		{"an internationalised host is written in ASCII", "https://bücher.example", "https://xn--bcher-kva.example"},
		{"addresses are origins too", "http://127.0.0.1:3000,http://[::1]:3000", "http://127.0.0.1:3000,http://[::1]:3000"},
		{"a repeated origin is listed once", "https://a.example,https://A.example:443", "https://a.example"},
		{"unset means no origin", "", ""},
	}
	for _, c := range valid {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := loadConfig(getenvOf(map[string]string{"TILL_CORS_ORIGINS": c.value}))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(cfg.CORSOrigins, ","); got != c.want {
				t.Errorf("TILL_CORS_ORIGINS=%q gave %q, want %q", c.value, got, c.want)
			}
		})
	}
	malformed := []struct {
		name, value, reason string
	}{
		{"a path stops the server", "https://dash.example.com/app", "has a path"},
		{"even a lone trailing slash", "https://dash.example.com/", "has a path"},
		{"a wildcard", "*", "wildcards"},
		{"a wildcard subdomain", "https://*.example.com", "wildcards"},
		{"the opaque origin null", "null", "scheme"},
		{"a bare host", "dash.example.com", "scheme"},
		{"another scheme", "ftp://dash.example.com", "scheme"},
		{"a query", "https://dash.example.com?x=1", "query"},
		{"a fragment", "https://dash.example.com#top", "fragment"},
		{"user information", "https://me@dash.example.com", "user information"},
		{"a port out of range", "https://dash.example.com:70000", "port"},
		{"an empty port", "https://dash.example.com:", "port"},
		{"a host that is no name", "https://exa mple.com", "parse"},
		{"one bad entry among good ones", "https://a.example,https://b.example/x", "has a path"},
	}
	for _, c := range malformed {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadConfig(getenvOf(map[string]string{"TILL_CORS_ORIGINS": c.value}))
			if err == nil || !strings.Contains(err.Error(), "TILL_CORS_ORIGINS") || !strings.Contains(err.Error(), c.reason) {
				t.Errorf("TILL_CORS_ORIGINS=%q: %v, want a refusal naming the variable and %q", c.value, err, c.reason)
			}
		})
	}
	t.Run("serve refuses to start on a malformed origin", func(t *testing.T) {
		// Cancelled, so that a serve which wrongly accepted the value stops at once.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var out strings.Builder
		err := run(ctx, []string{"serve"}, getenvOf(map[string]string{"TILL_CORS_ORIGINS": "https://dash.example.com/app",
			"TILL_DATA_DIR": t.TempDir()}), &out)
		if err == nil || !strings.Contains(err.Error(), "TILL_CORS_ORIGINS") {
			t.Errorf("serve returned %v, want a refusal naming TILL_CORS_ORIGINS", err)
		}
	})
}
