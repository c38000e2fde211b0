package licensecert_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/internal/licensecert"
)

// published is the JWK Set JWKSHandler serves for set, as an application downloads it.
func published(t *testing.T, set licensecert.KeySet) []byte {
	t.Helper()
	h := licensecert.JWKSHandler(func(context.Context, uuid.UUID) (licensecert.KeySet, error) { return set, nil })
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, licensecert.JWKSPath(uuid.New()), nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("JWK Set: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// joseVerify checks a certificate the way an application using go-jose would: EdDSA only,
// the key chosen by kid from the published set, the explicit typ, then the registered time
// claims at now.
func joseVerify(token string, set []byte, now time.Time) (licensecert.Claims, error) {
	var keys jose.JSONWebKeySet
	if err := json.Unmarshal(set, &keys); err != nil {
		return licensecert.Claims{}, err
	}
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		return licensecert.Claims{}, err
	}
	if typ := tok.Headers[0].ExtraHeaders[jose.HeaderType]; typ != licensecert.Type {
		return licensecert.Claims{}, fmt.Errorf("typ %v", typ)
	}
	var registered jwt.Claims
	var c licensecert.Claims
	if err := tok.Claims(keys, &registered, &c); err != nil {
		return licensecert.Claims{}, err
	}
	return c, registered.ValidateWithLeeway(jwt.Expected{Time: now}, 0)
}

// rotatedSet is a signer's set with a retired key beside the active one, so the published
// set carries Till's till_valid_until extension.
func rotatedSet(t *testing.T, s signer) licensecert.KeySet {
	t.Helper()
	retired, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	until := t0.Add(24 * time.Hour)
	return licensecert.KeySet{Keys: append(s.set.Keys, licensecert.NewJWK(retired, &until))}
}

func TestGoJOSEVerifiesCertificatesWithThePublishedKeys(t *testing.T) {
	s := newSigner(t)
	set := published(t, rotatedSet(t, s))
	withoutActivation := sampleClaims()
	withoutActivation.Activation, withoutActivation.ExpiresAt, withoutActivation.LimitActivations = nil, nil, nil
	tests := []struct {
		name   string
		claims licensecert.Claims
	}{
		{"a certificate bound to an activation verifies", sampleClaims()},
		{"a certificate about the key alone verifies", withoutActivation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := joseVerify(s.sign(t, tt.claims), set, t0)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.claims, got); diff != "" {
				t.Errorf("claims as go-jose reads them (-signed +read):\n%s", diff)
			}
		})
	}
}

func TestGoJOSEReadsThePublishedKeySet(t *testing.T) {
	s := newSigner(t)
	var keys jose.JSONWebKeySet
	if err := json.Unmarshal(published(t, rotatedSet(t, s)), &keys); err != nil {
		t.Fatal(err)
	}
	if len(keys.Keys) != 2 {
		t.Fatalf("go-jose read %d keys, want 2", len(keys.Keys))
	}
	for _, k := range keys.Keys {
		t.Run("key "+k.KeyID+" is an EdDSA signing key named by its thumbprint", func(t *testing.T) {
			if _, ok := k.Key.(ed25519.PublicKey); !ok || k.Algorithm != string(jose.EdDSA) || k.Use != "sig" || !k.Valid() {
				t.Errorf("go-jose read %T alg %q use %q", k.Key, k.Algorithm, k.Use)
			}
			thumb, err := k.Thumbprint(crypto.SHA256)
			if err != nil {
				t.Fatal(err)
			}
			if got := enc.EncodeToString(thumb); got != k.KeyID {
				t.Errorf("RFC 7638 thumbprint %s, published kid %s", got, k.KeyID)
			}
		})
	}
}

func TestGoJOSESignedCertificatesVerifyHere(t *testing.T) {
	s := newSigner(t)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: s.priv},
		(&jose.SignerOptions{}).WithType(licensecert.Type).WithHeader(jose.HeaderKey("kid"), s.kid))
	if err != nil {
		t.Fatal(err)
	}
	want := sampleClaims()
	token, err := jwt.Signed(signer).Claims(want).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	got, err := licensecert.Verify(token, s.set, t0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("claims (-signed by go-jose +read here):\n%s", diff)
	}
}

