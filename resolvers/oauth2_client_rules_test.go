package resolvers_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

func TestOAuth2ClientValidation(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, "organizations:write")
	existing := createOAuth2Client(t, s, org.Token, oauth2ClientInput(nil))
	valueErr := func(msg string, input any, loc ...any) fieldErr {
		return fieldErr{Type: "value_error", Loc: append([]any{"input"}, loc...), Msg: "Value error, " + msg, Input: input}
	}
	scheme := func(input string, i int) fieldErr {
		return fieldErr{Type: "url_scheme", Loc: []any{"input", "redirectUris", i},
			Msg: "URL scheme should be 'https', or 'http' for a loopback host", Input: input}
	}
	literal := func(input string, loc ...any) fieldErr {
		return fieldErr{Type: "literal_error", Loc: append([]any{"input"}, loc...),
			Msg: "Input should be 'client_secret_basic', 'client_secret_post' or 'none'", Input: input}
	}
	tooManyURIs := make([]any, 21)
	for i := range tooManyURIs {
		tooManyURIs[i] = "https://app.example/cb"
	}
	tests := []struct {
		name  string
		input vars
		want  []fieldErr
	}{
		{"a blank name is refused", vars{"clientName": "  "}, []fieldErr{{Type: "string_too_short",
			Loc: []any{"input", "clientName"}, Msg: "String should have at least 1 character", Input: "  "}}},
		{"a name over 255 characters is refused", vars{"clientName": strings.Repeat("é", 256)}, []fieldErr{{Type: "string_too_long",
			Loc: []any{"input", "clientName"}, Msg: "String should have at most 255 characters", Input: strings.Repeat("é", 256)}}},
		{"no redirect URI is refused", vars{"redirectUris": []any{}}, []fieldErr{{Type: "too_short",
			Loc: []any{"input", "redirectUris"}, Msg: "List should have at least 1 item after validation, not 0", Input: []any{}}}},
		{"more than 20 redirect URIs are refused", vars{"redirectUris": tooManyURIs}, []fieldErr{{Type: "too_long",
			Loc: []any{"input", "redirectUris"}, Msg: "List should have at most 20 items after validation, not 21", Input: tooManyURIs}}},
		{"a relative redirect URI is refused", vars{"redirectUris": []any{"/callback"}},
			[]fieldErr{valueErr("redirect URIs must be absolute URLs", "/callback", "redirectUris", 0)}},
		{"a redirect URI with a fragment is refused", vars{"redirectUris": []any{"https://app.example/cb#x"}},
			[]fieldErr{valueErr("redirect URIs must not contain a fragment", "https://app.example/cb#x", "redirectUris", 0)}},
		{"a wildcard redirect URI is refused", vars{"redirectUris": []any{"https://*.app.example/cb"}},
			[]fieldErr{valueErr("redirect URIs must not contain wildcards", "https://*.app.example/cb", "redirectUris", 0)}},
		{"http to a public host is refused", vars{"redirectUris": []any{"https://ok.example/", "http://app.example/cb"}},
			[]fieldErr{scheme("http://app.example/cb", 1)}},
		{"http to a host merely named like loopback is refused", vars{"redirectUris": []any{"http://localhost.evil.example/cb"}},
			[]fieldErr{scheme("http://localhost.evil.example/cb", 0)}},
		{"a custom scheme is refused", vars{"redirectUris": []any{"myapp://callback"}},
			[]fieldErr{scheme("myapp://callback", 0)}},
		{"an empty scope is refused", vars{"scope": " "}, []fieldErr{valueErr("at least one scope is required", " ", "scope")}},
		{"an unknown scope is refused", vars{"scope": "openid orders:delete"},
			[]fieldErr{valueErr("unknown scope 'orders:delete'", "openid orders:delete", "scope")}},
		{"a reserved scope is refused", vars{"scope": "web:write"}, []fieldErr{valueErr("unknown scope 'web:write'", "web:write", "scope")}},
		{"an unknown auth method is refused", vars{"tokenEndpointAuthMethod": "private_key_jwt"},
			[]fieldErr{literal("private_key_jwt", "tokenEndpointAuthMethod")}},
		{"an unknown grant type is refused", vars{"grantTypes": []any{"authorization_code", "client_credentials"}},
			[]fieldErr{{Type: "literal_error", Loc: []any{"input", "grantTypes", 1},
				Msg: "Input should be 'authorization_code' or 'refresh_token'", Input: "client_credentials"}}},
		{"no grant type is refused", vars{"grantTypes": []any{}}, []fieldErr{{Type: "too_short",
			Loc: []any{"input", "grantTypes"}, Msg: "List should have at least 1 item after validation, not 0", Input: []any{}}}},
		{"an unknown response type is refused", vars{"responseTypes": []any{"token"}}, []fieldErr{{Type: "literal_error",
			Loc: []any{"input", "responseTypes", 0}, Msg: "Input should be 'code'", Input: "token"}}},
		{"an unknown subject type is refused", vars{"defaultSubType": "customer"}, []fieldErr{{Type: "enum",
			Loc: []any{"input", "defaultSubType"}, Msg: "Input should be 'user' or 'organization'", Input: "customer"}}},
		{"a relative logo URI is refused", vars{"logoUri": "logo.png"}, []fieldErr{valueErr("must be an absolute URL", "logo.png", "logoUri")}},
		{"a javascript policy URI is refused", vars{"policyUri": "javascript://x.example/%0aalert(1)"}, []fieldErr{{Type: "url_scheme",
			Loc: []any{"input", "policyUri"}, Msg: "URL scheme should be 'http' or 'https'", Input: "javascript://x.example/%0aalert(1)"}}},
		{"every bad field is reported at once", vars{"clientName": "", "tokenEndpointAuthMethod": "jwt"}, []fieldErr{
			{Type: "string_too_short", Loc: []any{"input", "clientName"}, Msg: "String should have at least 1 character", Input: ""},
			literal("jwt", "tokenEndpointAuthMethod")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Run("at creation", func(t *testing.T) {
				got := s.QueryError(t, org.Token, createOAuth2ClientDoc, vars{"input": oauth2ClientInput(tc.input)})
				wantError(t, got, "BAD_USER_INPUT", "RequestValidationError", tc.want...)
			})
			t.Run("at update", func(t *testing.T) {
				got := s.QueryError(t, org.Token, updateOAuth2ClientDoc, vars{"clientId": existing.Client.ClientID, "input": tc.input})
				wantError(t, got, "BAD_USER_INPUT", "RequestValidationError", tc.want...)
			})
		})
	}

	t.Run("loopback http, https and defaults are accepted", func(t *testing.T) {
		created := createOAuth2Client(t, s, org.Token, vars{"clientName": "Native", "redirectUris": []any{
			"http://localhost:8080/cb", "http://127.0.0.1/cb", "http://[::1]:9000/cb", "https://app.example/cb?x=1"}})
		c := created.Client
		if len(c.RedirectURIs) != 4 || c.TokenEndpointAuthMethod != "client_secret_post" || created.ClientSecret == nil ||
			!strings.HasPrefix(c.Scope, "openid profile email user:read") || c.DefaultSubType != "user" {
			t.Errorf("created = %+v, want upstream's defaults (every scope, client_secret_post)", created)
		}
	})
}

