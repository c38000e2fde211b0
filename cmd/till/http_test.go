package main

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"

	"till/resolvers"
	"till/storage/storagetest"
)

// testHandler builds serve's HTTP handler over a fresh database with vars set, logging to
// log; it returns the public handler and the bare metrics handler.
func testHandler(t *testing.T, vars map[string]string, log *syncBuffer) (http.Handler, http.Handler) {
	t.Helper()
	app := newTestApp(t, vars, log)
	return app.handler, app.metrics
}

// testApp is serve's HTTP handler over a fresh database, with the application behind it so
// a test can seed data through the use cases.
type testApp struct {
	handler, metrics http.Handler
	resolver         *resolvers.Resolver
	secret           []byte
	cfg              config
	db               *database
}

// newTestApp builds a testApp with vars set, logging to log.
func newTestApp(t *testing.T, vars map[string]string, log *syncBuffer) testApp {
	t.Helper()
	if testing.Short() {
		t.Skip("needs PostgreSQL")
	}
	vars["TILL_DATA_DIR"] = t.TempDir()
	vars["DATABASE_URL"] = storagetest.DSN(t)
	vars["TILL_BLOB_DIR"] = filepath.Join(vars["TILL_DATA_DIR"], "blobs")
	vars["TILL_SECRET"] = "http-test-secret"
	cfg, err := loadConfig(getenvOf(vars))
	if err != nil {
		t.Fatal(err)
	}
	logger := newLogger("info", log)
	db, err := openDatabase(t.Context(), cfg, logger, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.close)
	secret := []byte(cfg.Secret)
	a, err := newApp(cfg, db, secret, logger)
	if err != nil {
		t.Fatal(err)
	}
	r := a.r
	h, metrics, err := newHTTPHandler(cfg, r, r, secret, db, a.blobHandler, logger)
	if err != nil {
		t.Fatal(err)
	}
	return testApp{handler: h, metrics: metrics, resolver: r, secret: secret, cfg: cfg, db: db}
}

func TestMetricsAreNotPublicByDefault(t *testing.T) {
	get := func(h http.Handler, bearer string) int {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	t.Run("without configuration the public listener does not serve them", func(t *testing.T) {
		h, metrics := testHandler(t, map[string]string{}, &syncBuffer{})
		if code := get(h, ""); code != http.StatusNotFound {
			t.Errorf("GET /metrics = %d, want 404", code)
		}
		if code := get(metrics, ""); code != http.StatusOK {
			t.Errorf("the handler for TILL_METRICS_ADDR answered %d, want 200", code)
		}
	})
	t.Run("with a token the public listener serves them to its bearer only", func(t *testing.T) {
		h, _ := testHandler(t, map[string]string{"TILL_METRICS_TOKEN": "scrape-me"}, &syncBuffer{})
		for bearer, want := range map[string]int{"": 401, "scrape-you": 401, "scrape-me": 200} {
			if code := get(h, bearer); code != want {
				t.Errorf("GET /metrics with token %q = %d, want %d", bearer, code, want)
			}
		}
	})
}

func TestAccessLogRedactsCredentials(t *testing.T) {
	const secret = "SeCrEtVaLuE42"
	var log syncBuffer
	h, _ := testHandler(t, map[string]string{}, &log)
	cases := []struct {
		name, target, path, route string
	}{
		{"a download token", "/downloads/till_dl_" + secret, "/downloads/{token}", "/downloads/{token}"},
		{"a download token with a stray segment", "/downloads/till_dl_" + secret + "/x", "/downloads/{token}/x", ""},
		{"a checkout client secret", "/v1/checkouts/client/" + secret, "/v1/checkouts/client/{client_secret}", ""},
		{"a signed blob link's query", "/blob/files/a.pdf?expires=1&signature=" + secret, "/blob/files/a.pdf", "/blob/*"},
		{"an id, which is no credential, stays", "/v1/orders/0190b3c5-3e4b-7c8d-9e0f-1a2b3c4d5e6f",
			"/v1/orders/0190b3c5-3e4b-7c8d-9e0f-1a2b3c4d5e6f", "/v1/orders/{id}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(log.String())
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, c.target, nil))
			line := lastRequestLine(t, log.String()[before:])
			if strings.Contains(line, secret) {
				t.Errorf("access log line holds the credential: %s", line)
			}
			if !strings.Contains(line, `"path":"`+c.path+`"`) {
				t.Errorf("access log line %s, want path %s", line, c.path)
			}
			if c.route != "" && !strings.Contains(line, `"route":"`+c.route+`"`) {
				t.Errorf("access log line %s, want route %s", line, c.route)
			}
		})
	}
	t.Run("any route parameter named for a credential", func(t *testing.T) {
		var log syncBuffer
		mux := chi.NewRouter()
		mux.Use(newHTTPMetrics(prometheus.NewRegistry()).middleware(slog.New(slog.NewJSONHandler(&log, nil))))
		mux.Get("/seats/claim/{invitation_token}", func(http.ResponseWriter, *http.Request) {})
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/seats/claim/"+secret, nil))
		if line := lastRequestLine(t, log.String()); strings.Contains(line, secret) ||
			!strings.Contains(line, `"path":"/seats/claim/{invitation_token}"`) {
			t.Errorf("access log line %s, want the invitation token redacted", line)
		}
	})
}

// lastRequestLine is the last access log line in log.
func lastRequestLine(t *testing.T, log string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(log), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], `"msg":"request"`) {
			return lines[i]
		}
	}
	t.Fatalf("no access log line in %q", log)
	return ""
}

// TestABadTokenIsRefusedInEachAPIsOwnShape sends a malformed organization token through the
// wired handler: /graphql answers a GraphQL errors array (UNAUTHENTICATED), /v1 upstream's
// OAuth2 body, both 401 with a challenge, whatever wraps the bearer middleware.
func TestABadTokenIsRefusedInEachAPIsOwnShape(t *testing.T) {
	h, _ := testHandler(t, map[string]string{}, &syncBuffer{})
	for _, c := range []struct {
		name, method, path, body, want string
	}{
		{"GraphQL", http.MethodPost, "/graphql", `{"query":"{ customers { items { id } } }"}`, `"code":"UNAUTHENTICATED"`},
		{"/v1", http.MethodGet, "/v1/customers/", "", `"error":"invalid_token"`},
	} {
		t.Run(c.name+" answers in its own shape", func(t *testing.T) {
			req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
			req.Header.Set("Authorization", "Bearer till_oat_not_a_real_token")
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), c.want) ||
				rec.Header().Get("WWW-Authenticate") == "" {
				t.Errorf("HTTP %d %s (challenge %q), want 401 with %s", rec.Code, rec.Body, rec.Header().Get("WWW-Authenticate"), c.want)
			}
		})
	}
}
