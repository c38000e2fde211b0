package rest_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"till/rest"
	"till/rest/resttest"
)

// TestV1WorksMountedAsCmdTillMountsIt serves /v1 inside a chi router, as cmd/till does:
// the outer router's route context must not stop the /api/v1 rewrite from routing, and an
// outer middleware still sees the matched pattern (the metrics label).
func TestV1WorksMountedAsCmdTillMountsIt(t *testing.T) {
	t.Parallel()
	s := newV1(t)
	o := s.NewOrg(t, "customers:read customer_sessions:write")
	c := s.NewCustomer(t, o.ID, "ext-1")
	s.AddCard(t, o.ID, c.ID, "4242", time.Minute)
	var pattern string
	outer := chi.NewRouter()
	outer.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r)
			pattern = chi.RouteContext(r.Context()).RoutePattern()
		})
	})
	outer.Mount("/", s.h)
	mounted := *s
	mounted.h = outer

	list := "/v1/customers/" + c.ID.String() + "/payment-methods"
	tests := []struct {
		name    string
		call    call
		want    want
		pattern string
	}{
		{"a /v1 path is served", call{target: list}, want{status: 200}, "/v1/customers/{id}/payment-methods"},
		{"an /api/v1 path is served as /v1", call{target: "/api" + list}, want{status: 200}, "/v1/customers/{id}/payment-methods"},
		{"an /api/v1 POST is served as /v1",
			call{method: http.MethodPost, target: "/api/v1/customer-sessions/", body: `{"external_customer_id":"ext-1"}`},
			want{status: 201}, "/v1/customer-sessions"}, // chi trims the slash
		{"an /api/v1 path with the wrong method is 405",
			call{method: http.MethodDelete, target: "/api" + list}, want{status: 405, body: methodNotAllowedBody}, ""},
		{"an /api/v1 path with a trailing slash redirects to /v1",
			call{target: "/api" + list + "/"}, want{status: 307, headers: map[string]string{"Location": portalURL + list}}, ""},
		{"GET on a POST path without its slash redirects, as Starlette does",
			call{target: "/api/v1/customer-sessions"}, want{status: 307, headers: map[string]string{"Location": portalURL + "/v1/customer-sessions/"}}, ""},
		{"an unknown /api/v1 path is 404", call{target: "/api/v1/nothing"}, want{status: 404, body: notFoundBody}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := tt.call
			cl.token = o.Token
			pattern = ""
			tt.want.check(t, mounted.do(t, cl))
			if tt.pattern != "" && pattern != tt.pattern {
				t.Errorf("outer route pattern = %q, want %q", pattern, tt.pattern)
			}
		})
	}
}

// TestEveryRouteIsADocumentedOperation keeps the route table inside the contract: each row's
// method and path is an operation of the OpenAPI subset, spelled exactly (trailing slash
// included).
func TestEveryRouteIsADocumentedOperation(t *testing.T) {
	doc := resttest.Contract(t)
	for _, route := range rest.Routes() {
		t.Run(route.Method+" "+route.Path+" is in the contract", func(t *testing.T) {
			item := doc.Paths.Value(route.Path)
			if item == nil || item.GetOperation(route.Method) == nil {
				t.Errorf("the contract has no %s %s", route.Method, route.Path)
			}
			if got := patternRegexp(route.Path); !got.MatchString(strings.NewReplacer("{id}", uuid.NewString(), "{external_id}", "x").Replace(route.Path)) {
				t.Errorf("the coverage matcher %s does not match its own route", got)
			}
		})
	}
}