func TestOAuth2PublicClients(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, "organizations:write")
	public := createOAuth2Client(t, s, org.Token, oauth2ClientInput(vars{"tokenEndpointAuthMethod": "none"}))
	if public.ClientSecret != nil || strings.Join(public.Client.GrantTypes, ",") != "authorization_code,refresh_token" {
		t.Errorf("public client = %+v, want no secret and refresh tokens allowed", public)
	}
	if stored := storedClient(t, s, public.Client.ClientID); stored.ClientSecretHash != nil ||
		s.Resolver.VerifyClientSecret(stored, "") {
		t.Errorf("public client stored with secret hash %v, or verified without a secret", stored.ClientSecretHash)
	}
	wantError(t, s.QueryError(t, org.Token, rotateOAuth2ClientDoc, vars{"clientId": public.Client.ClientID}), "BAD_USER_INPUT", "BadRequest")

	var made struct{ UpdateOAuth2Client oauth2ClientSecret }
	s.Query(t, org.Token, updateOAuth2ClientDoc, vars{"clientId": public.Client.ClientID,
		"input": vars{"tokenEndpointAuthMethod": "client_secret_basic"}}, &made)
	secret := made.UpdateOAuth2Client.ClientSecret
	if secret == nil || !s.Resolver.VerifyClientSecret(storedClient(t, s, public.Client.ClientID), *secret) {
		t.Fatalf("turning confidential gave secret %v, want a working one shown once", secret)
	}
	var again struct{ UpdateOAuth2Client oauth2ClientSecret }
	s.Query(t, org.Token, updateOAuth2ClientDoc, vars{"clientId": public.Client.ClientID,
		"input": vars{"tokenEndpointAuthMethod": "none"}}, &again)
	if again.UpdateOAuth2Client.ClientSecret != nil || storedClient(t, s, public.Client.ClientID).ClientSecretHash != nil {
		t.Error("turning public must drop the secret")
	}
}

