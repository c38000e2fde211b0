package rest_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/internal/auth"
)

const webhooksQuery = `{ webhookEndpoints { pagination { totalCount } } }`

func TestOAuth2CodeFlowIssuesWorkingTokens(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	for _, tt := range []struct {
		name, method, challengeMethod string
	}{
		{"a confidential client posting its secret, with PKCE S256", "client_secret_post", "S256"},
		{"a confidential client using HTTP Basic, with PKCE plain", "client_secret_basic", "plain"},
		{"a public client, with PKCE S256", "none", "S256"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := f.client(t, tt.method, "openid email webhooks:read")
			verifier, challenge := pkce()
			if tt.challengeMethod == "plain" {
				challenge = verifier
			}
			rec := f.s.do(t, call{target: "/v1/oauth2/authorize?response_type=code&client_id=" + c.ID +
				"&scope=openid+webhooks:read&state=s1&code_challenge=" + challenge + "&code_challenge_method=" + tt.challengeMethod})
			if rec.Code != http.StatusOK {
				t.Fatalf("authorize: %d %s", rec.Code, rec.Body)
			}
			code, redirect := f.consent(t, map[string]any{"clientId": c.ID, "scope": "openid webhooks:read",
				"state": "s1", "nonce": "n1", "codeChallenge": challenge, "codeChallengeMethod": tt.challengeMethod})
			q := redirect.Query()
			if redirect.Scheme+"://"+redirect.Host+redirect.Path != redirectURI || q.Get("code") != code ||
				q.Get("state") != "s1" || q.Get("iss") != portalURL {
				t.Errorf("redirect = %s, want %s with code, state s1 and iss", redirect, redirectURI)
			}
			form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI},
				"code_verifier": {verifier}}
			rec = f.post(t, "/v1/oauth2/token", c, form)
			want{status: http.StatusOK, headers: map[string]string{"Cache-Control": "no-store", "Pragma": "no-cache"}}.check(t, rec)
			var tok tokenBody
			decodeJSON(t, rec.Body.Bytes(), &tok)
			if !strings.HasPrefix(tok.AccessToken, auth.PrefixOAuthUserAccessToken) ||
				!strings.HasPrefix(tok.RefreshToken, auth.PrefixOAuthUserRefreshToken) || tok.TokenType != "Bearer" ||
				tok.ExpiresIn != 864000 || tok.Scope != "openid webhooks:read" || tok.IDToken == "" {
				t.Errorf("token response = %+v", tok)
			}
			var stored, plain int
			_ = f.s.DB.Get(&stored, `SELECT count(*) FROM oauth2_tokens WHERE access_token = $1 AND refresh_token = $2`,
				auth.Hash(f.s.Secret, tok.AccessToken), auth.Hash(f.s.Secret, tok.RefreshToken))
			_ = f.s.DB.Get(&plain, `SELECT count(*) FROM oauth2_tokens WHERE access_token = $1`, tok.AccessToken)
			if stored != 1 || plain != 0 {
				t.Errorf("tokens stored as hashes: %d rows, as plaintext: %d", stored, plain)
			}
			want{status: http.StatusOK}.check(t, f.s.do(t, call{target: "/v1/webhooks/endpoints", token: tok.AccessToken}))
			out := f.graphql(t, tok.AccessToken, webhooksQuery, nil)
			if out["errors"] != nil {
				t.Errorf("/graphql with the access token: %v", out)
			}
		})
	}
}

