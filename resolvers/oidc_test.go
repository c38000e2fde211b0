package resolvers_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"

	"till/resolvers"
	"till/storage/storagetest"
)

// oidcClock is a settable clock for key-rotation tests.
type oidcClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *oidcClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *oidcClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newOIDCResolver(t *testing.T, rotation time.Duration) (*resolvers.Resolver, *oidcClock, resolvers.Deps) {
	t.Helper()
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	clock := &oidcClock{now: time.Now().UTC().Truncate(time.Second)}
	d := resolvers.Deps{DB: storagetest.New(t), Secret: secret, PortalURL: "https://till.example.com/", Clock: clock.Now,
		OIDC: resolvers.OIDCSettings{KeyRotation: rotation}}
	return resolvers.New(d), clock, d
}

// verifyIDToken checks token as a relying party would at the given time: against the key the
// published set lists under the token's kid, and only that key.
func verifyIDToken(t *testing.T, r *resolvers.Resolver, token, clientID string, at time.Time) (*oidc.IDToken, error) {
	t.Helper()
	set, err := r.OIDCKeySet(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	jws, err := jose.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return nil, err
	}
	var pubs []crypto.PublicKey
	for _, k := range set.Key(jws.Signatures[0].Header.KeyID) {
		pubs = append(pubs, k.Key)
	}
	v := oidc.NewVerifier("https://till.example.com", &oidc.StaticKeySet{PublicKeys: pubs},
		&oidc.Config{ClientID: clientID, Now: func() time.Time { return at }})
	return v.Verify(t.Context(), token)
}

func tokenKeyID(t *testing.T, token string) string {
	t.Helper()
	jws, err := jose.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		t.Fatal(err)
	}
	return jws.Signatures[0].Header.KeyID
}

func publishedKeyIDs(t *testing.T, r *resolvers.Resolver) []string {
	t.Helper()
	set, err := r.OIDCKeySet(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, k := range set.Keys {
		if k.Algorithm != "RS256" || k.Use != "sig" || !k.IsPublic() {
			t.Errorf("published key %s: alg %q use %q public %v, want a public RS256 signing key", k.KeyID, k.Algorithm, k.Use, k.IsPublic())
		}
		if pub, ok := k.Key.(*rsa.PublicKey); !ok || pub.N.BitLen() != 2048 {
			t.Errorf("published key %s is %T, want a 2048-bit RSA key", k.KeyID, k.Key)
		}
		kids = append(kids, k.KeyID)
	}
	return kids
}

func TestSignIDTokenClaims(t *testing.T) {
	r, clock, _ := newOIDCResolver(t, 0)
	now := clock.Now()
	authTime := now.Add(-time.Minute)
	token, err := r.SignIDToken(t.Context(), resolvers.IDTokenClaims{Subject: "user-1", Audience: "till_ci_client",
		Nonce: "n-0S6_WzA2Mj", AuthTime: authTime, IssuedAt: now, Expiry: now.Add(resolvers.IDTokenLifetime)})
	if err != nil {
		t.Fatal(err)
	}
	jws, err := jose.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		t.Fatal(err)
	}
	h := jws.Signatures[0].Header
	if h.Algorithm != "RS256" || h.KeyID == "" || h.ExtraHeaders["typ"] != "JWT" {
		t.Errorf("header = alg %q kid %q typ %v, want RS256, a kid and JWT", h.Algorithm, h.KeyID, h.ExtraHeaders["typ"])
	}
	idt, err := verifyIDToken(t, r, token, "till_ci_client", now)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"iss": "https://till.example.com", "sub": "user-1", "aud": "till_ci_client",
		"nonce": "n-0S6_WzA2Mj", "iat": float64(now.Unix()), "exp": float64(now.Add(time.Hour).Unix()),
		"auth_time": float64(authTime.Unix())}
	if len(claims) != len(want) {
		t.Errorf("claims = %v, want exactly %v", claims, want)
	}
	for k, v := range want {
		if claims[k] != v {
			t.Errorf("claim %s = %v, want %v", k, claims[k], v)
		}
	}

	// Without nonce and auth time, and with default times, those claims are absent.
	token, err = r.SignIDToken(t.Context(), resolvers.IDTokenClaims{Subject: "org-1", Audience: "till_ci_client"})
	if err != nil {
		t.Fatal(err)
	}
	idt, err = verifyIDToken(t, r, token, "till_ci_client", now)
	if err != nil {
		t.Fatal(err)
	}
	claims = nil
	_ = idt.Claims(&claims)
	if _, ok := claims["nonce"]; ok || claims["auth_time"] != nil || claims["exp"] != float64(now.Add(time.Hour).Unix()) {
		t.Errorf("claims = %v, want no nonce or auth_time and exp an hour ahead", claims)
	}
}

