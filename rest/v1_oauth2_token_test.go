package rest_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"till/internal/auth"
)

func TestOAuth2TokenErrors(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	post := f.client(t, "client_secret_post", "openid")
	basic := f.client(t, "client_secret_basic", "openid")
	codeOnly := f.client(t, "client_secret_post", "openid", "authorization_code")
	noStore := map[string]string{"Cache-Control": "no-store", "Pragma": "no-cache"}

	// fresh consents a new code for client c with an S256 challenge.
	fresh := func(t *testing.T, c oauthClient) (code, verifier string) {
		verifier, challenge := pkce()
		code, _ = f.consent(t, map[string]any{"clientId": c.ID, "codeChallenge": challenge, "codeChallengeMethod": "S256"})
		return code, verifier
	}
	exchange := func(code, verifier string) url.Values {
		return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI},
			"code_verifier": {verifier}}
	}
	for _, tt := range []struct {
		name   string
		client oauthClient
		form   func(t *testing.T) url.Values
		want   want
	}{
		{"an unknown grant type is unsupported_grant_type", post,
			func(*testing.T) url.Values { return url.Values{"grant_type": {"password"}} },
			want{status: 400, body: `{"error":"unsupported_grant_type","error_description":"grant_type \"password\" is not supported"}`, headers: noStore}},
		{"a missing grant type is invalid_request", post, func(*testing.T) url.Values { return url.Values{} },
			want{status: 400, error: "invalid_request"}},
		{"no client is invalid_client", oauthClient{},
			func(*testing.T) url.Values { return url.Values{"grant_type": {"authorization_code"}} },
			want{status: 401, body: `{"error":"invalid_client"}`, headers: map[string]string{"WWW-Authenticate": ""}}},
		{"a wrong Basic secret is invalid_client with a Basic challenge",
			oauthClient{ID: basic.ID, Secret: "wrong", Method: "client_secret_basic"},
			func(*testing.T) url.Values { return url.Values{"grant_type": {"authorization_code"}} },
			want{status: 401, error: "invalid_client", headers: map[string]string{"WWW-Authenticate": `Basic error="invalid_client"`}}},
		{"a wrong posted secret is invalid_client", oauthClient{ID: post.ID, Secret: "wrong", Method: "client_secret_post"},
			func(*testing.T) url.Values { return url.Values{"grant_type": {"authorization_code"}} },
			want{status: 401, error: "invalid_client", headers: map[string]string{"WWW-Authenticate": ""}}},
		{"a Basic client posting its secret is invalid_client", oauthClient{ID: basic.ID, Secret: basic.Secret, Method: "client_secret_post"},
			func(*testing.T) url.Values { return url.Values{"grant_type": {"authorization_code"}} },
			want{status: 401, error: "invalid_client"}},
		{"a confidential client without its secret is invalid_client", oauthClient{ID: post.ID, Method: "none"},
			func(*testing.T) url.Values { return url.Values{"grant_type": {"authorization_code"}} },
			want{status: 401, error: "invalid_client"}},
		{"a grant the client may not use is unauthorized_client", codeOnly,
			func(*testing.T) url.Values {
				return url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}}
			},
			want{status: 400, error: "unauthorized_client"}},
		{"a missing code is invalid_request", post,
			func(*testing.T) url.Values { return url.Values{"grant_type": {"authorization_code"}} },
			want{status: 400, error: "invalid_request"}},
		{"an unknown code is invalid_grant", post,
			func(*testing.T) url.Values { return exchange(auth.Generate(auth.PrefixAuthorizationCode), "") },
			want{status: 400, body: `{"error":"invalid_grant","error_description":"Invalid \"code\" in request."}`, headers: noStore}},
		{"another client's code is invalid_grant", basic,
			func(t *testing.T) url.Values { return exchange(fresh(t, post)) },
			want{status: 400, error: "invalid_grant"}},
		{"another redirect URI is invalid_grant", post, func(t *testing.T) url.Values {
			form := exchange(fresh(t, post))
			form.Set("redirect_uri", "https://app.example/other")
			return form
		}, want{status: 400, error: "invalid_grant"}},
		{"a missing verifier is invalid_request", post, func(t *testing.T) url.Values {
			code, _ := fresh(t, post)
			return exchange(code, "")
		}, want{status: 400, body: `{"error":"invalid_request","error_description":"Missing \"code_verifier\""}`}},
		{"a malformed verifier is invalid_request", post, func(t *testing.T) url.Values {
			code, _ := fresh(t, post)
			return exchange(code, "short")
		}, want{status: 400, error: "invalid_request"}},
		{"a wrong verifier is invalid_grant", post, func(t *testing.T) url.Values {
			code, _ := fresh(t, post)
			other, _ := pkce()
			return exchange(code, other)
		}, want{status: 400, body: `{"error":"invalid_grant","error_description":"Code challenge failed."}`}},
		{"an expired code is invalid_grant", post, func(t *testing.T) url.Values {
			code, verifier := fresh(t, post)
			f.s.Exec(t, `UPDATE oauth2_authorization_codes SET expires_at = now() - interval '1 second' WHERE code = $1`,
				auth.Hash(f.s.Secret, code))
			return exchange(code, verifier)
		}, want{status: 400, error: "invalid_grant"}},
		{"a missing refresh token is invalid_request", post,
			func(*testing.T) url.Values { return url.Values{"grant_type": {"refresh_token"}} },
			want{status: 400, error: "invalid_request"}},
		{"an unknown refresh token is invalid_grant", post, func(*testing.T) url.Values {
			return url.Values{"grant_type": {"refresh_token"}, "refresh_token": {auth.Generate(auth.PrefixOAuthUserRefreshToken)}}
		}, want{status: 400, error: "invalid_grant"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.check(t, f.post(t, "/v1/oauth2/token", tt.client, tt.form(t)))
		})
	}
}