func TestOAuth2AuthorizeAnswersConsentDataOrErrors(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	conf := f.client(t, "client_secret_post", "openid email")
	public := f.client(t, "none", "openid")
	base := "/v1/oauth2/authorize?response_type=code&state=xyz&client_id="
	for _, tt := range []struct {
		name, target, token string
		want                want
		location            string // expected error in the redirect
	}{
		{name: "answers the consent data to an anonymous caller", target: base + conf.ID + "&sub_type=organization",
			want: want{status: 200, has: []string{`"sub_type":"organization"`, `"sub":null`, `"organizations":[]`,
				`"requires_single_organization":true`, `"scopes":["openid","email"]`, `"client_id":"` + conf.ID + `"`,
				`"email":"Read your email address"`}}},
		{name: "refuses any bearer token", target: base + conf.ID, token: "pat",
			want: want{status: 403, body: `{"error":"NotPermitted","detail":"Not permitted"}`}},
		{name: "shows an unknown client", target: base + "till_ci_unknown",
			want: want{status: 400, body: `{"error":"invalid_client"}`}},
		{name: "shows an unregistered redirect URI", target: base + conf.ID + "&redirect_uri=https://evil.example/",
			want: want{status: 400, error: "invalid_request"}},
		{name: "redirects an unsupported response type", target: strings.Replace(base, "code", "token", 1) + conf.ID,
			want: want{status: 302}, location: "unsupported_response_type"},
		{name: "redirects a scope beyond the client's", target: base + conf.ID + "&scope=openid+webhooks:write",
			want: want{status: 302}, location: "invalid_scope"},
		{name: "redirects an unknown scope", target: base + conf.ID + "&scope=nope",
			want: want{status: 302}, location: "invalid_scope"},
		{name: "redirects a public client without a code challenge", target: base + public.ID,
			want: want{status: 302}, location: "invalid_request"},
		{name: "redirects a public client with PKCE plain", target: base + public.ID + "&code_challenge=" +
			strings.Repeat("a", 43) + "&code_challenge_method=plain", want: want{status: 302}, location: "invalid_request"},
		{name: "redirects a public client whose challenge names no method, which means plain", target: base + public.ID +
			"&code_challenge=" + strings.Repeat("a", 43), want: want{status: 302}, location: "invalid_request"},
		{name: "answers a public client with PKCE S256", target: base + public.ID + "&code_challenge=" +
			strings.Repeat("a", 43) + "&code_challenge_method=S256", want: want{status: 200}},
		{name: "answers a confidential client with PKCE plain", target: base + conf.ID + "&code_challenge=" +
			strings.Repeat("a", 43) + "&code_challenge_method=plain", want: want{status: 200}},
		{name: "redirects an unsupported challenge method", target: base + conf.ID + "&code_challenge=" +
			strings.Repeat("a", 43) + "&code_challenge_method=S512", want: want{status: 302}, location: "invalid_request"},
		{name: "redirects prompt=none with login_required", target: base + conf.ID + "&prompt=none",
			want: want{status: 302}, location: "login_required"},
		{name: "answers prompt=login with 401", target: base + conf.ID + "&prompt=login",
			want: want{status: 401, body: `{"detail":"Unauthorized"}`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			token := ""
			if tt.token == "pat" {
				token = f.pat
			}
			rec := f.s.do(t, call{target: tt.target, token: token})
			tt.want.check(t, rec)
			if tt.location == "" {
				return
			}
			loc, err := url.Parse(rec.Header().Get("Location"))
			if err != nil || !strings.HasPrefix(loc.String(), redirectURI+"?") || loc.Query().Get("error") != tt.location ||
				loc.Query().Get("state") != "xyz" {
				t.Errorf("Location = %s, want %s?error=%s&state=xyz", loc, redirectURI, tt.location)
			}
		})
	}
}

