package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/google/uuid"
	"golang.org/x/oauth2"

	"till/internal/auth"
	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/rest"
)

// oidcServer is Till as a relying party meets it: /graphql, /v1 and the OpenID documents on
// one real HTTP origin, which is also the issuer.
type oidcServer struct {
	*v1
	srv *httptest.Server
}

// newOIDCServer serves the production handlers, mounted as cmd/till mounts them, on a live
// listener whose URL is the resolver's public URL.
func newOIDCServer(t *testing.T) *oidcServer {
	t.Helper()
	s := newV1(t)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.rebuild(t, func(d *resolvers.Deps) { d.PortalURL = srv.URL })
	mux.Handle("/graphql", s.GraphQL)
	mux.Handle(rest.OpenIDConfigurationPath, rest.OpenIDConfigurationHandler(s.Resolver))
	mux.Handle(rest.JWKSPath, rest.JWKSHandler(s.Resolver))
	mux.Handle("/", s.h)
	return &oidcServer{v1: s, srv: srv}
}

// graphql runs an operation over HTTP with token as bearer and returns the status; out
// receives data when the answer has no errors.
func (s *oidcServer) graphql(t *testing.T, token, query string, vars map[string]any, out any) int {
	t.Helper()
	res, err := resolverstest.Post(t.Context(), http.DefaultClient, s.srv.URL+"/graphql", token, query, vars)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status == http.StatusOK && len(res.Errors) > 0 {
		t.Fatalf("%s: errors %s", query, res.Body)
	}
	if res.Status == http.StatusOK && out != nil {
		if err := json.Unmarshal(res.Data, out); err != nil {
			t.Fatal(err)
		}
	}
	return res.Status
}

// createClient registers a client through GraphQL as the user and returns its id and
// secret (empty for a public client).
func (s *oidcServer) createClient(t *testing.T, pat, authMethod, redirectURI, scope string) (string, string) {
	t.Helper()
	var out struct {
		CreateOAuth2Client struct {
			Client       struct{ ClientID string }
			ClientSecret *string
		}
	}
	s.graphql(t, pat, `mutation($in: OAuth2ClientCreateInput!) { createOAuth2Client(input: $in) { client { clientId } clientSecret } }`,
		map[string]any{"in": map[string]any{"clientName": "E2E app", "redirectUris": []string{redirectURI}, "scope": scope,
			"tokenEndpointAuthMethod": authMethod}}, &out)
	c := out.CreateOAuth2Client
	if c.ClientSecret == nil {
		return c.Client.ClientID, ""
	}
	return c.Client.ClientID, *c.ClientSecret
}

// authorize plays the browser and the dashboard: it opens the authorization URL (consent
// data, anonymous), consents as the user with the query the URL carried plus the subject
// choice, and returns the code and state the redirect delivers.
func (s *oidcServer) authorize(t *testing.T, pat, authURL string, extra map[string]any) (code, state string) {
	t.Helper()
	res, err := http.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	var consent struct {
		Client struct {
			ClientID string `json:"client_id"`
		}
		Sub    *string
		Scopes []string
	}
	err = json.NewDecoder(res.Body).Decode(&consent)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || err != nil || consent.Sub != nil {
		t.Fatalf("GET authorize: status %d, err %v, consent %+v", res.StatusCode, err, consent)
	}
	u, _ := url.Parse(authURL)
	q := u.Query()
	if consent.Client.ClientID != q.Get("client_id") {
		t.Errorf("consent screen shows client %q, want %q", consent.Client.ClientID, q.Get("client_id"))
	}
	in := map[string]any{"clientId": q.Get("client_id"), "redirectUri": q.Get("redirect_uri"), "scope": q.Get("scope"),
		"state": q.Get("state"), "nonce": q.Get("nonce"), "codeChallenge": q.Get("code_challenge"),
		"codeChallengeMethod": q.Get("code_challenge_method")}
	for k, v := range extra {
		in[k] = v
	}
	var out struct{ AuthorizeOAuth2 struct{ RedirectURL string } }
	s.graphql(t, pat, `mutation($in: AuthorizeOAuth2Input!) { authorizeOAuth2(input: $in) { redirectUrl } }`,
		map[string]any{"in": in}, &out)
	back, err := url.Parse(out.AuthorizeOAuth2.RedirectURL)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Scheme + "://" + back.Host + back.Path; got != q.Get("redirect_uri") {
		t.Errorf("redirected to %s, want %s", got, q.Get("redirect_uri"))
	}
	if iss := back.Query().Get("iss"); iss != s.srv.URL {
		t.Errorf("redirect iss = %q, want %q (RFC 9207)", iss, s.srv.URL)
	}
	return back.Query().Get("code"), back.Query().Get("state")
}

