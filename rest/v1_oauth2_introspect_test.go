package rest_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"till/internal/auth"
)

func TestOAuth2Introspection(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	c := f.client(t, "client_secret_basic", "openid webhooks:read")
	other := f.client(t, "client_secret_post", "openid webhooks:read")
	public := f.client(t, "none", "openid")
	live := f.flow(t, c, map[string]any{"scope": "webhooks:read", "organizationId": f.orgA.ID.String()})
	revoked := f.flow(t, c, nil)
	f.s.Exec(t, `UPDATE oauth2_tokens SET access_token_revoked_at = now() WHERE access_token = $1`, auth.Hash(f.s.Secret, revoked.AccessToken))
	expired := f.flow(t, c, nil)
	f.s.Exec(t, `UPDATE oauth2_tokens SET issued_at = now() - interval '2 days', expires_at = now() - interval '1 second'
		WHERE access_token = $1`, auth.Hash(f.s.Secret, expired.AccessToken))
	inactive := `{"active":false}`

	for _, tt := range []struct {
		name   string
		client oauthClient
		form   url.Values
		want   want
	}{
		{"a revoked token is inactive", c, url.Values{"token": {revoked.AccessToken}}, want{status: 200, body: inactive}},
		{"an expired token is inactive", c, url.Values{"token": {expired.AccessToken}}, want{status: 200, body: inactive}},
		{"an unknown token is inactive", c, url.Values{"token": {"till_at_u_nope"}}, want{status: 200, body: inactive}},
		{"another client's token is inactive", other, url.Values{"token": {live.AccessToken}}, want{status: 200, body: inactive}},
		{"a refresh token under the access hint is inactive", c,
			url.Values{"token": {live.RefreshToken}, "token_type_hint": {"access_token"}}, want{status: 200, body: inactive}},
		{"a missing token is invalid_request", c, url.Values{}, want{status: 400, error: "invalid_request"}},
		{"an unknown hint is unsupported_token_type", c, url.Values{"token": {live.AccessToken}, "token_type_hint": {"id_token"}},
			want{status: 400, body: `{"error":"unsupported_token_type"}`}},
		{"a public client is invalid_client", public, url.Values{"token": {live.AccessToken}}, want{status: 401, error: "invalid_client"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.check(t, f.post(t, "/v1/oauth2/introspect", tt.client, tt.form))
		})
	}

	for _, tt := range []struct{ name, token, hint string }{
		{"an active access token", live.AccessToken, ""},
		{"its refresh token", live.RefreshToken, "refresh_token"},
	} {
		t.Run(tt.name+" shows the token's data", func(t *testing.T) {
			form := url.Values{"token": {tt.token}}
			if tt.hint != "" {
				form.Set("token_type_hint", tt.hint)
			}
			rec := f.post(t, "/v1/oauth2/introspect", c, form)
			want{status: 200}.check(t, rec)
			got := bodyMap(t, rec)
			exp, iat := got["exp"].(float64), got["iat"].(float64)
			delete(got, "exp")
			delete(got, "iat")
			wantBody := map[string]any{"active": true, "client_id": c.ID, "token_type": "Bearer", "scope": "webhooks:read",
				"sub_type": "user", "sub": f.user.String(), "organizations": []any{f.orgA.ID.String()}, "aud": c.ID, "iss": portalURL}
			if diff := cmp.Diff(wantBody, got); diff != "" {
				t.Errorf("introspection (-want +got):\n%s", diff)
			}
			if exp-iat != 864000 || time.Since(time.Unix(int64(iat), 0)) > time.Minute {
				t.Errorf("iat %v, exp %v; want now and ten days later", iat, exp)
			}
		})
	}
}

