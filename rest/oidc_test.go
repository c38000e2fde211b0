package rest_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"till/resolvers"
	"till/rest"
)

// serveOIDC answers one request to h and returns the response and its decoded JSON body.
func serveOIDC(t *testing.T, h http.Handler, method, path string) (*http.Response, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), method, path, nil))
	res := rec.Result()
	var body map[string]any
	if method != http.MethodHead {
		if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
			t.Fatalf("%s %s: decoding body: %v", method, path, err)
		}
	}
	return res, body
}

// TestOpenIDConfiguration pins how the discovery document is served; its members are the
// use case's (resolvers' TestOpenIDDiscoveryDocument).
func TestOpenIDConfiguration(t *testing.T) {
	t.Parallel()
	s := newV1(t)
	h := rest.OpenIDConfigurationHandler(s.Resolver)
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), method, rest.OpenIDConfigurationPath, nil))
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" ||
			rec.Header().Get("Cache-Control") != "public, max-age=3600" || rec.Header().Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s: status %d, headers %v", method, rec.Code, rec.Header())
		}
		want, _ := json.Marshal(s.Resolver.OpenIDDiscovery())
		if method == http.MethodGet && rec.Body.String() != string(want) {
			t.Errorf("body = %s, want %s", rec.Body, want)
		}
	}
	if _, body := serveOIDC(t, h, http.MethodGet, rest.OpenIDConfigurationPath); body["issuer"] != portalURL || body["jwks_uri"] != portalURL+rest.JWKSPath {
		t.Errorf("issuer %v, jwks_uri %v, want them at %s", body["issuer"], body["jwks_uri"], portalURL)
	}
	if res, body := serveOIDC(t, h, http.MethodPost, rest.OpenIDConfigurationPath); res.StatusCode != http.StatusMethodNotAllowed ||
		res.Header.Get("Allow") != "GET, HEAD" || body["detail"] != "Method Not Allowed" {
		t.Errorf("POST: status %d, Allow %q, body %v", res.StatusCode, res.Header.Get("Allow"), body)
	}
}

func TestJWKS(t *testing.T) {
	t.Parallel()
	s := newV1(t)
	h := rest.JWKSHandler(s.Resolver)
	fetch := func() []map[string]any {
		t.Helper()
		res, body := serveOIDC(t, h, http.MethodGet, rest.JWKSPath)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/jwk-set+json" ||
			res.Header.Get("Cache-Control") != "public, max-age=300" {
			t.Fatalf("status %d, headers %v", res.StatusCode, res.Header)
		}
		var keys []map[string]any
		for _, k := range body["keys"].([]any) {
			keys = append(keys, k.(map[string]any))
		}
		return keys
	}
	// The first fetch already publishes the key the first id token will be signed with.
	keys := fetch()
	if len(keys) != 1 {
		t.Fatalf("keys = %v, want one", keys)
	}
	k := keys[0]
	var members []string
	for m := range k {
		members = append(members, m)
	}
	slices.Sort(members)
	if want := []string{"alg", "e", "kid", "kty", "n", "use"}; !slices.Equal(members, want) {
		t.Errorf("key members = %v, want exactly %v (no private parts)", members, want)
	}
	if k["kty"] != "RSA" || k["use"] != "sig" || k["alg"] != "RS256" || k["e"] != "AQAB" || k["kid"] == "" {
		t.Errorf("key = %v", k)
	}

	token, err := s.Resolver.SignIDToken(t.Context(), resolvers.IDTokenClaims{Subject: "s", Audience: "c"})
	if err != nil {
		t.Fatal(err)
	}
	jws, err := jose.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		t.Fatal(err)
	}
	res := httptest.NewRecorder()
	h.ServeHTTP(res, httptest.NewRequestWithContext(t.Context(), http.MethodGet, rest.JWKSPath, nil))
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(res.Body.Bytes(), &set); err != nil {
		t.Fatal(err)
	}
	published := set.Key(jws.Signatures[0].Header.KeyID)
	if len(published) != 1 {
		t.Fatalf("the token's kid %s is not published", jws.Signatures[0].Header.KeyID)
	}
	if _, err := jws.Verify(published[0].Key); err != nil {
		t.Errorf("token does not verify with the published key: %v", err)
	}

	// After a rotation both keys are listed, the new one first.
	next, err := s.Resolver.RotateOIDCSigningKey(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	keys = fetch()
	if len(keys) != 2 || keys[0]["kid"] != next.KeyID || keys[1]["kid"] != k["kid"] {
		t.Errorf("after rotation keys = %v, want [%s %s]", keys, next.KeyID, k["kid"])
	}
	if res, _ := serveOIDC(t, h, http.MethodDelete, rest.JWKSPath); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("DELETE: status %d, want 405", res.StatusCode)
	}
}
