package licensecert_test

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/internal/licensecert"
)

var enc = base64.RawURLEncoding

// signer is one signing key and the key set that publishes it.
type signer struct {
	priv ed25519.PrivateKey
	kid  string
	set  licensecert.KeySet
}

func newSigner(t *testing.T) signer {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signer{priv: priv, kid: licensecert.KeyID(pub), set: licensecert.KeySet{Keys: []licensecert.JWK{licensecert.NewJWK(pub, nil)}}}
}

func (s signer) sign(t *testing.T, c licensecert.Claims) string {
	t.Helper()
	tok, err := licensecert.Sign(s.priv, s.kid, c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// t0 is the instant the sample certificates are issued at.
var t0 = time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)

func sampleClaims() licensecert.Claims {
	limit, expires := 3, time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC)
	keyID := uuid.New()
	return licensecert.Claims{
		Issuer: "https://till.example.com", Subject: keyID.String(),
		IssuedAt: t0.Unix(), NotBefore: t0.Unix(), Expiry: t0.Add(7 * 24 * time.Hour).Unix(),
		OrganizationID: uuid.New(), LicenseKeyID: keyID, DisplayKey: "****-4F2A",
		CustomerID: uuid.New(), BenefitID: uuid.New(), Status: "granted",
		LimitActivations: &limit, Usage: 1, ExpiresAt: &expires,
		Activation: &licensecert.Activation{ID: uuid.New(), Label: "laptop", Meta: map[string]any{"host": "ada"}},
	}
}

func TestSignVerifyRoundTrip(t *testing.T) {
	s := newSigner(t)
	want := sampleClaims()
	got, err := licensecert.Verify(s.sign(t, want), s.set, t0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("claims changed in the round trip:\n got %+v\nwant %+v", got, want)
	}
}