// form posts an OAuth form to a /v1/oauth2 endpoint with HTTP Basic client authentication.
func (s *oidcServer) form(t *testing.T, path, clientID, secret string, values url.Values) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.srv.URL+path, strings.NewReader(values.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(secret))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body
}

const organizationQuery = `query($id: UUID) { organization(id: $id) { id slug } }`

// TestOIDCAuthorizationCodeFlowWithStandardClients drives Till with the libraries real
// applications use: golang.org/x/oauth2 for the code flow with PKCE and refresh, go-oidc for
// discovery and id-token verification.
func TestOIDCAuthorizationCodeFlowWithStandardClients(t *testing.T) {
	t.Parallel()
	s := newOIDCServer(t)
	ctx := t.Context()
	o := s.NewOrg(t, "organizations:read")
	user := s.NewUser(t, resolverstest.UserSpec{Scope: "openid email organizations:read organizations:write",
		Orgs: []uuid.UUID{o.ID}, EmailVerified: true})
	userID, pat := user.ID, user.Token
	const redirectURI = "https://app.example/callback"
	clientID, clientSecret := s.createClient(t, pat, "client_secret_basic", redirectURI, "openid email organizations:read")
	if clientSecret == "" {
		t.Fatal("a confidential client got no secret")
	}

	provider, err := oidc.NewProvider(ctx, s.srv.URL)
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	cfg := oauth2.Config{ClientID: clientID, ClientSecret: clientSecret, Endpoint: provider.Endpoint(), RedirectURL: redirectURI,
		Scopes: []string{oidc.ScopeOpenID, "email", "organizations:read"}}
	verifier := oauth2.GenerateVerifier()
	state, nonce := randomHex(8), randomHex(8)
	authURL := cfg.AuthCodeURL(state, oauth2.SetAuthURLParam("nonce", nonce), oauth2.S256ChallengeOption(verifier))
	if !strings.HasPrefix(authURL, s.srv.URL+"/v1/oauth2/authorize?") {
		t.Fatalf("authorization URL %s is not Till's authorize endpoint", authURL)
	}
	code, gotState := s.authorize(t, pat, authURL, nil)
	if gotState != state || !strings.HasPrefix(code, auth.PrefixAuthorizationCode) {
		t.Fatalf("redirect carried code %q state %q, want a code and state %q", code, gotState, state)
	}

	tok, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if !strings.HasPrefix(tok.AccessToken, auth.PrefixOAuthUserAccessToken) || tok.RefreshToken == "" || tok.TokenType != "Bearer" {
		t.Errorf("token = %+v, want a till_at_u_ bearer token with a refresh token", tok)
	}
	rawID, _ := tok.Extra("id_token").(string)
	idt, err := provider.Verifier(&oidc.Config{ClientID: clientID}).Verify(ctx, rawID)
	if err != nil {
		t.Fatalf("id token: %v", err)
	}
	if idt.Subject != userID.String() || idt.Nonce != nonce || idt.Issuer != s.srv.URL {
		t.Errorf("id token sub %q nonce %q iss %q, want %s, %s, %s", idt.Subject, idt.Nonce, idt.Issuer, userID, nonce, s.srv.URL)
	}
	if _, err := provider.Verifier(&oidc.Config{ClientID: "till_ci_someone_else"}).Verify(ctx, rawID); err == nil {
		t.Error("the id token verified for another client")
	}
	info, err := provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil || info.Subject != userID.String() || !strings.HasSuffix(info.Email, "@example.com") || !info.EmailVerified {
		t.Errorf("userinfo = %+v, %v; want the user with a verified email", info, err)
	}

	var got struct{ Organization struct{ ID uuid.UUID } }
	if status := s.graphql(t, tok.AccessToken, organizationQuery, map[string]any{"id": o.ID}, &got); status != http.StatusOK || got.Organization.ID != o.ID {
		t.Errorf("the access token on /graphql: status %d, organization %s; want 200 and %s", status, got.Organization.ID, o.ID)
	}
	introspect := func(token string) map[string]any {
		t.Helper()
		status, body := s.form(t, "/v1/oauth2/introspect", clientID, clientSecret, url.Values{"token": {token}})
		if status != http.StatusOK {
			t.Fatalf("introspect: %d %v", status, body)
		}
		return body
	}
	if body := introspect(tok.AccessToken); body["active"] != true || body["sub"] != userID.String() ||
		body["client_id"] != clientID || body["iss"] != s.srv.URL {
		t.Errorf("introspection = %v, want an active token of the user and client issued by %s", body, s.srv.URL)
	}

	// The token source refreshes an expired token; refresh rotates the pair, so the old
	// access token stops working.
	old := *tok
	expired := *tok
	expired.Expiry = time.Now().Add(-time.Minute)
	fresh, err := cfg.TokenSource(ctx, &expired).Token()
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if fresh.AccessToken == old.AccessToken || fresh.RefreshToken == old.RefreshToken || fresh.RefreshToken == "" {
		t.Errorf("refresh returned %+v, want a new access and refresh token", fresh)
	}
	if status := s.graphql(t, old.AccessToken, organizationQuery, map[string]any{"id": o.ID}, nil); status != http.StatusUnauthorized {
		t.Errorf("the refreshed-away access token: status %d, want 401", status)
	}
	if status := s.graphql(t, fresh.AccessToken, organizationQuery, map[string]any{"id": o.ID}, nil); status != http.StatusOK {
		t.Errorf("the refreshed access token: status %d, want 200", status)
	}
	if body := introspect(old.AccessToken); len(body) != 1 || body["active"] != false {
		t.Errorf("introspecting the old token = %v, want exactly {active: false}", body)
	}

	// Revocation ends the pair: introspection says inactive, the API refuses the token and
	// its refresh token no longer refreshes.
	if status, body := s.form(t, "/v1/oauth2/revoke", clientID, clientSecret, url.Values{"token": {fresh.AccessToken}}); status != http.StatusOK {
		t.Fatalf("revoke: %d %v", status, body)
	}
	if body := introspect(fresh.AccessToken); len(body) != 1 || body["active"] != false {
		t.Errorf("introspecting the revoked token = %v, want exactly {active: false}", body)
	}
	if status := s.graphql(t, fresh.AccessToken, organizationQuery, map[string]any{"id": o.ID}, nil); status != http.StatusUnauthorized {
		t.Errorf("the revoked access token: status %d, want 401", status)
	}
	fresh.Expiry = time.Now().Add(-time.Minute)
	if _, err := cfg.TokenSource(ctx, fresh).Token(); err == nil {
		t.Error("the revoked pair's refresh token still refreshes")
	}
}

