package rest_test

import (
	"net/http"
	"strings"
	"testing"
	"testing/fstest"

	"till/rest"
	"till/rest/fastapi"
)

// Starlette takes the first route whose path and method both match, so a
// static segment does not hide a parameter route of another method.
func TestRoutingPrefersAFullMatchOverAStaticSegment(t *testing.T) {
	docs := fstest.MapFS{
		"GetKey.graphql":      &fstest.MapFile{Data: []byte(`query GetKey($id: UUID!) { key(id: $id) }`)},
		"ValidateKey.graphql": &fstest.MapFile{Data: []byte(`mutation ValidateKey { validate }`)},
	}
	routes := []rest.Route{
		{Method: http.MethodGet, Path: "/v1/license-keys/{id}", Operation: "GetKey", Params: []fastapi.Param{rest.PathUUID4("id", "")}, Field: "key"},
		{Method: http.MethodPost, Path: "/v1/license-keys/validate", Operation: "ValidateKey", Field: "validate"},
	}
	h, err := rest.NewRouter(rest.Config{Executor: &fakeExecutor{}, Routes: routes, Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, target string
		status               int
		bodyPrefix           string
		allow                string
	}{
		{"GET on the static path reaches the parameter route", http.MethodGet, "/v1/license-keys/validate", 422, `{"error":"RequestValidationError","detail":[{"type":"uuid_parsing","loc":["path","id"]`, ""},
		{"a method no route has names the first matching row", http.MethodDelete, "/v1/license-keys/validate", 405, `{"detail":"Method Not Allowed"}`, "GET, HEAD"},
		{"an empty parameter segment is not a match", http.MethodGet, "/v1/license-keys//", 404, `{"detail":"Not Found"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(h, request(tt.method, tt.target, ""))
			if rec.Code != tt.status || !strings.HasPrefix(rec.Body.String(), tt.bodyPrefix) || rec.Header().Get("Allow") != tt.allow {
				t.Errorf("got %d %s (Allow %q)", rec.Code, rec.Body, rec.Header().Get("Allow"))
			}
		})
	}
}
