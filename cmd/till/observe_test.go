package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"

	"till/internal/reqinfo"
	"till/resolvers"
)

// accessLine decodes the last access log line in log.
func accessLine(t *testing.T, log string) map[string]any {
	t.Helper()
	var line map[string]any
	if err := json.Unmarshal([]byte(lastRequestLine(t, log)), &line); err != nil {
		t.Fatal(err)
	}
	return line
}

func TestRequestsCarryAnID(t *testing.T) {
	var log syncBuffer
	h, _ := testHandler(t, map[string]string{}, &log)
	generated := regexp.MustCompile(`^[0-9a-f]{24}$`)
	cases := []struct {
		name, incoming string
		kept           bool
	}{
		{"a request without an id gets one", "", false},
		{"a proxy's short, plain id is kept", "edge-7f3a.2:abc_DEF", true},
		{"a UUID is kept", "0190b3c5-3e4b-7c8d-9e0f-1a2b3c4d5e6f", true},
		{"an id with spaces or quotes is replaced", `x" "y`, false},
		{"an id with a line break is replaced", "abc\ndef", false},
		{"an id longer than 64 characters is replaced", strings.Repeat("a", 65), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(log.String())
			req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
			if c.incoming != "" {
				req.Header["X-Request-Id"] = []string{c.incoming}
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			id := rec.Header().Get("X-Request-Id")
			switch {
			case c.kept && id != c.incoming:
				t.Errorf("X-Request-Id = %q, want the incoming %q", id, c.incoming)
			case !c.kept && !generated.MatchString(id):
				t.Errorf("X-Request-Id = %q, want a generated id", id)
			}
			if got := accessLine(t, log.String()[before:])["request_id"]; got != id {
				t.Errorf("access log request_id = %v, want %q", got, id)
			}
		})
	}
}

