// Package oidclogintest is a small but strict OpenID Connect provider for tests of sign-in:
// discovery, JWKS, an authorization endpoint that signs in whoever the test says, and a
// token endpoint that checks the client, the redirect URI and PKCE before it answers an id
// token signed with RS256.
package oidclogintest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// User is who the provider signs in next: the claims of the id token it issues.
type User struct {
	Subject       string
	Email         string
	EmailVerified any
	Name          string
}

// Provider is a running provider. Set Next before a browser (or test) reaches /authorize.
type Provider struct {
	URL          string
	ClientID     string
	ClientSecret string

	mu    sync.Mutex
	next  User
	codes map[string]grant
	key   *rsa.PrivateKey
	// WrongNonce makes the next id token carry another nonce, as a replayed token would.
	WrongNonce bool
}

type grant struct {
	user      User
	redirect  string
	nonce     string
	challenge string
}

// New starts a provider for one client and stops it with the test.
func New(t testing.TB) *Provider {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{ClientID: "till-test-client", ClientSecret: "s3cret", codes: map[string]grant{}, key: key}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /jwks", p.jwks)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	return p
}

// SignInNext makes u the user the next authorization signs in.
func (p *Provider) SignInNext(u User) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next = u
}

func (p *Provider) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"issuer": p.URL, "authorization_endpoint": p.URL + "/authorize",
		"token_endpoint": p.URL + "/token", "jwks_uri": p.URL + "/jwks",
		"id_token_signing_alg_values_supported": []string{"RS256"}})
}

func (p *Provider) jwks(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
}

// authorize signs in the next user at once and sends the browser back with a code.
func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != p.ClientID || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	code := base64.RawURLEncoding.EncodeToString(randomBytes())
	p.mu.Lock()
	p.codes[code] = grant{user: p.next, redirect: q.Get("redirect_uri"), nonce: q.Get("nonce"), challenge: q.Get("code_challenge")}
	p.mu.Unlock()
	back, _ := url.Parse(q.Get("redirect_uri"))
	v := back.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	}
	p.mu.Lock()
	g, found := p.codes[r.PostFormValue("code")]
	delete(p.codes, r.PostFormValue("code"))
	wrongNonce := p.WrongNonce
	p.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
	switch {
	case id != p.ClientID || secret != p.ClientSecret:
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	case !found || g.redirect != r.PostFormValue("redirect_uri") ||
		base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	}
	nonce := g.nonce
	if wrongNonce {
		nonce = "another"
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: p.key}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	now := time.Now()
	claims := map[string]any{"iss": p.URL, "aud": p.ClientID, "sub": g.user.Subject, "nonce": nonce,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "email": g.user.Email, "name": g.user.Name}
	if g.user.EmailVerified != nil {
		claims["email_verified"] = g.user.EmailVerified
	}
	idToken, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": "at", "token_type": "Bearer", "expires_in": 3600, "id_token": idToken})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func randomBytes() []byte {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return b
}
