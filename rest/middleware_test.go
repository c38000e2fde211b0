package rest_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"till/rest/fastapi/fastapitest"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/resolvers"
	"till/rest"
)

func TestGlobalBehaviour(t *testing.T) {
	huge := strconv.Itoa(rest.MaxBodySize + 1)
	tests := []struct {
		name     string
		req      func() *http.Request
		status   int
		body     string
		headers  map[string]string
		executed bool
	}{
		{"an unknown path is 404 with Starlette's body",
			func() *http.Request { return request(http.MethodGet, "/v1/nothing-here", "") },
			http.StatusNotFound, `{"detail":"Not Found"}`,
			map[string]string{"Polar-Version": "2026-04", "Cache-Control": "private, no-store", "Content-Type": "application/json"}, false},
		{"a path outside /v1 is 404 too",
			func() *http.Request { return request(http.MethodGet, "/", "") },
			http.StatusNotFound, `{"detail":"Not Found"}`, nil, false},
		{"a known path with the wrong method is 405 with Allow",
			func() *http.Request {
				return request(http.MethodDelete, "/v1/customers/"+fastapitest.UUID4+"/payment-methods", "")
			},
			http.StatusMethodNotAllowed, `{"detail":"Method Not Allowed"}`, map[string]string{"Allow": "GET, HEAD"}, false},
		{"a POST-only path answers GET with 405",
			func() *http.Request { return request(http.MethodGet, "/v1/customer-sessions/", "") },
			http.StatusMethodNotAllowed, `{"detail":"Method Not Allowed"}`, map[string]string{"Allow": "POST"}, false},
		{"a missing trailing slash redirects with 307",
			func() *http.Request { return request(http.MethodPost, "/v1/customer-sessions", "{}") },
			http.StatusTemporaryRedirect, ``, map[string]string{"Location": "/v1/customer-sessions/"}, false},
		{"an extra trailing slash redirects and keeps the query",
			func() *http.Request {
				return request(http.MethodGet, "/v1/customers/"+fastapitest.UUID4+"/payment-methods/?page=2&limit=5", "")
			},
			http.StatusTemporaryRedirect, ``, map[string]string{"Location": "/v1/customers/" + fastapitest.UUID4 + "/payment-methods?page=2&limit=5"}, false},
		{"a redirect never points at the request's Host",
			func() *http.Request {
				r := request(http.MethodGet, "/v1/orders", "")
				r.Host = "attacker.example"
				r.Header.Set("X-Forwarded-Proto", "https")
				return r
			},
			http.StatusTemporaryRedirect, ``, map[string]string{"Location": "/v1/orders/"}, false},
		{"/api/v1 is served as /v1",
			func() *http.Request { return request(http.MethodGet, "/api/v1/orders/", "") },
			http.StatusOK, `{"items":[]}`, nil, true},
		{"HEAD is served by GET routes (net/http drops the body on the wire)",
			func() *http.Request { return request(http.MethodHead, "/v1/orders/", "") },
			http.StatusOK, `{"items":[]}`, nil, true},
		{"an explicit supported version is echoed",
			func() *http.Request {
				r := request(http.MethodGet, "/v1/orders/", "")
				r.Header.Set("Polar-Version", "2026-04")
				return r
			},
			http.StatusOK, `{"items":[]}`, map[string]string{"Polar-Version": "2026-04"}, true},
		{"an unsupported version is 404 before routing",
			func() *http.Request {
				r := request(http.MethodGet, "/v1/orders/", "")
				r.Header.Set("Polar-Version", "2026-10")
				return r
			},
			http.StatusNotFound, `{"detail":"Not Found"}`, map[string]string{"Polar-Version": ""}, false},
		{"a malformed version is 404 too",
			func() *http.Request {
				r := request(http.MethodGet, "/v1/orders/", "")
				r.Header.Set("Polar-Version", "latest")
				return r
			},
			http.StatusNotFound, `{"detail":"Not Found"}`, nil, false},
		{"a POST without Content-Length is 411",
			func() *http.Request {
				r := request(http.MethodPost, "/v1/orders/"+fastapitest.UUID4+"/invoice", "")
				r.Header.Del("Content-Length")
				return r
			},
			http.StatusLengthRequired, `{"error":"LengthRequired","detail":"A Content-Length header is required."}`, nil, false},
		{"a chunked POST is 411",
			func() *http.Request {
				r := request(http.MethodPost, "/v1/customer-sessions/", "{}")
				r.TransferEncoding = []string{"chunked"}
				return r
			},
			http.StatusLengthRequired, `{"error":"LengthRequired","detail":"A Content-Length header is required."}`, nil, false},
		{"411 applies before routing",
			func() *http.Request {
				r := request(http.MethodPatch, "/v1/unknown", "")
				r.Header.Del("Content-Length")
				return r
			},
			http.StatusLengthRequired, `{"error":"LengthRequired","detail":"A Content-Length header is required."}`, nil, false},
		{"a declared body over 10 MiB is 413",
			func() *http.Request {
				r := request(http.MethodPost, "/v1/customer-sessions/", "{}")
				r.Header.Set("Content-Length", huge)
				return r
			},
			http.StatusRequestEntityTooLarge, `{"error":"RequestBodyTooLarge","detail":"Request body exceeded the maximum allowed size of 10485760 bytes."}`, nil, false},
		{"a body that grows past 10 MiB while read is 413",
			func() *http.Request {
				r := httptest.NewRequest(http.MethodPost, "/v1/customer-sessions/", bytes.NewReader(make([]byte, rest.MaxBodySize+1)))
				r.Header.Set("Content-Length", "2")
				return r
			},
			http.StatusRequestEntityTooLarge, `{"error":"RequestBodyTooLarge","detail":"Request body exceeded the maximum allowed size of 10485760 bytes."}`, nil, false},
		{"a body that is not UTF-8 is 400",
			func() *http.Request {
				return request(http.MethodPost, "/v1/customer-sessions/", "{\"customer_id\":\"\xff\"}")
			},
			http.StatusBadRequest, `{"detail":"There was an error parsing the body"}`, nil, false},
		{"a 202 route writes JSON null",
			func() *http.Request { return request(http.MethodPost, "/v1/orders/"+fastapitest.UUID4+"/invoice", "") },
			http.StatusAccepted, `null`, map[string]string{"Content-Type": "application/json"}, true},
		{"a 204 route writes no body",
			func() *http.Request { return request(http.MethodPost, "/v1/license-keys/deactivate", "{}") },
			http.StatusNoContent, ``, nil, true},
		{"a 201 route writes the selected field",
			func() *http.Request {
				return request(http.MethodPost, "/v1/customer-sessions/", `{"customer_id":"`+fastapitest.UUID4+`"}`)
			},
			http.StatusCreated, `{"id":"x"}`, map[string]string{"Content-Type": "application/json"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exec := &fakeExecutor{}
			rec := serve(newTestRouter(t, exec, nil), tt.req())
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tt.status, rec.Body)
			}
			if got := rec.Body.String(); got != tt.body {
				t.Errorf("body = %q, want %q", got, tt.body)
			}
			for k, v := range tt.headers {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if got := exec.calls > 0; got != tt.executed {
				t.Errorf("executed = %v, want %v", got, tt.executed)
			}
		})
	}
}

