package rest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"till/internal/auth"
)

// patWith gives the fixture's user another personal access token, with scope.
func (f *oauthFixture) patWith(t *testing.T, scope string) string {
	t.Helper()
	tok := auth.Generate(auth.PrefixPersonalAccessToken)
	f.s.Exec(t, `INSERT INTO personal_access_tokens (user_id, token, scope) VALUES ($1, $2, $3)`,
		f.user, auth.Hash(f.s.Secret, tok), scope)
	return tok
}

// register posts a client configuration and fails the test unless it is registered.
func (f *oauthFixture) register(t *testing.T, token, body string) map[string]any {
	t.Helper()
	rec := f.s.do(t, call{method: http.MethodPost, target: "/v1/oauth2/register", token: token, body: body})
	if rec.Code != http.StatusCreated {
		t.Fatalf("registering: %d %s", rec.Code, rec.Body)
	}
	return bodyMap(t, rec)
}

const minimalClient = `{"redirect_uris":["` + redirectURI + `"],"client_name":"App"}`

// noStore are authlib's headers on every registration answer.
var noStore = map[string]string{"Cache-Control": "no-store", "Pragma": "no-cache"}

func TestRegisteringAClientAnswersItsInformation(t *testing.T) {
	f := newOAuthFixture(t)
	writer := f.patWith(t, "organizations:write")
	allScopes := auth.NewScopeSet(auth.AllScopes()...).String()
	cases := []struct {
		name, body string
		want       map[string]any // exact values of these keys
		absent     []string
		secret     bool
	}{
		{"the schema's defaults fill every absent field", minimalClient,
			map[string]any{"token_endpoint_auth_method": "client_secret_post", "grant_types": []any{"authorization_code", "refresh_token"},
				"response_types": []any{"code"}, "scope": allScopes, "default_sub_type": "user", "client_name": "App",
				"redirect_uris": []any{redirectURI}, "client_secret_expires_at": float64(0)},
			[]string{"client_uri", "logo_uri", "tos_uri", "policy_uri", "registration_access_token"}, true},
		{"given metadata is kept", `{"redirect_uris":["http://localhost:8080/cb"],"client_name":"CLI","scope":"email openid",
			"grant_types":["authorization_code"],"client_uri":"https://cli.example","tos_uri":"https://cli.example/tos",
			"default_sub_type":"organization","token_endpoint_auth_method":"client_secret_basic"}`,
			map[string]any{"scope": "openid email", "grant_types": []any{"authorization_code"}, "client_uri": "https://cli.example",
				"tos_uri": "https://cli.example/tos", "default_sub_type": "organization", "token_endpoint_auth_method": "client_secret_basic",
				"redirect_uris": []any{"http://localhost:8080/cb"}},
			[]string{"logo_uri", "policy_uri"}, true},
		{"a public client gets no secret", `{"redirect_uris":["` + redirectURI + `"],"client_name":"SPA","token_endpoint_auth_method":"none"}`,
			map[string]any{"token_endpoint_auth_method": "none"}, []string{"client_secret", "client_secret_expires_at"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.s.do(t, call{method: http.MethodPost, target: "/v1/oauth2/register", token: writer, body: tc.body})
			want{status: http.StatusCreated, headers: noStore}.check(t, rec)
			got := bodyMap(t, rec)
			for k, v := range tc.want {
				if b, _ := json.Marshal(got[k]); string(b) != string(mustJSON(t, v)) {
					t.Errorf("%s = %s, want %s", k, b, mustJSON(t, v))
				}
			}
			for _, k := range tc.absent {
				if _, has := got[k]; has {
					t.Errorf("%s is present: %v", k, got[k])
				}
			}
			id, _ := got["client_id"].(string)
			if !strings.HasPrefix(id, auth.PrefixClientID) {
				t.Errorf("client_id = %q", id)
			}
			if secret, _ := got["client_secret"].(string); tc.secret != strings.HasPrefix(secret, auth.PrefixClientSecret) {
				t.Errorf("client_secret = %q, want one: %v", secret, tc.secret)
			}
			if issued, _ := got["client_id_issued_at"].(float64); issued < 1e9 {
				t.Errorf("client_id_issued_at = %v", got["client_id_issued_at"])
			}
			if got["registration_client_uri"] != portalURL+"/v1/oauth2/register/"+id {
				t.Errorf("registration_client_uri = %v", got["registration_client_uri"])
			}
		})
	}
}

