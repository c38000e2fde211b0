package main

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"till/internal/auth"
	"till/storage/storagetest"
)

// testHandler builds serve's HTTP handler over a fresh database with vars set, logging to
// log; it returns the public handler and the bare metrics handler.
func testHandler(t *testing.T, vars map[string]string, log *syncBuffer) (http.Handler, http.Handler) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs PostgreSQL")
	}
	vars["TILL_DATA_DIR"] = t.TempDir()
	vars["DATABASE_URL"] = storagetest.DSN(t)
	vars["TILL_SECRET"] = "http-test-secret"
	cfg, err := loadConfig(getenvOf(vars))
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewJSONHandler(log, nil))
	db, err := openDatabase(t.Context(), cfg, logger, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.close)
	secret := []byte(cfg.Secret)
	r, blobs, err := newResolver(cfg, db, secret, logger)
	if err != nil {
		t.Fatal(err)
	}
	h, metrics, err := newHTTPHandler(cfg, r, auth.Middleware(r, secret), db, blobs, logger)
	if err != nil {
		t.Fatal(err)
	}
	return h, metrics
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