func TestOAuth2FailedChecksLeaveTheCodeUsable(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	c := f.client(t, "client_secret_post", "webhooks:read")
	verifier, challenge := pkce()
	code, _ := f.consent(t, map[string]any{"clientId": c.ID, "codeChallenge": challenge, "codeChallengeMethod": "S256"})
	bad := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI}}
	want{status: 400, error: "invalid_request"}.check(t, f.post(t, "/v1/oauth2/token", c, bad))
	f.exchange(t, c, code, verifier)
}

func TestOAuth2CodeReplayRevokesItsTokens(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	c := f.client(t, "client_secret_post", "webhooks:read")
	verifier, challenge := pkce()
	code, _ := f.consent(t, map[string]any{"clientId": c.ID, "codeChallenge": challenge, "codeChallengeMethod": "S256"})
	first := f.exchange(t, c, code, verifier)
	refreshed := f.refresh(t, c, first.RefreshToken, "")
	want{status: 200}.check(t, f.s.do(t, call{target: "/v1/webhooks/endpoints", token: refreshed.AccessToken}))

	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI}, "code_verifier": {verifier}}
	want{status: 400, error: "invalid_grant"}.check(t, f.post(t, "/v1/oauth2/token", c, form))
	for _, tok := range []string{first.AccessToken, refreshed.AccessToken} {
		want{status: 401, error: "invalid_token"}.check(t, f.s.do(t, call{target: "/v1/webhooks/endpoints", token: tok}))
	}
}

// refresh runs the refresh grant and fails the test unless it succeeds.
func (f *oauthFixture) refresh(t *testing.T, c oauthClient, refreshToken, scope string) tokenBody {
	t.Helper()
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken}}
	if scope != "" {
		form.Set("scope", scope)
	}
	rec := f.post(t, "/v1/oauth2/token", c, form)
	if rec.Code != http.StatusOK {
		t.Fatalf("refresh: %d %s", rec.Code, rec.Body)
	}
	var out tokenBody
	decodeJSON(t, rec.Body.Bytes(), &out)
	return out
}

func TestOAuth2RefreshRotatesThePair(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	for _, method := range []string{"client_secret_post", "none"} {
		t.Run("for a "+method+" client", func(t *testing.T) {
			c := f.client(t, method, "openid webhooks:read")
			first := f.flow(t, c, map[string]any{"scope": "openid webhooks:read"})
			second := f.refresh(t, c, first.RefreshToken, "")
			if second.ExpiresIn != 3600 || second.Scope != "openid webhooks:read" || second.IDToken != "" ||
				second.RefreshToken == "" || second.RefreshToken == first.RefreshToken {
				t.Errorf("refresh response = %+v, want a new pair for 3600 s without id token", second)
			}
			want{status: 401, error: "invalid_token"}.check(t, f.s.do(t, call{target: "/v1/webhooks/endpoints", token: first.AccessToken}))
			if out := f.graphql(t, second.AccessToken, webhooksQuery, nil); out["errors"] != nil {
				t.Errorf("the new access token on /graphql: %v", out)
			}
			replay := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.RefreshToken}}
			want{status: 400, error: "invalid_grant"}.check(t, f.post(t, "/v1/oauth2/token", c, replay))

			broader := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {second.RefreshToken}, "scope": {"openid email"}}
			want{status: 400, body: `{"error":"invalid_scope"}`}.check(t, f.post(t, "/v1/oauth2/token", c, broader))
			narrow := f.refresh(t, c, second.RefreshToken, "webhooks:read")
			if narrow.Scope != "webhooks:read" {
				t.Errorf("narrowed scope = %q", narrow.Scope)
			}
		})
	}
	t.Run("refuses another client's refresh token", func(t *testing.T) {
		a, b := f.client(t, "client_secret_post", "webhooks:read"), f.client(t, "client_secret_post", "webhooks:read")
		tok := f.flow(t, a, nil)
		foreign := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}
		want{status: 400, error: "invalid_grant"}.check(t, f.post(t, "/v1/oauth2/token", b, foreign))
		f.refresh(t, a, tok.RefreshToken, "")
	})
	t.Run("issues no refresh token to a client without the refresh grant", func(t *testing.T) {
		c := f.client(t, "client_secret_post", "webhooks:read", "authorization_code")
		tok := f.flow(t, c, nil)
		if tok.RefreshToken != "" || strings.Contains(tok.AccessToken, "_rt_") {
			t.Errorf("tokens = %+v, want no refresh token", tok)
		}
	})
}