func TestRegistrationRefusesBadMetadata(t *testing.T) {
	f := newOAuthFixture(t)
	writer := f.patWith(t, "organizations:write")
	cases := []struct {
		name, body string
		want       want
	}{
		{"required fields are missing", `{"scope":"openid"}`, validation(
			item{Type: "missing", Loc: []any{"body", "redirect_uris"}, Msg: "Field required"},
			item{Type: "missing", Loc: []any{"body", "client_name"}, Msg: "Field required"})},
		{"redirect_uris is not a list", `{"redirect_uris":"` + redirectURI + `","client_name":"App"}`, validation(
			item{Type: "list_type", Loc: []any{"body", "redirect_uris"}, Msg: "Input should be a valid list"})},
		{"a redirect URI is plain http off loopback", `{"redirect_uris":["http://app.example/cb"],"client_name":"App"}`, validation(
			item{Type: "url_scheme", Loc: []any{"body", "redirect_uris", 0}})},
		{"an auth method is unknown", `{"redirect_uris":["` + redirectURI + `"],"client_name":"App","token_endpoint_auth_method":"private_key_jwt"}`,
			validation(item{Type: "literal_error", Loc: []any{"body", "token_endpoint_auth_method"},
				Msg: "Input should be 'client_secret_basic', 'client_secret_post' or 'none'"})},
		{"an empty grant type list", `{"redirect_uris":["` + redirectURI + `"],"client_name":"App","grant_types":[]}`, validation(
			item{Type: "too_short", Loc: []any{"body", "grant_types"}})},
		{"an unsupported scope alone is authlib's invalid_client_metadata", `{"redirect_uris":["` + redirectURI + `"],"client_name":"App","scope":"openid admin"}`,
			want{status: http.StatusBadRequest, body: `{"error":"invalid_client_metadata","error_description":"Invalid claim 'scope'"}`, headers: noStore}},
		{"shape errors win over the scope", `{"redirect_uris":["ftp://app.example"],"client_name":"App","scope":"admin"}`, validation(
			item{Type: "url_scheme", Loc: []any{"body", "redirect_uris", 0}})},
		{"malformed JSON", `{"redirect_uris":`, want{status: http.StatusUnprocessableEntity, error: "RequestValidationError",
			items: []item{{Type: "json_invalid", Loc: []any{"body", 17}, Msg: "JSON decode error"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.want.check(t, f.s.do(t, call{method: http.MethodPost, target: "/v1/oauth2/register", token: writer, body: tc.body}))
		})
	}
	rec := f.s.do(t, call{method: http.MethodGet, target: "/v1/oauth2/register/" + auth.Generate(auth.PrefixClientID), token: writer})
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("nothing was registered, yet an unknown client answered %d", rec.Code)
	}
}

func TestRegistrationNeedsAUserWithTheScope(t *testing.T) {
	f := newOAuthFixture(t)
	writer := f.patWith(t, "organizations:write")
	reader := f.patWith(t, "organizations:read")
	id := f.register(t, writer, minimalClient)["client_id"].(string)
	configure := "/v1/oauth2/register/" + id
	cases := []struct {
		name string
		call call
		want want
	}{
		{"anonymous registration", call{method: http.MethodPost, target: "/v1/oauth2/register", body: minimalClient}, unauthorized()},
		{"anonymous with a malformed body is still 401", call{method: http.MethodPost, target: "/v1/oauth2/register", body: `{}`}, unauthorized()},
		{"an organization token counts as anonymous", call{method: http.MethodPost, target: "/v1/oauth2/register", token: f.orgA.Token,
			body: minimalClient}, unauthorized()},
		{"an unknown token", call{method: http.MethodGet, target: configure, token: "till_pat_unknown"}, invalidToken()},
		{"a user token without the scope", call{method: http.MethodPost, target: "/v1/oauth2/register", token: f.pat,
			body: minimalClient}, insufficientScope("organizations:write")},
		{"a read token cannot update", call{method: http.MethodPut, target: configure, token: reader,
			body: `{"redirect_uris":["` + redirectURI + `"],"client_name":"App","client_id":"` + id + `"}`}, insufficientScope("organizations:write")},
		{"a read token cannot delete", call{method: http.MethodDelete, target: configure, token: reader}, insufficientScope("organizations:write")},
		{"a token without read or write cannot read", call{method: http.MethodGet, target: configure, token: f.pat},
			insufficientScope("organizations:read organizations:write")},
		{"a read token reads", call{method: http.MethodGet, target: configure, token: reader},
			want{status: http.StatusOK, has: []string{`"client_id":"` + id + `"`}}},
		{"anonymous read", call{method: http.MethodGet, target: configure}, unauthorized()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.want.check(t, f.s.do(t, tc.call)) })
	}
}

