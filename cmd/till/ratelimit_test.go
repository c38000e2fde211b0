package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPublicLicenseEndpointsShareOneRateLimit(t *testing.T) {
	cfg, err := loadConfig(getenvOf(map[string]string{}))
	if err != nil {
		t.Fatal(err)
	}
	limit, err := licenseRateLimit(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := limit(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	send := func(method, path, addr string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(`{"key":"K","organization_id":"8d1b8d6e-5d1c-4f5e-9a53-0c2f8a9f1e11"}`))
		r.RemoteAddr = addr
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	paths := []string{"/v1/customer-portal/license-keys/validate", "/v1/customer-portal/license-keys/activate",
		"/api/v1/customer-portal/license-keys/deactivate"}
	for i, p := range paths {
		if w := send(http.MethodPost, p, "192.0.2.1:1"); w.Code != http.StatusOK {
			t.Fatalf("request %d to %s: %d", i+1, p, w.Code)
		}
	}
	w := send(http.MethodPost, paths[0], "192.0.2.1:2")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "60" {
		t.Errorf("fourth request in a second: %d Retry-After %q, want 429 and 60", w.Code, w.Header().Get("Retry-After"))
	}
	if w := send(http.MethodPost, paths[0], "192.0.2.9:1"); w.Code != http.StatusOK {
		t.Errorf("another client: %d", w.Code)
	}
	for _, p := range []string{"/v1/license-keys/validate", "/graphql"} {
		if w := send(http.MethodPost, p, "192.0.2.1:3"); w.Code != http.StatusOK {
			t.Errorf("%s is not a public license path but answered %d", p, w.Code)
		}
	}
}

func TestLicenseRateLimitConfiguration(t *testing.T) {
	cfg, err := loadConfig(getenvOf(map[string]string{"TILL_LICENSE_RATE_PER_IP": "0", "TILL_LICENSE_RATE_PER_KEY": "0"}))
	if err != nil {
		t.Fatal(err)
	}
	limit, err := licenseRateLimit(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := limit(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	for i := range 20 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/customer-portal/license-keys/validate", strings.NewReader(`{}`)))
		if w.Code != http.StatusOK {
			t.Fatalf("request %d with limits off: %d", i, w.Code)
		}
	}
	cfg.TrustedProxies = []string{"10.0.0.0/8", "nonsense"}
	if _, err := licenseRateLimit(cfg); err == nil || !strings.Contains(err.Error(), "TILL_TRUSTED_PROXIES") {
		t.Errorf("a bad proxy CIDR: err = %v", err)
	}
}