func TestSignIDTokenRefusesBadClaims(t *testing.T) {
	r, clock, _ := newOIDCResolver(t, 0)
	for name, c := range map[string]resolvers.IDTokenClaims{
		"no subject":    {Audience: "c"},
		"no audience":   {Subject: "s"},
		"too long life": {Subject: "s", Audience: "c", Expiry: clock.Now().Add(2 * time.Hour)},
	} {
		if token, err := r.SignIDToken(t.Context(), c); err == nil {
			t.Errorf("%s: signed %q, want an error", name, token)
		}
	}
}

func TestTamperedIDTokenFailsVerification(t *testing.T) {
	r, clock, _ := newOIDCResolver(t, 0)
	token, err := r.SignIDToken(t.Context(), resolvers.IDTokenClaims{Subject: "user-1", Audience: "client-a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verifyIDToken(t, r, token, "client-a", clock.Now()); err != nil {
		t.Fatalf("untampered token: %v", err)
	}
	parts := strings.Split(token, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	_ = json.Unmarshal(payload, &claims)
	claims["sub"] = "user-2"
	forged, _ := json.Marshal(claims)
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	otherSigner, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256,
		Key: jose.JSONWebKey{Key: other, KeyID: tokenKeyID(t, token)}}, nil)
	selfSigned, _ := otherSigner.Sign(payload)
	selfSignedToken, _ := selfSigned.CompactSerialize()
	for name, tc := range map[string]struct{ token, clientID string }{
		"payload changed":      {parts[0] + "." + base64.RawURLEncoding.EncodeToString(forged) + "." + parts[2], "client-a"},
		"signature truncated":  {token[:len(token)-4], "client-a"},
		"signed by a stranger": {selfSignedToken, "client-a"},
		"other audience":       {token, "client-b"},
	} {
		if _, err := verifyIDToken(t, r, tc.token, tc.clientID, clock.Now()); err == nil {
			t.Errorf("%s: verified, want a failure", name)
		}
	}
	if _, err := verifyIDToken(t, r, token, "client-a", clock.Now().Add(resolvers.IDTokenLifetime+time.Second)); err == nil {
		t.Error("expired token verified")
	}
}

func TestOIDCKeyCreatedOnceUnderConcurrency(t *testing.T) {
	r, _, d := newOIDCResolver(t, 0)
	const signers = 8
	tokens := make([]string, signers)
	errs := make([]error, signers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range signers {
		wg.Go(func() {
			<-start
			tokens[i], errs[i] = r.SignIDToken(t.Context(), resolvers.IDTokenClaims{Subject: "s", Audience: "c"})
		})
	}
	close(start)
	wg.Wait()
	kids := map[string]bool{}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("signer %d: %v", i, err)
		}
		kids[tokenKeyID(t, tokens[i])] = true
	}
	var rows int
	if err := d.DB.GetContext(t.Context(), &rows, `SELECT count(*) FROM oidc_signing_keys`); err != nil {
		t.Fatal(err)
	}
	if published := publishedKeyIDs(t, r); len(kids) != 1 || rows != 1 || len(published) != 1 {
		t.Errorf("%d signing kids, %d stored keys, %d published, want one of each", len(kids), rows, len(published))
	}
}

