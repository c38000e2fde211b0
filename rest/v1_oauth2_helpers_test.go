package rest_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/resolvers/resolverstest"
	"till/storage"
)

// oauthFixture is a user (with a personal access token) in two organizations, the real /v1
// and /graphql handlers, and helpers to register clients and walk the code flow.
type oauthFixture struct {
	s          *v1
	user       uuid.UUID
	email      string
	pat        string
	orgA, orgB org
}

const redirectURI = "https://app.example/callback"

func newOAuthFixture(t *testing.T) *oauthFixture {
	t.Helper()
	s := newV1(t)
	return s.oauthUser(t, s.NewOrg(t, "webhooks:read"), s.NewOrg(t, "webhooks:read"))
}

// oauthScopes are the scopes of the fixture's personal access token: every scope the OAuth
// tests ask a consent for, since a consent never grants a scope the consenting token lacks.
const oauthScopes = "openid email webhooks:read"

// oauthUser is a new user (owner of orgA and orgB, the default role) with a personal access
// token holding oauthScopes.
func (s *v1) oauthUser(t *testing.T, orgA, orgB org) *oauthFixture {
	t.Helper()
	u := s.NewUser(t, resolverstest.UserSpec{Scope: oauthScopes, Orgs: []uuid.UUID{orgA.ID, orgB.ID}, EmailVerified: true})
	return &oauthFixture{s: s, user: u.ID, email: u.Email, pat: u.Token, orgA: orgA, orgB: orgB}
}

// oauthClient is a registered client and its plaintext secret ("" for public clients).
type oauthClient struct {
	ID, Secret, Method string
}

// client registers a client with the auth method, scope and grant types given.
func (f *oauthFixture) client(t *testing.T, method, scope string, grants ...string) oauthClient {
	t.Helper()
	c := oauthClient{ID: auth.Generate(auth.PrefixClientID), Method: method}
	w := storage.OAuth2ClientWrite{ClientID: c.ID, ClientName: "App", RedirectURIs: []string{redirectURI},
		Scope: scope, TokenEndpointAuthMethod: method, GrantTypes: grants, ResponseTypes: []string{"code"},
		DefaultSubType: "user"}
	if len(grants) == 0 {
		w.GrantTypes = []string{"authorization_code", "refresh_token"}
	}
	if method != "none" {
		c.Secret = auth.Generate(auth.PrefixClientSecret)
		hash := auth.Hash(f.s.Secret, c.Secret)
		w.SecretHash = &hash
	}
	if _, err := storage.CreateOAuth2Client(context.Background(), f.s.DB, storage.OAuth2ClientOwner{UserID: &f.user}, w); err != nil {
		t.Fatalf("creating client: %v", err)
	}
	return c
}

// graphql runs a GraphQL request through the real /graphql handler with a bearer token and
// returns the decoded body with the HTTP status under "status".
func (f *oauthFixture) graphql(t *testing.T, token, query string, vars map[string]any) map[string]any {
	t.Helper()
	res := f.s.Do(t, token, query, vars)
	var out map[string]any
	if err := json.Unmarshal(res.Body, &out); err != nil {
		t.Fatalf("graphql answered %d %s", res.Status, res.Body)
	}
	out["status"] = res.Status
	return out
}

const consentMutation = `mutation($input: AuthorizeOAuth2Input!) { authorizeOAuth2(input: $input) { redirectUrl code } }`

// consent gives the user's consent through the GraphQL mutation and returns the code and
// the redirect URL.
func (f *oauthFixture) consent(t *testing.T, input map[string]any) (code string, redirect *url.URL) {
	t.Helper()
	out := f.graphql(t, f.pat, consentMutation, map[string]any{"input": input})
	data, _ := out["data"].(map[string]any)
	payload, _ := data["authorizeOAuth2"].(map[string]any)
	if payload == nil {
		t.Fatalf("consent failed: %v", out)
	}
	u, err := url.Parse(payload["redirectUrl"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return payload["code"].(string), u
}

// pkce returns a verifier and its S256 challenge.
func pkce() (verifier, challenge string) {
	verifier = strings.Repeat("v", 20) + randomHex(16)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// post sends a form to an OAuth endpoint, authenticating c as its method says (Basic with
// form-urlencoded id and secret, or form fields); a zero client adds nothing.
func (f *oauthFixture) post(t *testing.T, path string, c oauthClient, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	return f.s.do(t, oauthCall(path, c, form))
}

// oauthCall is the request post sends.
func oauthCall(path string, c oauthClient, form url.Values) call {
	form = cloneForm(form)
	header := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	switch c.Method {
	case "client_secret_basic":
		header["Authorization"] = "Basic " + base64.StdEncoding.EncodeToString(
			[]byte(url.QueryEscape(c.ID)+":"+url.QueryEscape(c.Secret)))
	case "client_secret_post":
		form.Set("client_id", c.ID)
		form.Set("client_secret", c.Secret)
	case "none":
		form.Set("client_id", c.ID)
	}
	body := form.Encode()
	header["Content-Length"] = strconv.Itoa(len(body))
	return call{method: http.MethodPost, target: path, body: body, header: header}
}

func cloneForm(form url.Values) url.Values {
	out := url.Values{}
	for k, v := range form {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// tokenBody is the token endpoint's success body.
type tokenBody struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
	IDToken      string `json:"id_token"`
}

// exchange redeems a code and fails the test unless it succeeds.
func (f *oauthFixture) exchange(t *testing.T, c oauthClient, code, verifier string) tokenBody {
	t.Helper()
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI}}
	if verifier != "" {
		form.Set("code_verifier", verifier)
	}
	rec := f.post(t, "/v1/oauth2/token", c, form)
	if rec.Code != http.StatusOK {
		t.Fatalf("token exchange: %d %s", rec.Code, rec.Body)
	}
	var out tokenBody
	decodeJSON(t, rec.Body.Bytes(), &out)
	return out
}

// flow walks consent and exchange with an S256 challenge and returns the tokens.
func (f *oauthFixture) flow(t *testing.T, c oauthClient, input map[string]any) tokenBody {
	t.Helper()
	verifier, challenge := pkce()
	in := map[string]any{"clientId": c.ID, "codeChallenge": challenge, "codeChallengeMethod": "S256"}
	for k, v := range input {
		in[k] = v
	}
	code, _ := f.consent(t, in)
	return f.exchange(t, c, code, verifier)
}

// bodyMap decodes a JSON object body.
func bodyMap(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	decodeJSON(t, rec.Body.Bytes(), &m)
	return m
}
