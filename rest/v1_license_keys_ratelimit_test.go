package rest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"till/internal/auth"
	"till/internal/ratelimit"
	"till/resolvers"
	"till/rest/resttest"
)

// TestPublicLicenseRateLimitIsSharedByV1AndGraphQL pins that the public license-key rule
// belongs to the operations: /v1's three routes and GraphQL's portal mutations draw on one
// budget per client address, and /v1 still answers a refusal with its 429.
func TestPublicLicenseRateLimitIsSharedByV1AndGraphQL(t *testing.T) {
	f := newKeysFixture(t)
	activation := f.activate(t, "KEY-A", "")
	guard, err := ratelimit.New(ratelimit.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	f.s.rebuild(t, func(d *resolvers.Deps) { d.LicenseLimits = guard })
	mux := http.NewServeMux()
	mux.Handle("/graphql", auth.Middleware(f.s.Resolver, f.s.Secret)(f.s.Resolver.Handler()))
	mux.Handle("/", f.s.h)
	h := ratelimit.WithClientIP(ratelimit.ClientIP(nil))(mux)

	v1 := func(path, body, addr string) *httptest.ResponseRecorder {
		req := resttest.NewRequest(http.MethodPost, path, body)
		req.RemoteAddr = addr
		return resttest.Serve(t, h, req)
	}
	graphqlCode := func(addr string) string {
		q, _ := json.Marshal(map[string]any{"query": `mutation($in: LicenseKeyValidateInput!) { portalValidateLicenseKey(input: $in) { valid } }`,
			"variables": map[string]any{"in": map[string]any{"key": "KEY-A", "organizationId": f.org.ID}}})
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(q))
		req.Header.Set("Content-Type", "application/json")
		req.RemoteAddr = addr
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var out struct {
			Errors []struct {
				Extensions struct {
					Code       string `json:"code"`
					RetryAfter int    `json:"retryAfter"`
				} `json:"extensions"`
			} `json:"errors"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("GraphQL answered %s", rec.Body)
		}
		if len(out.Errors) == 0 {
			return ""
		}
		if e := out.Errors[0].Extensions; e.Code == "RATE_LIMITED" && e.RetryAfter != 60 {
			t.Errorf("retryAfter = %d, want 60", e.RetryAfter)
		}
		return out.Errors[0].Extensions.Code
	}
	const client, other = "192.0.2.1:1000", "192.0.2.2:1000"

	t.Run("three calls a second pass, whichever API makes them", func(t *testing.T) {
		want{status: 200}.check(t, v1("/v1/customer-portal/license-keys/validate", f.body("KEY-A", ""), client))
		if code := graphqlCode(client); code != "" {
			t.Fatalf("GraphQL validate: %s", code)
		}
		want{status: 204}.check(t, v1("/v1/customer-portal/license-keys/deactivate",
			f.body("KEY-A", `"activation_id":"`+activation.String()+`"`), client))
	})
	t.Run("the fourth is refused on /v1 with the 429 it always got", func(t *testing.T) {
		rec := v1("/v1/customer-portal/license-keys/activate", f.body("KEY-A", `"label":"x"`), client)
		want{status: 429, body: `{"error":"TooManyRequests","detail":"Rate limit exceeded. Retry in 60 seconds."}`,
			headers: map[string]string{"Retry-After": "60", "Content-Type": "application/json"}}.check(t, rec)
	})
	t.Run("and on GraphQL as RATE_LIMITED", func(t *testing.T) {
		if code := graphqlCode(client); code != "RATE_LIMITED" {
			t.Fatalf("code %q, want RATE_LIMITED", code)
		}
	})
	t.Run("another address is still served", func(t *testing.T) {
		want{status: 200}.check(t, v1("/v1/customer-portal/license-keys/validate", f.body("KEY-A", ""), other))
	})
	t.Run("the organization's own validate route is not limited", func(t *testing.T) {
		for range 5 {
			req := resttest.NewRequest(http.MethodPost, "/v1/license-keys/validate", f.body("KEY-A", ""))
			req.Header.Set("Authorization", "Bearer "+f.org.Token)
			req.RemoteAddr = client
			if rec := resttest.Serve(t, h, req); rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, strings.TrimSpace(rec.Body.String()))
			}
		}
	})
}

// TestPublicLicenseRateLimitCountsAnIPv6ClientByItsSlash64 pins that a client holding an
// IPv6 /64 cannot get a fresh license-guessing budget from each of its addresses: the
// addresses of one /64 share one budget, and the next /64 has its own.
func TestPublicLicenseRateLimitCountsAnIPv6ClientByItsSlash64(t *testing.T) {
	f := newKeysFixture(t)
	guard, err := ratelimit.New(ratelimit.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	f.s.rebuild(t, func(d *resolvers.Deps) { d.LicenseLimits = guard })
	h := ratelimit.WithClientIP(ratelimit.ClientIP(nil))(f.s.h)
	validate := func(addr string) *httptest.ResponseRecorder {
		req := resttest.NewRequest(http.MethodPost, "/v1/customer-portal/license-keys/validate", f.body("KEY-A", ""))
		req.RemoteAddr = addr
		return resttest.Serve(t, h, req)
	}
	tests := []struct {
		name   string
		addr   string
		status int
	}{
		{"a first address of the /64 is served", "[2001:db8:1:2::1]:1000", 200},
		{"a second address of the /64 is served", "[2001:db8:1:2::2]:1000", 200},
		{"a third one, far in the /64, is served", "[2001:db8:1:2:ffff:ffff:ffff:fffe]:1000", 200},
		{"a fourth address of the same /64 is refused", "[2001:db8:1:2::4]:1000", 429},
		{"an address of the next /64 is served", "[2001:db8:1:3::1]:1000", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if rec := validate(tt.addr); rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, strings.TrimSpace(rec.Body.String()))
			}
		})
	}
}