func TestSlashRedirectsPointAtThePublicURL(t *testing.T) {
	h := newTestRouter(t, &fakeExecutor{}, func(c *rest.Config) { c.PublicURL = "https://till.example.com/" })
	tests := []struct{ name, host, target, location string }{
		{"a request to the public host", "till.example.com", "/v1/orders?page=2",
			"https://till.example.com/v1/orders/?page=2"},
		{"a request naming another host", "attacker.example", "/api/v1/orders",
			"https://till.example.com/v1/orders/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := request(http.MethodGet, tt.target, "")
			r.Host = tt.host
			rec := serve(h, r)
			if rec.Code != http.StatusTemporaryRedirect || rec.Header().Get("Location") != tt.location {
				t.Errorf("answered %d to %q, want 307 to %q", rec.Code, rec.Header().Get("Location"), tt.location)
			}
		})
	}
}

func TestAuthenticationWrapsRouting(t *testing.T) {
	rejectBadToken := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") == "Bearer bad" {
				w.Header().Set("Cache-Control", "no-store")
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	h := newTestRouter(t, &fakeExecutor{}, func(c *rest.Config) { c.Authenticate = rejectBadToken })
	tests := []struct {
		name, target, version string
		status                int
		cacheControl          string
	}{
		{"a bad token is refused on a known route", "/v1/orders/", "", http.StatusUnauthorized, "no-store"},
		{"a bad token is refused on an unknown path", "/v1/nowhere", "", http.StatusUnauthorized, "no-store"},
		{"a bad token is refused before a slash redirect", "/v1/orders", "", http.StatusUnauthorized, "no-store"},
		{"a bad version beats a bad token", "/v1/orders/", "2099-01", http.StatusNotFound, "private, no-store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := request(http.MethodGet, tt.target, "")
			r.Header.Set("Authorization", "Bearer bad")
			if tt.version != "" {
				r.Header.Set("Polar-Version", tt.version)
			}
			rec := serve(h, r)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d", rec.Code, tt.status)
			}
			if got := rec.Header().Get("Cache-Control"); got != tt.cacheControl {
				t.Errorf("Cache-Control = %q, want %q", got, tt.cacheControl)
			}
		})
	}
}

func TestGuardRunsWhereUpstreamAuthenticates(t *testing.T) {
	guard := func(*http.Request, rest.Route) *gqlerror.Error {
		return &gqlerror.Error{Message: "Unauthorized", Err: resolvers.Unauthorized()}
	}
	h := newTestRouter(t, &fakeExecutor{}, func(c *rest.Config) { c.Guard = guard })
	tests := []struct {
		name, method, target, body string
		status                     int
		wantPrefix                 string
	}{
		{"a guard failure beats invalid parameters", http.MethodGet, "/v1/orders/?page=0", "", http.StatusUnauthorized, `{"error":"Unauthorized"`},
		{"a guard failure beats an invalid body", http.MethodPost, "/v1/customer-sessions/", `{}`, http.StatusUnauthorized, `{"error":"Unauthorized"`},
		{"malformed JSON beats the guard", http.MethodPost, "/v1/customer-sessions/", `{`, http.StatusUnprocessableEntity, `{"error":"RequestValidationError","detail":[{"type":"json_invalid"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(h, request(tt.method, tt.target, tt.body))
			if rec.Code != tt.status || !strings.HasPrefix(rec.Body.String(), tt.wantPrefix) {
				t.Errorf("got %d %s; want %d %s...", rec.Code, rec.Body, tt.status, tt.wantPrefix)
			}
		})
	}
}