// TestGoJOSEAndVerifyBothRefuseTamperedCertificates alters a good certificate in the ways an
// attacker could and checks that neither verifier accepts the result.
func TestGoJOSEAndVerifyBothRefuseTamperedCertificates(t *testing.T) {
	s, other := newSigner(t), newSigner(t)
	set := published(t, s.set)
	c := sampleClaims()
	parts := strings.Split(s.sign(t, c), ".")
	pub, _ := s.set.Lookup(s.kid)
	signWith := func(priv ed25519.PrivateKey) func(string) []byte {
		return func(in string) []byte { return ed25519.Sign(priv, []byte(in)) }
	}
	hdr := func(alg, typ string) string { return `{"alg":"` + alg + `","kid":"` + s.kid + `","typ":"` + typ + `"}` }
	revoked := c
	revoked.Status = "revoked"
	revokedPayload, _ := json.Marshal(revoked)
	longer := c
	longer.Expiry = t0.Add(365 * 24 * time.Hour).Unix()
	longerPayload, _ := json.Marshal(longer)
	sig, _ := enc.DecodeString(parts[2])
	sig[0] ^= 0x80
	expired := c
	expired.Expiry = t0.Unix() - 1

	tests := []struct {
		name, token string
	}{
		{"a status changed after signing", parts[0] + "." + enc.EncodeToString(revokedPayload) + "." + parts[2]},
		{"an expiry pushed back after signing", parts[0] + "." + enc.EncodeToString(longerPayload) + "." + parts[2]},
		{"a flipped signature bit", parts[0] + "." + parts[1] + "." + enc.EncodeToString(sig)},
		{"a truncated signature", parts[0] + "." + parts[1] + "." + enc.EncodeToString(sig[:32])},
		{"no signature", parts[0] + "." + parts[1] + "."},
		{"a header swapped for another", enc.EncodeToString([]byte(hdr("EdDSA", licensecert.Type+" "))) + "." + parts[1] + "." + parts[2]},
		{"a signature by another key under the published kid", forge(hdr("EdDSA", licensecert.Type), c, signWith(other.priv))},
		{"a certificate signed by a key the set lacks", other.sign(t, c)},
		{"alg none", forge(hdr("none", licensecert.Type), c, func(string) []byte { return nil })},
		{"HS256 keyed with the public key", forge(hdr("HS256", licensecert.Type), c, func(in string) []byte {
			m := hmac.New(sha256.New, pub)
			m.Write([]byte(in))
			return m.Sum(nil)
		})},
		{"another typ under a valid signature", forge(hdr("EdDSA", "JWT"), c, signWith(s.priv))},
		{"a validly signed certificate that has expired", s.sign(t, expired)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := licensecert.Verify(tt.token, s.set, t0, 0); err == nil {
				t.Error("licensecert.Verify accepted it")
			}
			if _, err := joseVerify(tt.token, set, t0); err == nil {
				t.Error("go-jose accepted it")
			}
		})
	}
}

// TestVerifyIsStricterThanGoJOSE pins the certificates go-jose accepts and Verify refuses, on
// purpose: an encoding that decodes like the signed one but differs from it (base64url with
// stray trailing bits), and the exact second of exp, from which RFC 7519 §4.1.4 says a token
// must not be accepted (go-jose accepts until the second after).
func TestVerifyIsStricterThanGoJOSE(t *testing.T) {
	s := newSigner(t)
	set := published(t, s.set)
	c := sampleClaims()
	parts := strings.Split(s.sign(t, c), ".")
	tests := []struct {
		name, token string
		at          time.Time
		want        error
	}{
		{"a signature whose last character carries stray bits", parts[0] + "." + parts[1] + "." + strayBits(t, parts[2]), t0, licensecert.ErrMalformed},
		{"a certificate at the second of its exp", strings.Join(parts, "."), time.Unix(c.Expiry, 0), licensecert.ErrExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := licensecert.Verify(tt.token, s.set, tt.at, 0); !errors.Is(err, tt.want) {
				t.Errorf("licensecert.Verify: err = %v, want %v", err, tt.want)
			}
			if _, err := joseVerify(tt.token, set, tt.at); err != nil {
				t.Errorf("go-jose refused it too (%v): the difference this test documents is gone", err)
			}
		})
	}
}

// strayBits changes the unused low bits of a base64url string's last character, which a
// lenient decoder ignores: the text differs, the decoded bytes do not.
func strayBits(t *testing.T, s string) string {
	t.Helper()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	if len(s)%4 == 0 || len(s)%4 == 1 {
		t.Fatalf("%d characters leave no stray bits", len(s))
	}
	last := strings.IndexByte(alphabet, s[len(s)-1])
	return s[:len(s)-1] + string(alphabet[last^1])
}