func TestOAuth2Revocation(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	c := f.client(t, "client_secret_post", "webhooks:read")
	other := f.client(t, "client_secret_basic", "webhooks:read")
	revokedAt := func(t *testing.T, tok tokenBody) (access, refresh bool) {
		t.Helper()
		var row struct {
			Access  bool `db:"a"`
			Refresh bool `db:"r"`
		}
		if err := f.s.DB.Get(&row, `SELECT access_token_revoked_at IS NOT NULL AS a, refresh_token_revoked_at IS NOT NULL AS r
			FROM oauth2_tokens WHERE access_token = $1`, auth.Hash(f.s.Secret, tok.AccessToken)); err != nil {
			t.Fatal(err)
		}
		return row.Access, row.Refresh
	}
	for _, tt := range []struct {
		name               string
		useRefresh         bool
		hint               string
		access, refreshSet bool
	}{
		{"the access token hint revokes only the access token", false, "access_token", true, false},
		{"the refresh token hint revokes both", true, "refresh_token", true, true},
		{"no hint finds an access token and revokes both", false, "", true, true},
		{"no hint finds a refresh token and revokes both", true, "", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tok := f.flow(t, c, nil)
			form := url.Values{"token": {tok.AccessToken}}
			if tt.useRefresh {
				form.Set("token", tok.RefreshToken)
			}
			if tt.hint != "" {
				form.Set("token_type_hint", tt.hint)
			}
			want{status: 200, body: `{}`, headers: map[string]string{"Cache-Control": "no-store"}}.check(t,
				f.post(t, "/v1/oauth2/revoke", c, form))
			if a, r := revokedAt(t, tok); a != tt.access || r != tt.refreshSet {
				t.Errorf("revoked access=%v refresh=%v, want %v %v", a, r, tt.access, tt.refreshSet)
			}
			want{status: 401, error: "invalid_token"}.check(t, f.s.do(t, call{target: "/v1/webhooks/endpoints", token: tok.AccessToken}))
			again := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}
			want{status: 400, error: "invalid_grant"}.check(t, f.post(t, "/v1/oauth2/token", c, again))
		})
	}
	t.Run("an unknown token is a success", func(t *testing.T) {
		want{status: 200, body: `{}`}.check(t, f.post(t, "/v1/oauth2/revoke", c, url.Values{"token": {"till_at_u_unknown"}}))
	})
	t.Run("another client's token is invalid_grant and stays live", func(t *testing.T) {
		tok := f.flow(t, c, nil)
		want{status: 400, error: "invalid_grant"}.check(t, f.post(t, "/v1/oauth2/revoke", other, url.Values{"token": {tok.AccessToken}}))
		want{status: 200}.check(t, f.s.do(t, call{target: "/v1/webhooks/endpoints", token: tok.AccessToken}))
	})
	t.Run("a missing token is invalid_request", func(t *testing.T) {
		want{status: 400, error: "invalid_request"}.check(t, f.post(t, "/v1/oauth2/revoke", c, url.Values{}))
	})
	t.Run("an unknown hint is unsupported_token_type", func(t *testing.T) {
		want{status: 400, error: "unsupported_token_type"}.check(t,
			f.post(t, "/v1/oauth2/revoke", c, url.Values{"token": {"x"}, "token_type_hint": {"nope"}}))
	})
	t.Run("a wrong secret is invalid_client", func(t *testing.T) {
		bad := oauthClient{ID: c.ID, Secret: "wrong", Method: "client_secret_post"}
		want{status: 401, error: "invalid_client"}.check(t, f.post(t, "/v1/oauth2/revoke", bad, url.Values{"token": {"x"}}))
	})
}

func TestOAuth2UserInfo(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	c := f.client(t, "client_secret_post", "openid email webhooks:read")
	withEmail := f.flow(t, c, map[string]any{"scope": "openid email"})
	withoutEmail := f.flow(t, c, map[string]any{"scope": "openid"})
	org := f.flow(t, c, map[string]any{"scope": "openid", "subType": "organization", "organizationId": f.orgA.ID.String()})
	orgNoOpenID := f.flow(t, c, map[string]any{"scope": "webhooks:read", "subType": "organization", "organizationId": f.orgA.ID.String()})
	revoked := f.flow(t, c, map[string]any{"scope": "openid"})
	f.s.Exec(t, `UPDATE oauth2_tokens SET refresh_token_revoked_at = now() WHERE access_token = $1`, auth.Hash(f.s.Secret, revoked.AccessToken))

	for _, tt := range []struct {
		name, token string
		want        want
	}{
		{"shows a user's email with the email scope", withEmail.AccessToken,
			want{status: 200, body: `{"sub":"` + f.user.String() + `","email":"` + f.email + `","email_verified":true}`}},
		{"shows only the subject without it", withoutEmail.AccessToken, want{status: 200, body: `{"sub":"` + f.user.String() + `"}`}},
		{"shows an organization's slug with openid", org.AccessToken,
			want{status: 200, body: `{"sub":"` + f.orgA.ID.String() + `","name":"` + f.orgA.Slug + `"}`}},
		{"shows only an organization's id without openid", orgNoOpenID.AccessToken,
			want{status: 200, body: `{"sub":"` + f.orgA.ID.String() + `"}`}},
		{"refuses a request without a token", "", want{status: 401, body: `{"error":"Unauthorized","detail":"Unauthorized"}`}},
		{"refuses a personal access token", f.pat, want{status: 401, error: "invalid_token"}},
		{"refuses an organization access token", f.orgA.Token, want{status: 401, error: "invalid_token"}},
		{"refuses a revoked token", revoked.AccessToken, want{status: 401, error: "invalid_token"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				cl := call{method: method, target: "/v1/oauth2/userinfo", token: tt.token}
				if method == http.MethodPost {
					cl.header = map[string]string{"Content-Length": "0"}
				}
				tt.want.check(t, f.s.do(t, cl))
			}
		})
	}
}
