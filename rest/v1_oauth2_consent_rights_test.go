package rest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/resolvers/resolverstest"
	"till/storage"
)

// consentRightsFixture is the attack of issue 15 set up as found: a user who owns orgA, a
// plain member of orgB and an admin of orgC, whose personal access token holds only
// user:read, and a public client of another organization allowed every scope.
type consentRightsFixture struct {
	*oauthFixture
	orgC   org
	client oauthClient
	// every is every scope, space-separated: what the client may request.
	every string
}

const consentRightsPATScope = "user:read"

func newConsentRightsFixture(t *testing.T) *consentRightsFixture {
	t.Helper()
	s := newV1(t)
	f := &consentRightsFixture{oauthFixture: s.oauthUser(t, s.NewOrg(t, "webhooks:read"), s.NewOrg(t, "webhooks:read")),
		orgC: s.NewOrg(t, "webhooks:read")}
	// A second owner of each organization, so that the user's role may change and the user
	// may leave: an organization keeps an owner.
	s.NewUser(t, resolverstest.UserSpec{Orgs: []uuid.UUID{f.orgA.ID, f.orgB.ID, f.orgC.ID}})
	s.Exec(t, `UPDATE user_organizations SET role = 'member' WHERE user_id = $1 AND organization_id = $2`, f.user, f.orgB.ID)
	s.Exec(t, `INSERT INTO user_organizations (user_id, organization_id, role) VALUES ($1, $2, 'admin')`, f.user, f.orgC.ID)
	s.Exec(t, `UPDATE personal_access_tokens SET scope = $2 WHERE user_id = $1`, f.user, consentRightsPATScope)

	foreign := s.NewOrg(t, "webhooks:read")
	all := make([]string, 0, len(auth.AllScopes()))
	for _, sc := range auth.AllScopes() {
		all = append(all, string(sc))
	}
	f.every = strings.Join(all, " ")
	f.client = oauthClient{ID: auth.Generate(auth.PrefixClientID), Method: "none"}
	_, err := storage.CreateOAuth2Client(context.Background(), s.DB, storage.OAuth2ClientOwner{OrganizationID: &foreign.ID},
		storage.OAuth2ClientWrite{ClientID: f.client.ID, ClientName: "Foreign app", RedirectURIs: []string{redirectURI},
			Scope: f.every, TokenEndpointAuthMethod: "none", GrantTypes: []string{"authorization_code", "refresh_token"},
			ResponseTypes: []string{"code"}, DefaultSubType: "user"})
	if err != nil {
		t.Fatalf("creating client: %v", err)
	}
	return f
}

// tryConsent runs the consent mutation with an S256 challenge and returns the code and
// verifier, or the first error's extensions.code and message.
// tryConsent returns the authorization code, or the refusal as "CODE reason" and its message.
func (f *consentRightsFixture) tryConsent(t *testing.T, input map[string]any) (code, verifier, errCode, errMsg string) {
	t.Helper()
	verifier, challenge := pkce()
	in := map[string]any{"clientId": f.client.ID, "codeChallenge": challenge, "codeChallengeMethod": "S256"}
	for k, v := range input {
		in[k] = v
	}
	out := f.graphql(t, f.pat, consentMutation, map[string]any{"input": in})
	if errs, _ := out["errors"].([]any); len(errs) > 0 {
		e, _ := errs[0].(map[string]any)
		ext, _ := e["extensions"].(map[string]any)
		code, _ := ext["code"].(string)
		reason, _ := ext["reason"].(string)
		msg, _ := e["message"].(string)
		return "", "", code + " " + reason, msg
	}
	payload, _ := out["data"].(map[string]any)["authorizeOAuth2"].(map[string]any)
	return payload["code"].(string), verifier, "", ""
}

// exchangeCode posts the code to the token endpoint and returns the recorder.
func (f *consentRightsFixture) exchangeCode(t *testing.T, code, verifier string) *httptest.ResponseRecorder {
	t.Helper()
	return f.post(t, "/v1/oauth2/token", f.client, url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {redirectURI}, "code_verifier": {verifier}})
}