func TestARegisteredClientIsReadUpdatedAndDeleted(t *testing.T) {
	f := newOAuthFixture(t)
	writer := f.patWith(t, "organizations:write")
	stranger := f.s.oauthUser(t, f.orgA, f.orgB).patWith(t, "organizations:write")
	created := f.register(t, writer, `{"redirect_uris":["`+redirectURI+`"],"client_name":"App","scope":"openid email",
		"token_endpoint_auth_method":"none","logo_uri":"https://app.example/logo.png"}`)
	id := created["client_id"].(string)
	configure := "/v1/oauth2/register/" + id
	invalidClient := want{status: http.StatusUnauthorized, body: `{"error":"invalid_client"}`, headers: map[string]string{
		"WWW-Authenticate": `Basic error="invalid_client", error_description=""`, "Cache-Control": "no-store", "Pragma": "no-cache"}}

	rec := f.s.do(t, call{target: configure, token: writer})
	want{status: http.StatusOK, headers: noStore}.check(t, rec)
	read := bodyMap(t, rec)
	for k, v := range created {
		if b, _ := json.Marshal(read[k]); string(b) != string(mustJSON(t, v)) {
			t.Errorf("read %s = %s, registered %s", k, b, mustJSON(t, v))
		}
	}

	t.Run("someone else's client is an unknown client", func(t *testing.T) {
		invalidClient.check(t, f.s.do(t, call{target: configure, token: stranger}))
		invalidClient.check(t, f.s.do(t, call{method: http.MethodDelete, target: configure, token: stranger}))
	})
	t.Run("the body must name the client it changes", func(t *testing.T) {
		want{status: http.StatusBadRequest, body: `{"error":"invalid_request"}`, headers: noStore}.check(t, f.s.do(t, call{
			method: http.MethodPut, target: configure, token: writer,
			body: `{"redirect_uris":["` + redirectURI + `"],"client_name":"App","client_id":"till_ci_other"}`}))
	})
	t.Run("a replacement resets absent fields but keeps absent URIs", func(t *testing.T) {
		rec := f.s.do(t, call{method: http.MethodPut, target: configure, token: writer,
			body: `{"redirect_uris":["` + redirectURI + `","https://app.example/again"],"client_name":"App 2","client_id":"` + id + `"}`})
		want{status: http.StatusOK, headers: noStore}.check(t, rec)
		got := bodyMap(t, rec)
		if got["client_name"] != "App 2" || got["scope"] != auth.NewScopeSet(auth.AllScopes()...).String() ||
			got["token_endpoint_auth_method"] != "client_secret_post" || got["logo_uri"] != "https://app.example/logo.png" {
			t.Errorf("replaced client = %v", got)
		}
		if secret, _ := got["client_secret"].(string); !strings.HasPrefix(secret, auth.PrefixClientSecret) {
			t.Errorf("turning confidential issued no secret: %v", got)
		}
		if redirects, _ := got["redirect_uris"].([]any); len(redirects) != 2 {
			t.Errorf("redirect_uris = %v", got["redirect_uris"])
		}
	})
	t.Run("a replacement is validated like a registration", func(t *testing.T) {
		validation(item{Type: "missing", Loc: []any{"body", "client_id"}, Msg: "Field required"}).check(t, f.s.do(t, call{
			method: http.MethodPut, target: configure, token: writer, body: minimalClient}))
	})
	t.Run("deleting answers 204, then the client is unknown", func(t *testing.T) {
		rec := f.s.do(t, call{method: http.MethodDelete, target: configure, token: writer})
		if rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
			t.Fatalf("delete: %d %q", rec.Code, rec.Body)
		}
		invalidClient.check(t, f.s.do(t, call{target: configure, token: writer}))
		invalidClient.check(t, f.s.do(t, call{method: http.MethodDelete, target: configure, token: writer}))
		invalidClient.check(t, f.s.do(t, call{method: http.MethodPut, target: configure, token: writer,
			body: `{"redirect_uris":["` + redirectURI + `"],"client_name":"App","client_id":"` + id + `"}`}))
	})
}

func TestARegisteredClientCompletesACodeFlow(t *testing.T) {
	f := newOAuthFixture(t)
	writer := f.patWith(t, "organizations:write")
	for _, method := range []string{"client_secret_post", "client_secret_basic", "none"} {
		t.Run(method, func(t *testing.T) {
			got := f.register(t, writer, `{"redirect_uris":["`+redirectURI+`"],"client_name":"App","token_endpoint_auth_method":"`+method+`"}`)
			secret, _ := got["client_secret"].(string)
			c := oauthClient{ID: got["client_id"].(string), Secret: secret, Method: method}
			tokens := f.flow(t, c, map[string]any{"redirectUri": redirectURI, "scope": "openid email"})
			if !strings.HasPrefix(tokens.AccessToken, auth.PrefixOAuthUserAccessToken) || tokens.Scope != "openid email" || tokens.IDToken == "" {
				t.Errorf("tokens = %+v", tokens)
			}
			rec := f.s.do(t, call{target: "/v1/oauth2/userinfo", token: tokens.AccessToken})
			want{status: http.StatusOK, has: []string{`"email":"` + f.email + `"`}}.check(t, rec)
		})
	}
}
