package rest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/99designs/gqlgen/graphql"

	"till/internal/auth"
	"till/rest"
)

// TestHandRoutesMustDeclareAGuard: the router refuses to start with a hand-written route
// that says nothing about who may call it.
func TestHandRoutesMustDeclareAGuard(t *testing.T) {
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	cases := []struct {
		name    string
		guard   rest.Guard
		wantErr string
	}{
		{"a route without a guard is refused", rest.Guard{}, "declares no Guard"},
		{"scopes for sessions only are refused", rest.Guard{Kinds: []auth.Kind{auth.KindCustomerSession},
			Scopes: []auth.Scope{auth.ScopeOrdersRead}}, "admits neither"},
		{"a public route starts", rest.Guard{Public: "the client's credentials"}, ""},
		{"a scoped route starts", rest.Guard{Kinds: []auth.Kind{auth.KindUser}, Scopes: []auth.Scope{auth.ScopeOrdersRead}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := rest.NewRouter(rest.Config{
				Executor:  rest.ExecutorFunc(func(context.Context, string, string, map[string]any) *graphql.Response { return nil }),
				Documents: fstest.MapFS{},
				Routes:    []rest.Route{{Method: http.MethodPost, Path: "/v1/hand", Handler: ok, Guard: c.guard}},
			})
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("NewRouter: %v, want it to start", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("NewRouter error = %v, want one saying %q", err, c.wantErr)
			}
		})
	}
}
