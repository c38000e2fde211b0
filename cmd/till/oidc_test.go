package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"till/resolvers"
	"till/storage/storagetest"
)

func TestOIDCRotateKey(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL")
	}
	vars := map[string]string{"TILL_DATA_DIR": t.TempDir(), "DATABASE_URL": storagetest.DSN(t), "TILL_SECRET": "oidc-secret"}
	line := regexp.MustCompile(`^new signing key: ([A-Za-z0-9_-]{43})\n$`)
	var kids []string
	for range 2 {
		var out bytes.Buffer
		if err := run(context.Background(), []string{"oidc", "rotate-key"}, getenvOf(vars), &out); err != nil {
			t.Fatalf("till oidc rotate-key: %v\n%s", err, out.String())
		}
		m := line.FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("output %q is not one new key id", out.String())
		}
		kids = append(kids, m[1])
	}
	if kids[0] == kids[1] {
		t.Errorf("two rotations printed the same key %s", kids[0])
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"oidc", "bogus"}, getenvOf(vars), &out); err == nil ||
		!strings.Contains(out.String(), "till oidc rotate-key") {
		t.Errorf("unknown subcommand: err %v, output %q", err, out.String())
	}
}

// TestOpenIDDocumentsAreMounted checks the server answers discovery and the key set at the
// origin's root, where relying parties look, with the public URL as issuer.
func TestOpenIDDocumentsAreMounted(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL")
	}
	ctx := context.Background()
	cfg, err := loadConfig(getenvOf(map[string]string{"TILL_DATA_DIR": t.TempDir(), "DATABASE_URL": storagetest.DSN(t),
		"TILL_SECRET": "oidc-secret", "TILL_PUBLIC_URL": "https://till.example.com/"}))
	if err != nil {
		t.Fatal(err)
	}
	db, err := openDatabase(ctx, cfg, slog.New(slog.DiscardHandler), true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.close()
	secret := []byte("oidc-secret")
	r := resolvers.New(resolvers.Deps{DB: db.DB, Secret: secret, PortalURL: cfg.PublicURL})
	h, _, err := newHTTPHandler(cfg, r, r, secret, db, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"/.well-known/openid-configuration": `"issuer"`, "/.well-known/jwks.json": `"keys"`} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		var body map[string]any
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) || json.Unmarshal(rec.Body.Bytes(), &body) != nil {
			t.Errorf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		if path == "/.well-known/openid-configuration" && body["issuer"] != "https://till.example.com" {
			t.Errorf("issuer = %v, want https://till.example.com", body["issuer"])
		}
	}
}