func TestAccessLogNamesTheOperationAndThePrincipal(t *testing.T) {
	var log syncBuffer
	vars := map[string]string{}
	h, metrics := testHandler(t, vars, &log)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"org", "create", "--name", "Logs", "--slug", "logs"}, getenvOf(vars), &out); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"token", "create", "--org", "logs", "--scopes", "all"}, getenvOf(vars), &out); err != nil {
		t.Fatal(err)
	}
	token := tokenLine.FindStringSubmatch(out.String())
	orgID := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`).FindString(out.String())
	if token == nil || orgID == "" {
		t.Fatalf("no token or organization id printed:\n%s", out.String())
	}
	graphql := func(query string, operationName ...string) *http.Request {
		params := map[string]any{"query": query}
		if len(operationName) > 0 {
			params["operationName"] = operationName[0]
		}
		body, _ := json.Marshal(params)
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token[1])
		return req
	}
	v1 := httptest.NewRequest(http.MethodGet, "/v1/orders/", nil)
	v1.Header.Set("Authorization", "Bearer "+token[1])
	cases := []struct {
		name string
		req  *http.Request
		want map[string]any // fields of the access log line; nil means absent
	}{
		{"a named query with its root fields, aliases resolved", graphql(
			`query Dashboard { organization { id } customers(limit: 1) { items { id } } again: organization { slug } }`),
			map[string]any{"route": "/graphql", "operation": "Dashboard", "operation_type": "query",
				"root_fields": "customers,organization", "principal": "organization", "organization_id": orgID}},
		{"an unnamed mutation", graphql(`mutation { createCustomer(input: {email: "log@example.com"}) { id } }`),
			map[string]any{"operation": "anonymous", "operation_type": "mutation", "root_fields": "createCustomer"}},
		{"root fields spread from fragments", graphql(
			`query Frag { ...Root } fragment Root on Query { organization { id } ... on Query { products { items { id } } } }`),
			map[string]any{"operation": "Frag", "root_fields": "organization,products"}},
		{"a document that does not validate, by the name the client sent", graphql(`query Broken { noSuchField }`, "Broken"),
			map[string]any{"operation": "Broken", "operation_type": "invalid", "root_fields": ""}},
		{"a /v1 route names its pattern and no operation", v1,
			map[string]any{"route": "/v1/orders", "principal": "organization", "organization_id": orgID,
				"operation": nil, "operation_type": nil}},
		{"a request without a token names no principal", httptest.NewRequest(http.MethodGet, "/healthz", nil),
			map[string]any{"route": "/healthz", "principal": "none", "organization_id": nil}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(log.String())
			h.ServeHTTP(httptest.NewRecorder(), c.req)
			raw := lastRequestLine(t, log.String()[before:])
			if strings.Contains(raw, token[1]) {
				t.Errorf("the access log line holds the token: %s", raw)
			}
			line := accessLine(t, log.String()[before:])
			for k, want := range c.want {
				if got, ok := line[k]; want == nil && ok || want != nil && got != want {
					t.Errorf("%s = %v, want %v in %s", k, got, want, raw)
				}
			}
			if ms, ok := line["duration_ms"].(float64); !ok || ms <= 0 {
				t.Errorf("duration_ms = %v, want a positive number of milliseconds", line["duration_ms"])
			}
		})
	}

	t.Run("metrics count operations by type and root field, never by the client's name", func(t *testing.T) {
		rec := httptest.NewRecorder()
		metrics.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		body, _ := io.ReadAll(rec.Body)
		for _, want := range []string{
			`till_graphql_operation_duration_seconds_count{field="organization",type="query"} 2`,
			`till_graphql_operation_duration_seconds_count{field="customers",type="query"} 1`,
			`till_graphql_operation_duration_seconds_count{field="createCustomer",type="mutation"} 1`,
			`till_graphql_operation_duration_seconds_count{field="none",type="invalid"} 1`,
			`till_http_request_duration_seconds_count{method="GET",route="/v1/orders"} 1`,
		} {
			if !bytes.Contains(body, []byte(want)) {
				t.Errorf("metrics lack %s", want)
			}
		}
		for _, name := range []string{"Dashboard", "Frag", "Broken", "again", "noSuchField"} {
			if bytes.Contains(body, []byte(name)) {
				t.Errorf("metrics hold %q, a name the client chose", name)
			}
		}
	})
}

func TestAPanicIsLoggedWithTheRequestID(t *testing.T) {
	var log syncBuffer
	logger := newLogger("info", &log)
	mux := chi.NewRouter()
	mux.Use(newHTTPMetrics(prometheus.NewRegistry()).middleware(logger))
	mux.Get("/boom", func(http.ResponseWriter, *http.Request) { panic("kaboom") })
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/boom", nil)
	req.Header.Set("X-Request-Id", "panic-1")
	mux.ServeHTTP(rec, req)
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("status = %d, want 500", rec.Code)
	}
	var panicked, access bool
	for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		var line map[string]any
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatal(err)
		}
		switch line["msg"] {
		case "request panicked":
			panicked = line["request_id"] == "panic-1" && line["panic"] == "kaboom"
		case "request":
			access = line["request_id"] == "panic-1" && line["status"] == float64(500)
		}
	}
	if !panicked || !access {
		t.Errorf("want the panic and a 500 access line, both with request_id panic-1:\n%s", log.String())
	}
}

func TestResolverFailuresAreLoggedWithTheRequestID(t *testing.T) {
	cases := []struct {
		name string
		log  func(logger *slog.Logger, ctx context.Context)
		msg  string
	}{
		{"an internal resolver error", func(logger *slog.Logger, ctx context.Context) {
			resolvers.ErrorPresenter(logger)(ctx, errors.New("connection refused"))
		}, "resolver failed"},
		{"a resolver panic", func(logger *slog.Logger, ctx context.Context) {
			_ = resolvers.Recover(logger)(ctx, "kaboom")
		}, "resolver panicked"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var log syncBuffer
			ctx, _ := reqinfo.New(context.Background(), "req-42")
			c.log(newLogger("info", &log), ctx)
			var line map[string]any
			if err := json.Unmarshal([]byte(strings.TrimSpace(log.String())), &line); err != nil {
				t.Fatalf("%v: %q", err, log.String())
			}
			if line["msg"] != c.msg || line["request_id"] != "req-42" {
				t.Errorf("logged %s, want %q with request_id req-42", log.String(), c.msg)
			}
		})
	}
}