func TestOAuth2ConsentMutationChecksTheUser(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	c := f.client(t, "client_secret_post", "openid")
	public := f.client(t, "none", "openid")
	stranger := f.s.NewOrg(t, "webhooks:read")
	for _, tt := range []struct {
		name         string
		token        string
		input        map[string]any
		code, reason string
	}{
		{"refuses an organization token", f.orgA.Token, map[string]any{"clientId": c.ID}, "FORBIDDEN", "Unauthorized"},
		{"refuses an unknown client", f.pat, map[string]any{"clientId": "till_ci_x"}, "BAD_USER_INPUT", "BadRequest"},
		{"refuses a scope beyond the client's", f.pat, map[string]any{"clientId": c.ID, "scope": "email"}, "BAD_USER_INPUT", "BadRequest"},
		{"refuses PKCE plain from a public client", f.pat, map[string]any{"clientId": public.ID,
			"codeChallenge": strings.Repeat("a", 43), "codeChallengeMethod": "plain"}, "BAD_USER_INPUT", "BadRequest"},
		{"refuses an organization the user is not in", f.pat,
			map[string]any{"clientId": c.ID, "subType": "organization", "organizationId": stranger.ID.String()},
			"BAD_USER_INPUT", "PolarRequestValidationError"},
		{"requires the organization of an organization subject", f.pat,
			map[string]any{"clientId": c.ID, "subType": "organization"}, "BAD_USER_INPUT", "PolarRequestValidationError"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := f.graphql(t, tt.token, consentMutation, map[string]any{"input": tt.input})
			errs, _ := out["errors"].([]any)
			if len(errs) == 0 {
				t.Fatalf("consent succeeded: %v", out)
			}
			ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
			if ext["code"] != tt.code || ext["reason"] != tt.reason {
				t.Errorf("error = %v (%v), want %s (%s): %v", ext["code"], ext["reason"], tt.code, tt.reason, errs[0])
			}
		})
	}
	t.Run("denial redirects with access_denied", func(t *testing.T) {
		out := f.graphql(t, f.pat, `mutation($input: AuthorizeOAuth2Input!) { denyOAuth2(input: $input) { redirectUrl code } }`,
			map[string]any{"input": map[string]any{"clientId": c.ID, "state": "st"}})
		payload, _ := out["data"].(map[string]any)["denyOAuth2"].(map[string]any)
		u, _ := url.Parse(payload["redirectUrl"].(string))
		if u.Query().Get("error") != "access_denied" || u.Query().Get("state") != "st" || payload["code"] != nil {
			t.Errorf("deny = %v", payload)
		}
	})
}

func TestOAuth2OrganizationSubjectGetsAnOrganizationToken(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	c := f.client(t, "client_secret_post", "openid webhooks:read")
	tok := f.flow(t, c, map[string]any{"subType": "organization", "organizationId": f.orgA.ID.String(), "scope": "webhooks:read"})
	if !strings.HasPrefix(tok.AccessToken, auth.PrefixOAuthOrganizationAccessToken) ||
		!strings.HasPrefix(tok.RefreshToken, auth.PrefixOAuthOrganizationRefreshToken) || tok.IDToken != "" {
		t.Errorf("tokens = %+v, want organization tokens and no id token without openid", tok)
	}
	p, err := f.s.Resolver.ResolveToken(context.Background(), auth.TokenOAuthAccess, auth.Hash(f.s.Secret, tok.AccessToken))
	if err != nil || p.Kind != auth.KindOrganization || p.OrganizationID != f.orgA.ID || !p.Scopes.Has(auth.ScopeWebhooksRead) {
		t.Errorf("principal = %+v, %v; want organization %s with webhooks:read", p, err, f.orgA.ID)
	}
	down := f.flow(t, c, map[string]any{"organizationId": f.orgB.ID.String(), "scope": "webhooks:read"})
	p, err = f.s.Resolver.ResolveToken(context.Background(), auth.TokenOAuthAccess, auth.Hash(f.s.Secret, down.AccessToken))
	if err != nil || p.Kind != auth.KindUser || p.UserID != f.user || !cmp.Equal(p.Organizations, []uuid.UUID{f.orgB.ID}) {
		t.Errorf("down-scoped principal = %+v, %v; want the user in %s only", p, err, f.orgB.ID)
	}
}

func TestOAuth2ConcurrentExchangesOfOneCodeHaveOneWinner(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	c := f.client(t, "client_secret_post", "webhooks:read")
	verifier, challenge := pkce()
	code, _ := f.consent(t, map[string]any{"clientId": c.ID, "codeChallenge": challenge, "codeChallengeMethod": "S256"})
	const n = 12
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			statuses[i] = f.post(t, "/v1/oauth2/token", c, url.Values{"grant_type": {"authorization_code"},
				"code": {code}, "redirect_uri": {redirectURI}, "code_verifier": {verifier}}).Code
		})
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		switch s {
		case http.StatusOK:
			ok++
		case http.StatusBadRequest:
		default:
			t.Errorf("status %d, want 200 or 400", s)
		}
	}
	if ok != 1 {
		t.Errorf("%d exchanges succeeded, want exactly 1 (%v)", ok, statuses)
	}
}