func TestOIDCKeyRotation(t *testing.T) {
	r, clock, _ := newOIDCResolver(t, 24*time.Hour)
	sign := func() string {
		t.Helper()
		token, err := r.SignIDToken(t.Context(), resolvers.IDTokenClaims{Subject: "s", Audience: "c"})
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	first := sign()
	firstKid := tokenKeyID(t, first)
	clock.Advance(23 * time.Hour)
	if kid := tokenKeyID(t, sign()); kid != firstKid {
		t.Fatalf("within the period the key changed: %s, want %s", kid, firstKid)
	}
	last := sign()

	clock.Advance(time.Hour)
	second := sign()
	secondKid := tokenKeyID(t, second)
	if secondKid == firstKid {
		t.Fatal("after the period the old key still signs")
	}
	if got := publishedKeyIDs(t, r); len(got) != 2 || got[0] != secondKid || got[1] != firstKid {
		t.Errorf("published = %v, want [%s %s] (new key first, old one kept)", got, secondKid, firstKid)
	}
	if _, err := verifyIDToken(t, r, last, "c", clock.Now()); err != nil {
		t.Errorf("token of the retired key: %v", err)
	}

	// Rotating now replaces the key whatever its age; earlier keys stay published.
	k, err := r.RotateOIDCSigningKey(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if kid := tokenKeyID(t, sign()); kid != k.KeyID || kid == secondKid {
		t.Errorf("after a manual rotation the signing kid is %s, want the new %s", kid, k.KeyID)
	}
	if got := publishedKeyIDs(t, r); len(got) != 3 || got[0] != k.KeyID {
		t.Errorf("published = %v, want the new key first and both older ones", got)
	}
	if _, err := verifyIDToken(t, r, second, "c", clock.Now()); err != nil {
		t.Errorf("token of the manually retired key: %v", err)
	}

	// Once every token a retired key signed has expired (plus the margin), it is dropped.
	clock.Advance(resolvers.IDTokenLifetime + 16*time.Minute)
	if got := publishedKeyIDs(t, r); len(got) != 1 || got[0] != k.KeyID {
		t.Errorf("published = %v, want only the current %s", got, k.KeyID)
	}
}

func TestOIDCKeySealedAtRest(t *testing.T) {
	r, _, d := newOIDCResolver(t, 0)
	if _, err := r.SignIDToken(t.Context(), resolvers.IDTokenClaims{Subject: "s", Audience: "c"}); err != nil {
		t.Fatal(err)
	}
	// Another server secret cannot open the stored key, so a database alone cannot sign.
	stranger := resolvers.New(resolvers.Deps{DB: d.DB, Secret: []byte("another secret"), PortalURL: d.PortalURL, Clock: d.Clock})
	if _, err := stranger.SignIDToken(t.Context(), resolvers.IDTokenClaims{Subject: "s", Audience: "c"}); err == nil {
		t.Error("signed with another server secret, want a failure")
	}
	// A sealed key moved to another row, or altered, does not open either.
	if _, err := d.DB.ExecContext(t.Context(), `UPDATE oidc_signing_keys SET kid = kid || 'x'`); err != nil {
		t.Fatal(err)
	}
	if _, err := r.SignIDToken(t.Context(), resolvers.IDTokenClaims{Subject: "s", Audience: "c"}); err == nil {
		t.Error("signed with a key sealed for another kid, want a failure")
	}
}

func TestOIDCKeyRotatedOnceUnderConcurrency(t *testing.T) {
	r, clock, d := newOIDCResolver(t, time.Hour)
	first, err := r.SignIDToken(t.Context(), resolvers.IDTokenClaims{Subject: "s", Audience: "c"})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	const signers = 8
	tokens := make([]string, signers)
	errs := make([]error, signers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range signers {
		wg.Go(func() {
			<-start
			tokens[i], errs[i] = r.SignIDToken(t.Context(), resolvers.IDTokenClaims{Subject: "s", Audience: "c"})
		})
	}
	close(start)
	wg.Wait()
	kids := make([]string, signers)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("signer %d: %v", i, err)
		}
		kids[i] = tokenKeyID(t, tokens[i])
	}
	for _, kid := range kids {
		if kid != kids[0] || kid == tokenKeyID(t, first) {
			t.Fatalf("signing kids after the period = %v, want one new key", kids)
		}
	}
	var retired, current int
	if err := d.DB.GetContext(t.Context(), &retired, `SELECT count(*) FROM oidc_signing_keys WHERE retired_at IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	if err := d.DB.GetContext(t.Context(), &current, `SELECT count(*) FROM oidc_signing_keys WHERE retired_at IS NULL`); err != nil {
		t.Fatal(err)
	}
	if retired != 1 || current != 1 {
		t.Errorf("%d retired and %d current keys, want 1 and 1", retired, current)
	}
}