func TestOAuth2ClientsBelongToTheirOwner(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, "organizations:write")
	otherOrg := s.NewOrg(t, "organizations:write")
	user := s.NewUser(t, resolverstest.UserSpec{Scope: "organizations:write", Orgs: []uuid.UUID{org.ID}}).Token
	otherUser := s.NewUser(t, resolverstest.UserSpec{Scope: "organizations:write", Orgs: []uuid.UUID{org.ID}}).Token
	reader := s.NewUser(t, resolverstest.UserSpec{Scope: "organizations:read", Orgs: []uuid.UUID{org.ID}}).Token
	unscoped := s.NewUser(t, resolverstest.UserSpec{Scope: "webhooks:write", Orgs: []uuid.UUID{org.ID}}).Token

	userClient := createOAuth2Client(t, s, user, oauth2ClientInput(vars{"clientName": "user app"})).Client
	orgClient := createOAuth2Client(t, s, org.Token, oauth2ClientInput(vars{"clientName": "org app"})).Client

	list := func(token string) []string {
		t.Helper()
		var out struct {
			OAuth2Clients struct{ Items []oauth2Client }
		}
		s.Query(t, token, listOAuth2ClientsDoc, nil, &out)
		names := []string{}
		for _, c := range out.OAuth2Clients.Items {
			names = append(names, c.ClientName)
		}
		return names
	}
	for _, tc := range []struct {
		name, token string
		want        string
	}{
		{"the user sees only the clients it registered", user, "user app"},
		{"the organization sees only its own clients, not its members'", org.Token, "org app"},
		{"another member of the same organization sees none", otherUser, ""},
		{"another organization sees none", otherOrg.Token, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(list(tc.token), ","); got != tc.want {
				t.Errorf("clients = %q, want %q", got, tc.want)
			}
		})
	}

	for _, tc := range []struct {
		name, token, clientID string
	}{
		{"another user", otherUser, userClient.ClientID},
		{"the user's organization", org.Token, userClient.ClientID},
		{"another organization", otherOrg.Token, orgClient.ClientID},
		{"a member of the owning organization", user, orgClient.ClientID},
	} {
		t.Run(tc.name+" can neither see nor change the client", func(t *testing.T) {
			for _, doc := range []string{getOAuth2ClientDoc, rotateOAuth2ClientDoc, deleteOAuth2ClientDoc} {
				wantError(t, s.QueryError(t, tc.token, doc, vars{"clientId": tc.clientID}), "NOT_FOUND", "ResourceNotFound")
			}
			wantError(t, s.QueryError(t, tc.token, updateOAuth2ClientDoc, vars{"clientId": tc.clientID,
				"input": vars{"clientName": "hijacked"}}), "NOT_FOUND", "ResourceNotFound")
		})
	}
	var got struct{ OAuth2Client oauth2Client }
	s.Query(t, user, getOAuth2ClientDoc, vars{"clientId": userClient.ClientID}, &got)
	if got.OAuth2Client.ClientName != "user app" {
		t.Errorf("after the attempts the client is %+v, want it unchanged", got.OAuth2Client)
	}

	t.Run("reading needs organizations:read or write, changing needs write", func(t *testing.T) {
		if names := list(reader); len(names) != 0 {
			t.Errorf("reader's clients = %v", names)
		}
		wantError(t, s.QueryError(t, reader, createOAuth2ClientDoc, vars{"input": oauth2ClientInput(nil)}), "FORBIDDEN", "insufficient_scope")
		wantError(t, s.QueryError(t, unscoped, listOAuth2ClientsDoc, nil), "FORBIDDEN", "insufficient_scope")
		wantError(t, s.QueryError(t, "", listOAuth2ClientsDoc, nil), "UNAUTHENTICATED", "Unauthorized")
	})
}
