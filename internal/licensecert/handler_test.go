package licensecert_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"

	"till/internal/licensecert"
)

func TestJWKSHandler(t *testing.T) {
	known, missing := uuid.New(), uuid.New()
	s := newSigner(t)
	var asked uuid.UUID
	h := licensecert.JWKSHandler(func(_ context.Context, org uuid.UUID) (licensecert.KeySet, error) {
		asked = org
		switch org {
		case known:
			return s.set, nil
		case missing:
			return licensecert.KeySet{}, fmt.Errorf("organization %s: %w", org, licensecert.ErrNoKeys)
		}
		return licensecert.KeySet{}, errors.New("database down")
	})
	path := func(id string) string { return "/.well-known/till/organizations/" + id + "/license-keys.json" }
	tests := []struct {
		name, method, path string
		status             int
		contentType        string
	}{
		{"an organization with keys", http.MethodGet, licensecert.JWKSPath(known), 200, "application/jwk-set+json"},
		{"HEAD", http.MethodHead, licensecert.JWKSPath(known), 200, "application/jwk-set+json"},
		{"an organization without keys", http.MethodGet, licensecert.JWKSPath(missing), 404, "application/json"},
		{"a loader failure", http.MethodGet, licensecert.JWKSPath(uuid.New()), 500, "application/json"},
		{"a malformed id", http.MethodGet, path("not-a-uuid"), 404, "application/json"},
		{"a hyphen-less id", http.MethodGet, path(fmt.Sprintf("%x", known[:])), 404, "application/json"},
		{"another file name", http.MethodGet, "/.well-known/till/organizations/" + known.String() + "/keys.json", 404, "application/json"},
		{"a POST", http.MethodPost, licensecert.JWKSPath(known), 405, "application/json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			if rec.Code != tc.status {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != tc.contentType {
				t.Errorf("Content-Type = %q, want %q", ct, tc.contentType)
			}
			if tc.status == 404 && rec.Body.String() != `{"detail":"Not Found"}` {
				t.Errorf("body = %s", rec.Body)
			}
		})
	}

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, licensecert.JWKSPath(known), nil))
	if asked != known {
		t.Errorf("loader asked for %s, want %s", asked, known)
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "public, max-age=300" {
		t.Errorf("Cache-Control = %q", cc)
	}
	var set licensecert.KeySet
	if err := json.Unmarshal(rec.Body.Bytes(), &set); err != nil {
		t.Fatal(err)
	}
	if _, ok := set.Lookup(s.kid); !ok {
		t.Errorf("served set %s lacks kid %s", rec.Body, s.kid)
	}
}