func TestHeaderIsTheDocumentedOne(t *testing.T) {
	s := newSigner(t)
	h, err := enc.DecodeString(strings.Split(s.sign(t, sampleClaims()), ".")[0])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"alg":"EdDSA","kid":"` + s.kid + `","typ":"till-license+jwt"}`
	if string(h) != want {
		t.Errorf("header = %s, want %s", h, want)
	}
}

func TestEmptyClaimsKeepEveryFieldAsNull(t *testing.T) {
	b, err := json.Marshal(licensecert.Claims{})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"iss", "sub", "iat", "nbf", "exp", "organization_id", "license_key_id", "display_key",
		"customer_id", "benefit_id", "status", "limit_activations", "limit_usage", "usage", "expires_at", "activation"} {
		if _, ok := m[k]; !ok {
			t.Errorf("field %q is missing from %s", k, b)
		}
	}
	for _, k := range []string{"limit_activations", "limit_usage", "expires_at", "activation"} {
		if m[k] != nil {
			t.Errorf("field %q = %v, want null", k, m[k])
		}
	}
}

// forge builds a token from a raw header and claims with the given signature bytes.
func forge(header string, claims licensecert.Claims, sig func(input string) []byte) string {
	p, _ := json.Marshal(claims)
	input := enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString(p)
	return input + "." + enc.EncodeToString(sig(input))
}

func TestVerifyRejects(t *testing.T) {
	s, other := newSigner(t), newSigner(t)
	c := sampleClaims()
	good := s.sign(t, c)
	parts := strings.Split(good, ".")
	pub, _ := s.set.Lookup(s.kid)
	signWith := func(priv ed25519.PrivateKey) func(string) []byte {
		return func(in string) []byte { return ed25519.Sign(priv, []byte(in)) }
	}
	hdr := func(alg, kid, typ string) string {
		return `{"alg":"` + alg + `","kid":"` + kid + `","typ":"` + typ + `"}`
	}
	revoked := c
	revoked.Status = "revoked"
	revokedPayload, _ := json.Marshal(revoked)
	sig, _ := enc.DecodeString(parts[2])
	sig[5] ^= 1
	changedHeader := enc.EncodeToString([]byte(`{"alg":"EdDSA","kid":"` + s.kid + `","typ":"till-license+jwt","x":1}`))

	tests := []struct {
		name  string
		token string
		want  error
	}{
		{"a changed payload", parts[0] + "." + enc.EncodeToString(revokedPayload) + "." + parts[2], licensecert.ErrSignature},
		{"a changed header", changedHeader + "." + parts[1] + "." + parts[2], licensecert.ErrSignature},
		{"a changed signature", parts[0] + "." + parts[1] + "." + enc.EncodeToString(sig), licensecert.ErrSignature},
		{"a signature by another key under the known kid", forge(hdr("EdDSA", s.kid, "till-license+jwt"), c, signWith(other.priv)), licensecert.ErrSignature},
		{"alg none without signature", forge(hdr("none", s.kid, "till-license+jwt"), c, func(string) []byte { return nil }), licensecert.ErrAlgorithm},
		{"HS256 keyed with the public key", forge(hdr("HS256", s.kid, "till-license+jwt"), c, func(in string) []byte {
			m := hmac.New(sha256.New, pub)
			m.Write([]byte(in))
			return m.Sum(nil)
		}), licensecert.ErrAlgorithm},
		{"alg in another case", forge(hdr("eddsa", s.kid, "till-license+jwt"), c, signWith(s.priv)), licensecert.ErrAlgorithm},
		{"Ed25519 instead of EdDSA", forge(hdr("Ed25519", s.kid, "till-license+jwt"), c, signWith(s.priv)), licensecert.ErrAlgorithm},
		{"no kid", forge(`{"alg":"EdDSA","typ":"till-license+jwt"}`, c, signWith(s.priv)), licensecert.ErrUnknownKey},
		{"a kid the set lacks", other.sign(t, c), licensecert.ErrUnknownKey},
		{"another typ", forge(hdr("EdDSA", s.kid, "JWT"), c, signWith(s.priv)), licensecert.ErrMalformed},
		{"a critical extension", forge(`{"alg":"EdDSA","kid":"`+s.kid+`","typ":"till-license+jwt","crit":["exp"]}`, c, signWith(s.priv)), licensecert.ErrMalformed},
		{"two parts", parts[0] + "." + parts[1], licensecert.ErrMalformed},
		{"four parts", good + ".x", licensecert.ErrMalformed},
		{"padded base64", parts[0] + "=." + parts[1] + "." + parts[2], licensecert.ErrMalformed},
		{"a header that is not JSON", enc.EncodeToString([]byte("{")) + "." + parts[1] + "." + parts[2], licensecert.ErrMalformed},
		{"an empty string", "", licensecert.ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := licensecert.Verify(tc.token, s.set, t0, 0)
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestVerifyValidityWindow(t *testing.T) {
	s := newSigner(t)
	c := sampleClaims()
	nbf, exp := time.Unix(c.NotBefore, 0), time.Unix(c.Expiry, 0)
	noExp := c
	noExp.Expiry = 0
	tests := []struct {
		name   string
		claims licensecert.Claims
		now    time.Time
		leeway time.Duration
		want   error
	}{
		{"at nbf", c, nbf, 0, nil},
		{"a second before nbf", c, nbf.Add(-time.Second), 0, licensecert.ErrNotYetValid},
		{"a second before nbf within the leeway", c, nbf.Add(-time.Second), 5 * time.Second, nil},
		{"beyond the leeway before nbf", c, nbf.Add(-6 * time.Second), 5 * time.Second, licensecert.ErrNotYetValid},
		{"a second before exp", c, exp.Add(-time.Second), 0, nil},
		{"at exp", c, exp, 0, licensecert.ErrExpired},
		{"after exp within the leeway", c, exp.Add(4 * time.Second), 5 * time.Second, nil},
		{"at exp plus the leeway", c, exp.Add(5 * time.Second), 5 * time.Second, licensecert.ErrExpired},
		{"a negative leeway counts as none", c, exp.Add(-time.Second), -time.Hour, nil},
		{"no exp at all", noExp, nbf, time.Hour, licensecert.ErrExpired},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := licensecert.Verify(s.sign(t, tc.claims), s.set, tc.now, tc.leeway)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestRotatedKeySetStillVerifiesOldCertificates(t *testing.T) {
	old, current := newSigner(t), newSigner(t)
	c := sampleClaims()
	before, after := old.sign(t, c), current.sign(t, c)

	oldPub, _ := old.set.Lookup(old.kid)
	curPub, _ := current.set.Lookup(current.kid)
	validUntil := time.Unix(c.Expiry, 0)
	published, err := json.Marshal(licensecert.KeySet{Keys: []licensecert.JWK{
		licensecert.NewJWK(curPub, nil), licensecert.NewJWK(oldPub, &validUntil),
	}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := licensecert.ParseKeySet(published)
	if err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]string{"signed before the rotation": before, "signed after": after} {
		if _, err := licensecert.Verify(tok, set, t0, 0); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Once the retired key is no longer published, its certificates no longer verify.
	if _, err := licensecert.Verify(before, current.set, t0, 0); !errors.Is(err, licensecert.ErrUnknownKey) {
		t.Errorf("old certificate against the new key alone: err = %v, want ErrUnknownKey", err)
	}
}

func TestUnverifiedClaimsReadsWithoutKeys(t *testing.T) {
	c := sampleClaims()
	got, err := licensecert.UnverifiedClaims(newSigner(t).sign(t, c))
	if err != nil {
		t.Fatal(err)
	}
	if got.Issuer != c.Issuer || got.OrganizationID != c.OrganizationID {
		t.Errorf("got %s %s, want %s %s", got.Issuer, got.OrganizationID, c.Issuer, c.OrganizationID)
	}
	if _, err := licensecert.UnverifiedClaims("a.b"); !errors.Is(err, licensecert.ErrMalformed) {
		t.Errorf("err = %v, want ErrMalformed", err)
	}
}

func TestSignRefusesBadInput(t *testing.T) {
	s := newSigner(t)
	if _, err := licensecert.Sign(s.priv[:10], s.kid, sampleClaims()); err == nil {
		t.Error("signed with a truncated private key")
	}
	if _, err := licensecert.Sign(s.priv, "", sampleClaims()); err == nil {
		t.Error("signed without a kid")
	}
}