// TestOIDCPublicClientWithPKCE is a native or browser application: no secret, PKCE proves
// the code's redeemer, client_id travels in the form. It acts for an organization.
func TestOIDCPublicClientWithPKCE(t *testing.T) {
	t.Parallel()
	s := newOIDCServer(t)
	ctx := t.Context()
	o := s.NewOrg(t, "organizations:read")
	pat := s.NewUser(t, resolverstest.UserSpec{Scope: "openid organizations:read organizations:write",
		Orgs: []uuid.UUID{o.ID}, EmailVerified: true}).Token
	const redirectURI = "http://127.0.0.1:4711/callback"
	clientID, clientSecret := s.createClient(t, pat, "none", redirectURI, "openid organizations:read")
	if clientSecret != "" {
		t.Fatalf("a public client got secret %q", clientSecret)
	}
	provider, err := oidc.NewProvider(ctx, s.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	endpoint := provider.Endpoint()
	endpoint.AuthStyle = oauth2.AuthStyleInParams
	cfg := oauth2.Config{ClientID: clientID, Endpoint: endpoint, RedirectURL: redirectURI,
		Scopes: []string{oidc.ScopeOpenID, "organizations:read"}}
	orgChoice := map[string]any{"subType": "organization", "organizationId": o.ID}

	// A code redeemed without its verifier, or with another one, yields nothing.
	verifier := oauth2.GenerateVerifier()
	code, _ := s.authorize(t, pat, cfg.AuthCodeURL("s1", oauth2.S256ChallengeOption(verifier)), orgChoice)
	if _, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(oauth2.GenerateVerifier())); err == nil {
		t.Error("exchange with the wrong verifier succeeded")
	}
	code, _ = s.authorize(t, pat, cfg.AuthCodeURL("s2", oauth2.S256ChallengeOption(verifier)), orgChoice)
	if _, err := cfg.Exchange(ctx, code); err == nil {
		t.Error("exchange without a verifier succeeded")
	}

	verifier = oauth2.GenerateVerifier()
	nonce := randomHex(8)
	code, state := s.authorize(t, pat, cfg.AuthCodeURL("s3", oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("nonce", nonce)), orgChoice)
	if state != "s3" {
		t.Errorf("state = %q, want s3", state)
	}
	tok, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if !strings.HasPrefix(tok.AccessToken, auth.PrefixOAuthOrganizationAccessToken) {
		t.Errorf("access token %q, want an organization token", tok.AccessToken)
	}
	rawID, _ := tok.Extra("id_token").(string)
	idt, err := provider.Verifier(&oidc.Config{ClientID: clientID}).Verify(ctx, rawID)
	if err != nil {
		t.Fatalf("id token: %v", err)
	}
	if idt.Subject != o.ID.String() || idt.Nonce != nonce {
		t.Errorf("id token sub %q nonce %q, want the organization %s and %s", idt.Subject, idt.Nonce, o.ID, nonce)
	}
	var got struct{ Organization struct{ Slug string } }
	if status := s.graphql(t, tok.AccessToken, organizationQuery, nil, &got); status != http.StatusOK || got.Organization.Slug != o.Slug {
		t.Errorf("the organization token on /graphql: status %d, slug %q; want 200 and %q", status, got.Organization.Slug, o.Slug)
	}
	if _, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier)); err == nil {
		t.Error("the code was redeemed twice")
	}
}

// TestOIDCDiscoveryThroughGoOIDC checks that go-oidc accepts the discovery document as is:
// its issuer matches the URL it was fetched from and the endpoints are Till's.
func TestOIDCDiscoveryThroughGoOIDC(t *testing.T) {
	t.Parallel()
	s := newOIDCServer(t)
	provider, err := oidc.NewProvider(context.Background(), s.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		JWKSURI string   `json:"jwks_uri"`
		Algs    []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := provider.Claims(&claims); err != nil {
		t.Fatal(err)
	}
	if e := provider.Endpoint(); e.AuthURL != s.srv.URL+"/v1/oauth2/authorize" || e.TokenURL != s.srv.URL+"/v1/oauth2/token" ||
		provider.UserInfoEndpoint() != s.srv.URL+"/v1/oauth2/userinfo" || claims.JWKSURI != s.srv.URL+rest.JWKSPath {
		t.Errorf("endpoints %+v, userinfo %s, jwks %s", e, provider.UserInfoEndpoint(), claims.JWKSURI)
	}
}
