package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/internal/licensecert"
)

// licenseFixture is a signing key, its published set and a certificate it signed.
type licenseFixture struct {
	keys   licensecert.KeySet
	claims licensecert.Claims
	cert   string
}

func newLicenseFixture(t *testing.T, issuer string, issued time.Time) licenseFixture {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keyID := uuid.New()
	c := licensecert.Claims{
		Issuer: issuer, Subject: keyID.String(),
		IssuedAt: issued.Unix(), NotBefore: issued.Unix(), Expiry: issued.Add(24 * time.Hour).Unix(),
		OrganizationID: uuid.New(), LicenseKeyID: keyID, DisplayKey: "****-4F2A",
		CustomerID: uuid.New(), BenefitID: uuid.New(), Status: "granted",
	}
	cert, err := licensecert.Sign(priv, licensecert.KeyID(pub), c)
	if err != nil {
		t.Fatal(err)
	}
	return licenseFixture{keys: licensecert.KeySet{Keys: []licensecert.JWK{licensecert.NewJWK(pub, nil)}}, claims: c, cert: cert}
}

// writeFiles saves the key set and the certificate (with a trailing newline, as editors
// leave it) and returns their paths.
func (f licenseFixture) writeFiles(t *testing.T, cert string) (jwks, certPath string) {
	t.Helper()
	dir := t.TempDir()
	b, err := json.Marshal(f.keys)
	if err != nil {
		t.Fatal(err)
	}
	jwks, certPath = filepath.Join(dir, "license-keys.json"), filepath.Join(dir, "license.cert")
	if err := os.WriteFile(jwks, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certPath, []byte(cert+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return jwks, certPath
}

func runLicense(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), append([]string{"license"}, args...),
		getenvOf(map[string]string{"TILL_DATA_DIR": t.TempDir()}), &out)
	return out.String(), err
}

func TestLicenseVerifyWithAKeysFile(t *testing.T) {
	f := newLicenseFixture(t, "https://till.example.com", time.Now())
	jwks, cert := f.writeFiles(t, f.cert)
	out, err := runLicense(t, "verify", "--keys", jwks, cert)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	for _, want := range []string{"certificate valid", `"display_key": "****-4F2A"`, `"license_key_id": "` + f.claims.LicenseKeyID.String() + `"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestLicenseVerifyRejects(t *testing.T) {
	issued := time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)
	f := newLicenseFixture(t, "https://till.example.com", issued)
	parts := strings.Split(f.cert, ".")
	forged := f.claims
	forged.LicenseKeyID, forged.Subject = uuid.New(), "another key"
	payload, _ := json.Marshal(forged)
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString(payload) + "." + parts[2]
	at := issued.Add(time.Hour).Format(time.RFC3339)
	expired := issued.Add(25 * time.Hour).Format(time.RFC3339)
	tests := []struct {
		name string
		cert string
		args []string
		want error
	}{
		{"a tampered certificate", tampered, []string{"--at", at}, licensecert.ErrSignature},
		{"an expired certificate", f.cert, []string{"--at", expired}, licensecert.ErrExpired},
		{"garbage", "not a certificate", nil, licensecert.ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			jwks, cert := f.writeFiles(t, tc.cert)
			out, err := runLicense(t, append(append([]string{"verify", "--keys", jwks}, tc.args...), cert)...)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if strings.Contains(out, "certificate valid") {
				t.Errorf("output claims validity:\n%s", out)
			}
		})
	}
	t.Run("the same expired certificate within the leeway", func(t *testing.T) {
		jwks, cert := f.writeFiles(t, f.cert)
		late := issued.Add(24*time.Hour + time.Minute).Format(time.RFC3339)
		if out, err := runLicense(t, "verify", "--keys", jwks, "--at", late, "--leeway", "2m", cert); err != nil {
			t.Errorf("err = %v\n%s", err, out)
		}
	})
}

func TestLicenseVerifyFetchesTheKeys(t *testing.T) {
	var f licenseFixture
	srv := httptest.NewServer(licensecert.JWKSHandler(func(_ context.Context, org uuid.UUID) (licensecert.KeySet, error) {
		if org != f.claims.OrganizationID {
			return licensecert.KeySet{}, licensecert.ErrNoKeys
		}
		return f.keys, nil
	}))
	defer srv.Close()
	f = newLicenseFixture(t, srv.URL, time.Now())
	_, cert := f.writeFiles(t, f.cert)
	cases := map[string][]string{
		"from the URL the certificate names": {"verify", cert},
		"from an explicit URL":               {"verify", "--keys", srv.URL + licensecert.JWKSPath(f.claims.OrganizationID), cert},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := runLicense(t, args...)
			if err != nil || !strings.Contains(out, "certificate valid") {
				t.Errorf("err = %v\n%s", err, out)
			}
		})
	}
	t.Run("a URL without keys", func(t *testing.T) {
		_, err := runLicense(t, "verify", "--keys", srv.URL+licensecert.JWKSPath(uuid.New()), cert)
		if err == nil || !strings.Contains(err.Error(), "404") {
			t.Errorf("err = %v, want the 404", err)
		}
	})
}

func TestLicenseVerifyReadsStdin(t *testing.T) {
	f := newLicenseFixture(t, "https://till.example.com", time.Now())
	jwks, _ := f.writeFiles(t, f.cert)
	var out bytes.Buffer
	if err := licenseVerify(context.Background(), []string{"--keys", jwks, "-"}, strings.NewReader(f.cert+"\n"), &out); err != nil {
		t.Fatalf("err = %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "certificate valid") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestLicenseCommandUsage(t *testing.T) {
	if out, err := runLicense(t, "verify", "--help"); err != nil || !strings.Contains(out, "-leeway") {
		t.Errorf("verify --help: err = %v\n%s", err, out)
	}
	if _, err := runLicense(t, "sign"); err == nil {
		t.Error("an unknown license command succeeded")
	}
	if _, err := runLicense(t, "verify", "--keys", "x.json"); err == nil || !strings.Contains(err.Error(), "certificate file") {
		t.Errorf("no certificate: err = %v", err)
	}
}