// checkHeldScopes fails unless every scope of the issued token, as the token endpoint
// answers it and as a request with it resolves, is one the personal access token holds.
func (f *consentRightsFixture) checkHeldScopes(t *testing.T, tok tokenBody, prefix string) {
	t.Helper()
	if !strings.HasPrefix(tok.AccessToken, prefix) {
		t.Errorf("access token %q, want prefix %s", tok.AccessToken, prefix)
	}
	held, _ := auth.ParseScopes(consentRightsPATScope)
	issued, err := auth.ParseScopes(tok.Scope)
	if err != nil {
		t.Fatalf("issued scope %q: %v", tok.Scope, err)
	}
	p, err := f.s.Resolver.ResolveToken(context.Background(), auth.TokenOAuthAccess, auth.Hash(f.s.Secret, tok.AccessToken))
	if err != nil {
		t.Fatalf("resolving the access token: %v", err)
	}
	for _, set := range []auth.ScopeSet{issued, p.Scopes} {
		for sc := range set {
			if !held.Has(sc) {
				t.Errorf("the token holds %s, which the consenting token (%s) does not; issued %q", sc, consentRightsPATScope, tok.Scope)
			}
		}
	}
}

func TestOAuth2ConsentGrantsNoScopeTheConsentingTokenLacks(t *testing.T) {
	t.Parallel()
	f := newConsentRightsFixture(t)
	every := f.every
	for _, tt := range []struct {
		name            string
		input           map[string]any
		prefix, errCode string
	}{
		{name: "an organization subject without a scope gets only the token's scopes",
			input: map[string]any{"subType": "organization", "organizationId": f.orgA.ID.String()}, prefix: auth.PrefixOAuthOrganizationAccessToken},
		{name: "an organization subject asking for every scope is refused",
			input: map[string]any{"subType": "organization", "organizationId": f.orgA.ID.String(), "scope": every}, errCode: "BAD_USER_INPUT BadRequest"},
		{name: "a user subject without a scope gets only the token's scopes",
			input: map[string]any{"subType": "user"}, prefix: auth.PrefixOAuthUserAccessToken},
		{name: "a user subject asking for organizations:write is refused",
			input: map[string]any{"subType": "user", "scope": "user:read organizations:write"}, errCode: "BAD_USER_INPUT BadRequest"},
		{name: "a user subject asking for every scope is refused",
			input: map[string]any{"subType": "user", "scope": every}, errCode: "BAD_USER_INPUT BadRequest"},
		{name: "a request within the token's scopes is granted as asked",
			input: map[string]any{"subType": "user", "scope": "user:read"}, prefix: auth.PrefixOAuthUserAccessToken},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, verifier, errCode, msg := f.tryConsent(t, tt.input)
			if tt.errCode != "" {
				if errCode != tt.errCode || !strings.HasPrefix(msg, "invalid_scope") {
					t.Fatalf("consent = code %q, error %s %q; want %s invalid_scope", code, errCode, msg, tt.errCode)
				}
				return
			}
			if errCode != "" {
				t.Fatalf("consent refused: %s %s", errCode, msg)
			}
			rec := f.exchangeCode(t, code, verifier)
			if rec.Code != http.StatusOK {
				t.Fatalf("exchange: %d %s", rec.Code, rec.Body)
			}
			var tok tokenBody
			decodeJSON(t, rec.Body.Bytes(), &tok)
			f.checkHeldScopes(t, tok, tt.prefix)
		})
	}
}

func TestOAuth2ConsentForAnOrganizationNeedsAnOwnerOrAdmin(t *testing.T) {
	t.Parallel()
	f := newConsentRightsFixture(t)
	for _, tt := range []struct {
		name    string
		input   map[string]any
		errCode string
	}{
		{"an owner may consent for the organization", map[string]any{"subType": "organization", "organizationId": f.orgA.ID.String()}, ""},
		{"an admin may consent for the organization", map[string]any{"subType": "organization", "organizationId": f.orgC.ID.String()}, ""},
		{"a plain member may not hand an application an organization token",
			map[string]any{"subType": "organization", "organizationId": f.orgB.ID.String()}, "FORBIDDEN NotPermitted"},
		{"a plain member may still let an application act as themselves in it",
			map[string]any{"subType": "user", "organizationId": f.orgB.ID.String()}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errCode, msg := f.tryConsent(t, tt.input)
			if errCode != tt.errCode || (tt.errCode == "" && code == "") {
				t.Errorf("consent = code %q, error %s %q; want error %q", code, errCode, msg, tt.errCode)
			}
		})
	}
}

