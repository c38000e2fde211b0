package resolvers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/storage"
)

const endpointRedirectURI = "https://app.example/callback"

// endpointClient registers a client of a new organization with the auth method and scope
// given, and returns its id and plaintext secret ("" for a public client).
func endpointClient(tb testing.TB, s *resolverstest.Server, method, scope string) (id, secret string) {
	tb.Helper()
	org := s.NewOrg(tb, "")
	id = auth.Generate(auth.PrefixClientID)
	w := storage.OAuth2ClientWrite{ClientID: id, ClientName: "App", RedirectURIs: []string{endpointRedirectURI},
		Scope: scope, TokenEndpointAuthMethod: method, GrantTypes: []string{"authorization_code", "refresh_token"},
		ResponseTypes: []string{"code"}, DefaultSubType: "user"}
	if method != "none" {
		secret = auth.Generate(auth.PrefixClientSecret)
		hash := auth.Hash(s.Secret, secret)
		w.SecretHash = &hash
	}
	if _, err := storage.CreateOAuth2Client(context.Background(), s.DB, storage.OAuth2ClientOwner{OrganizationID: &org.ID}, w); err != nil {
		tb.Fatalf("creating client: %v", err)
	}
	return id, secret
}

// authorizeKinds names the fields of an outcome that are set; exactly one must be.
func authorizeKinds(out resolvers.AuthorizeOutcome) []string {
	var set []string
	for name, isSet := range map[string]bool{"Consent": out.Consent != nil, "Redirect": out.Redirect != "",
		"Error": out.Error != nil, "NotPermitted": out.NotPermitted, "LoginRequired": out.LoginRequired} {
		if isSet {
			set = append(set, name)
		}
	}
	return set
}

func TestOAuth2AuthorizeOutcomes(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	conf, _ := endpointClient(t, s, "client_secret_post", "openid email")
	anonymous := context.Background()
	user := auth.WithPrincipal(anonymous, auth.Principal{Kind: auth.KindUser, UserID: uuid.New()})
	request := func(extra resolvers.AuthorizeRequest) resolvers.AuthorizeRequest {
		extra.ResponseType, extra.State = "code", "xyz"
		if extra.ClientID == "" {
			extra.ClientID = conf
		}
		return extra
	}
	redirect := func(query string) string {
		return endpointRedirectURI + "?" + query + "&iss=" + url.QueryEscape(resolverstest.PortalURL) + "&state=xyz"
	}
	for _, tt := range []struct {
		name     string
		ctx      context.Context
		req      resolvers.AuthorizeRequest
		kind     string
		check    func(t *testing.T, out resolvers.AuthorizeOutcome)
		redirect string
	}{
		{name: "shows the consent screen to an anonymous caller", ctx: anonymous, req: request(resolvers.AuthorizeRequest{}),
			kind: "Consent", check: func(t *testing.T, out resolvers.AuthorizeOutcome) {
				c := out.Consent
				if c.Client.ClientID != conf || c.SubType != "user" || c.Sub != nil || len(c.Organizations) != 0 ||
					c.RequiresSingleOrganization || strings.Join(scopeNames(c.Scopes), " ") != "openid email" {
					t.Errorf("consent = %+v", c)
				}
				if len(c.ScopeDisplayNames) != len(auth.AllScopes()) || c.ScopeDisplayNames[auth.ScopeEmail] != "Read your email address" {
					t.Errorf("scope display names = %v", c.ScopeDisplayNames)
				}
			}},
		{name: "shows the consent screen for prompt=consent", ctx: anonymous, req: request(resolvers.AuthorizeRequest{Prompt: "consent"}),
			kind: "Consent"},
		{name: "asks for a single organization for an organization subject, as sub_type organization", ctx: anonymous,
			req: request(resolvers.AuthorizeRequest{SubType: "organization"}), kind: "Consent",
			check: func(t *testing.T, out resolvers.AuthorizeOutcome) {
				if !out.Consent.RequiresSingleOrganization || out.Consent.SubType != "organization" || out.Consent.Sub != nil {
					t.Errorf("consent = %+v", out.Consent)
				}
			}},
		{name: "sends prompt=none back to the client with login_required", ctx: anonymous,
			req: request(resolvers.AuthorizeRequest{Prompt: "none"}), kind: "Redirect", redirect: redirect("error=login_required")},
		{name: "sends prompt=none with a refused request back with the refusal, not login_required", ctx: anonymous,
			req: request(resolvers.AuthorizeRequest{Prompt: "none", Scope: "webhooks:write"}), kind: "Redirect",
			redirect: redirect("error=invalid_scope")},
		{name: "refuses prompt=login, since there is no session to sign in to again", ctx: anonymous,
			req: request(resolvers.AuthorizeRequest{Prompt: "login"}), kind: "LoginRequired"},
		{name: "sends an invalid prompt back as invalid_request", ctx: anonymous, req: request(resolvers.AuthorizeRequest{Prompt: "bogus"}),
			kind: "Redirect", redirect: redirect("error=invalid_request&error_description=" + url.QueryEscape(`Invalid "prompt" parameter`))},
		{name: "refuses a caller with a bearer token", ctx: user, req: request(resolvers.AuthorizeRequest{}), kind: "NotPermitted"},
		{name: "refuses a bearer token before reading a malformed query", ctx: user, req: resolvers.AuthorizeRequest{Malformed: true},
			kind: "NotPermitted"},
		{name: "shows a malformed query as invalid_request", ctx: anonymous, req: resolvers.AuthorizeRequest{Malformed: true},
			kind: "Error", check: wantAuthorizeError(http.StatusBadRequest, "invalid_request", "")},
		{name: "shows an unknown client to the user", ctx: anonymous, req: request(resolvers.AuthorizeRequest{ClientID: "till_ci_unknown"}),
			kind: "Error", check: wantAuthorizeError(http.StatusBadRequest, "invalid_client", "")},
		{name: "shows an unregistered redirect URI to the user", ctx: anonymous,
			req: request(resolvers.AuthorizeRequest{RedirectURI: "https://evil.example/"}), kind: "Error",
			check: wantAuthorizeError(http.StatusBadRequest, "invalid_request", "Redirect URI https://evil.example/ is not supported by client.")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := s.Resolver.OAuth2Authorize(tt.ctx, tt.req)
			if kinds := authorizeKinds(out); len(kinds) != 1 || kinds[0] != tt.kind {
				t.Fatalf("outcome sets %v, want %s alone: %+v", kinds, tt.kind, out)
			}
			if tt.redirect != "" && out.Redirect != tt.redirect {
				t.Errorf("redirect = %s, want %s", out.Redirect, tt.redirect)
			}
			if tt.check != nil {
				tt.check(t, out)
			}
		})
	}
}

func wantAuthorizeError(status int, code, description string) func(*testing.T, resolvers.AuthorizeOutcome) {
	return func(t *testing.T, out resolvers.AuthorizeOutcome) {
		t.Helper()
		if e := out.Error; e.Status != status || e.Code != code || e.Description != description || e.Redirect != "" || len(e.Header) != 0 {
			t.Errorf("error = %+v, want %d %s %q", e, status, code, description)
		}
	}
}

func scopeNames(scopes []auth.Scope) []string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = string(s)
	}
	return out
}