func TestOAuth2TokenEndpointRechecksTheOrganizationConsenter(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		change string // run with $1 = user, $2 = organization once the consent is given
	}{
		{"a user who left the organization", `UPDATE user_organizations SET deleted_at = now() WHERE user_id = $1 AND organization_id = $2`},
		{"a user demoted to plain member", `UPDATE user_organizations SET role = 'member' WHERE user_id = $1 AND organization_id = $2`},
		{"a user whose account was deleted", `UPDATE users SET deleted_at = now() WHERE id = $1 AND $2::uuid IS NOT NULL`},
	} {
		t.Run("the code of "+tt.name+" is refused", func(t *testing.T) {
			t.Parallel()
			f := newConsentRightsFixture(t)
			code, verifier, errCode, msg := f.tryConsent(t, map[string]any{"subType": "organization", "organizationId": f.orgA.ID.String()})
			if errCode != "" {
				t.Fatalf("consent refused: %s %s", errCode, msg)
			}
			f.s.Exec(t, tt.change, f.user, f.orgA.ID)
			want{status: 400, error: "invalid_grant"}.check(t, f.exchangeCode(t, code, verifier))
		})
		t.Run("the refresh token of "+tt.name+" is refused", func(t *testing.T) {
			t.Parallel()
			f := newConsentRightsFixture(t)
			code, verifier, errCode, msg := f.tryConsent(t, map[string]any{"subType": "organization", "organizationId": f.orgA.ID.String()})
			if errCode != "" {
				t.Fatalf("consent refused: %s %s", errCode, msg)
			}
			rec := f.exchangeCode(t, code, verifier)
			if rec.Code != http.StatusOK {
				t.Fatalf("exchange: %d %s", rec.Code, rec.Body)
			}
			var tok tokenBody
			decodeJSON(t, rec.Body.Bytes(), &tok)
			f.s.Exec(t, tt.change, f.user, f.orgA.ID)
			refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}
			want{status: 400, error: "invalid_grant"}.check(t, f.post(t, "/v1/oauth2/token", f.client, refresh))
		})
	}
	for _, tt := range []struct{ name, change string }{
		{"a user who left the organization", `UPDATE user_organizations SET deleted_at = now() WHERE user_id = $1 AND organization_id = $2`},
		{"a user demoted to plain member", `UPDATE user_organizations SET role = 'member' WHERE user_id = $1 AND organization_id = $2`},
	} {
		t.Run("the access token already issued on the consent of "+tt.name+" stops working", func(t *testing.T) {
			t.Parallel()
			f := newConsentRightsFixture(t)
			code, verifier, _, _ := f.tryConsent(t, map[string]any{"subType": "organization", "organizationId": f.orgA.ID.String()})
			rec := f.exchangeCode(t, code, verifier)
			var tok tokenBody
			decodeJSON(t, rec.Body.Bytes(), &tok)
			const query = `{ webhookEndpoints { pagination { totalCount } } }`
			if out := f.graphql(t, tok.AccessToken, query, nil); out["status"] != http.StatusOK {
				t.Fatalf("the fresh token answered %v", out)
			}
			f.s.Exec(t, tt.change, f.user, f.orgA.ID)
			if out := f.graphql(t, tok.AccessToken, query, nil); out["status"] != http.StatusUnauthorized {
				t.Errorf("after the change the token answered %v, want 401", out)
			}
		})
	}
	t.Run("the refresh token of a consenter who still manages the organization works", func(t *testing.T) {
		t.Parallel()
		f := newConsentRightsFixture(t)
		code, verifier, _, _ := f.tryConsent(t, map[string]any{"subType": "organization", "organizationId": f.orgC.ID.String()})
		rec := f.exchangeCode(t, code, verifier)
		var tok tokenBody
		decodeJSON(t, rec.Body.Bytes(), &tok)
		refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}
		rec = f.post(t, "/v1/oauth2/token", f.client, refresh)
		want{status: 200}.check(t, rec)
		decodeJSON(t, rec.Body.Bytes(), &tok)
		f.checkHeldScopes(t, tok, auth.PrefixOAuthOrganizationAccessToken)
	})
}
