package rest_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"till/internal/auth"
)

func TestTheAuthorizationEndpointShowsABrowserPagesAndAnAPIClientData(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	session := f.signIn(t)
	c := f.client(t, "client_secret_post", "openid email webhooks:read")
	query := "response_type=code&client_id=" + c.ID + "&scope=openid+email&state=xyz"
	target := "/v1/oauth2/authorize?" + query
	for _, tt := range []struct {
		name    string
		session string
		target  string
		header  map[string]string // replaces the browser's headers
		status  int
		// location is the redirect's target without its query, and returnTo the query
		// the sign-in page is to come back with
		location, returnTo string
		has                []string // in the body
	}{
		{name: "sends an anonymous browser to sign in, coming back to the same request", target: target,
			status: http.StatusFound, location: "/login", returnTo: query},
		{name: "sends an anonymous browser to sign in for prompt=login, coming back for the consent page",
			target: target + "&prompt=login", status: http.StatusFound, location: "/login",
			returnTo: query + "&prompt=consent"},
		{name: "sends a signed-in browser to sign in again for prompt=login, coming back for the consent page",
			session: session, target: target + "&prompt=login", status: http.StatusFound, location: "/login",
			returnTo: query + "&prompt=consent"},
		{name: "sends prompt=none of an anonymous browser back to the client with login_required",
			target: target + "&prompt=none", status: http.StatusFound, location: redirectURI},
		{name: "shows a signed-in browser the consent page", session: session, target: target, status: http.StatusOK,
			has: []string{`<span id="client-name">App</span>`, f.email, "Read your email address", `name="csrf_token"`,
				`name="organizations" value="` + f.orgA.ID.String() + `"`, `value="allow"`, `value="deny"`}},
		{name: "answers a signed-in API client the consent data with the user and the organizations", session: session,
			target: target, header: map[string]string{"Accept": "application/json", "Cookie": auth.SessionCookie + "=" + session},
			status: http.StatusOK, has: []string{`"sub_type":"user"`, `"sub":{"id":"` + f.user.String() + `","email":"` + f.email + `","avatar_url":null}`,
				`"organizations":[{"id":"` + f.orgA.ID.String() + `"`}},
		{name: "answers a signed-in API client the data of an organization subject", session: session,
			target: target + "&sub_type=organization", header: map[string]string{"Cookie": auth.SessionCookie + "=" + session},
			status: http.StatusOK, has: []string{`"sub_type":"organization"`, `"sub":null`, `"requires_single_organization":true`}},
		{name: "refuses a personal access token even from a browser", target: target,
			header: map[string]string{"Accept": browserAccept, "Authorization": "Bearer " + f.pat}, status: http.StatusForbidden,
			has: []string{`"NotPermitted"`}},
		{name: "shows an unknown client on a page", session: session, target: "/v1/oauth2/authorize?response_type=code&client_id=till_ci_x",
			status: http.StatusBadRequest, has: []string{"invalid_client"}},
		{name: "shows an unregistered redirect URI on a page and sends the browser nowhere", session: session,
			target: target + "&redirect_uri=https://evil.example/cb", status: http.StatusBadRequest,
			has: []string{"is not supported by client"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			header := browserHeaders(tt.session)
			if tt.header != nil {
				header = tt.header
			}
			rec := f.s.do(t, call{target: tt.target, header: header})
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			for _, s := range tt.has {
				if !strings.Contains(rec.Body.String(), s) {
					t.Errorf("body lacks %s:\n%s", s, rec.Body)
				}
			}
			loc, _ := url.Parse(rec.Header().Get("Location"))
			if got := strings.Split(loc.String(), "?")[0]; got != tt.location {
				t.Errorf("Location %s, want %s…", loc, tt.location)
			}
			if tt.returnTo != "" {
				back, err := url.Parse(loc.Query().Get("return_to"))
				want, _ := url.ParseQuery(tt.returnTo)
				if err != nil || back.Host != "" || back.Path != "/v1/oauth2/authorize" || back.Query().Encode() != want.Encode() {
					t.Errorf("return_to %s, want /v1/oauth2/authorize?%s", back, tt.returnTo)
				}
				if again := strings.Contains(tt.target, "prompt=login"); (loc.Query().Get("prompt") == "login") != again {
					t.Errorf("sign-in page asked for a fresh sign-in: %v, want %v", !again, again)
				}
			}
		})
	}
}

func TestTheConsentPageLoadsNothingAndCannotBeFramed(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	session := f.signIn(t)
	c := f.client(t, "none", "openid")
	f.s.Exec(t, `UPDATE oauth2_clients SET client_name = '<script>alert(1)</script>', logo_uri = $2,
		tos_uri = 'javascript:alert(2)', policy_uri = 'https://app.example/privacy' WHERE client_id = $1`,
		c.ID, "https://cdn.example/logo.png")
	_, challenge := pkce()
	target := "/v1/oauth2/authorize?response_type=code&client_id=" + c.ID + "&code_challenge_method=S256&code_challenge=" + challenge
	rec := f.page(t, session, target)
	page := rec.Body.String()
	csp := rec.Header().Get("Content-Security-Policy")
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"the client's name is text, not markup", strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") && !strings.Contains(page, "<script")},
		{"a logo of another origin is not loaded", !strings.Contains(page, "cdn.example")},
		{"a link that is not http(s) is not followed", !strings.Contains(page, "javascript:")},
		{"the privacy policy is linked", strings.Contains(page, `href="https://app.example/privacy"`)},
		{"nothing but its own stylesheet and images loads", strings.Contains(csp, "default-src 'none'") &&
			strings.Contains(csp, "style-src 'sha256-") && strings.Contains(csp, "img-src 'self'") && !strings.Contains(csp, "script-src")},
		{"the form posts only to Till and redirects only to the client", strings.Contains(csp, "form-action 'self' https://app.example;")},
		{"no other site may frame it", strings.Contains(csp, "frame-ancestors 'none'") && rec.Header().Get("X-Frame-Options") == "DENY"},
		{"it is never cached", rec.Header().Get("Cache-Control") == "no-store"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.ok {
				t.Errorf("CSP %q, page:\n%s", csp, page)
			}
		})
	}
	f.s.Exec(t, `UPDATE oauth2_clients SET logo_uri = $2 WHERE client_id = $1`, c.ID, portalURL+"/media/logo.png")
	if page := f.page(t, session, target).Body.String(); !strings.Contains(page, `src="`+portalURL+`/media/logo.png"`) {
		t.Errorf("a logo of Till's own origin is not shown:\n%s", page)
	}
}

func TestABrowserAllowsThroughThePageAndIsRememberedUntilPromptConsent(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	session := f.signIn(t)
	c := f.client(t, "none", "openid email")
	verifier, challenge := pkce()
	target := "/v1/oauth2/authorize?response_type=code&client_id=" + c.ID + "&scope=openid+email&state=s1" +
		"&code_challenge_method=S256&code_challenge=" + challenge

	form := pageForm(t, f.page(t, session, target).Body.String())
	deny := cloneForm(form)
	deny.Set("action", "deny")
	if loc := redirectOf(t, f.postForm(t, session, "/v1/oauth2/consent", deny)); loc.Query().Get("error") != "access_denied" {
		t.Errorf("deny sent the browser to %s", loc)
	}
	form.Set("action", "allow")
	form.Set("organizations", f.orgB.ID.String())
	loc := redirectOf(t, f.postForm(t, session, "/v1/oauth2/consent", form))
	if loc.Query().Get("state") != "s1" || loc.Query().Get("code") == "" {
		t.Fatalf("allow sent the browser to %s", loc)
	}
	var recorded string
	f.s.Get(t, &recorded, `SELECT actor_kind || ' ' || coalesce(user_id IN (SELECT id FROM users WHERE lower(email) = lower($1)),
		false)::text || ' ' || operation FROM audit_log WHERE object_type = 'oauth2_grant' AND action = 'create' LIMIT 1`, f.email)
	if recorded != "user true POST /v1/oauth2/consent" {
		t.Errorf("the consent is recorded as %q, want the signed-in user's", recorded)
	}
	tok := f.exchange(t, c, loc.Query().Get("code"), verifier)
	if tok.Scope != "openid email" {
		t.Errorf("token scope %q", tok.Scope)
	}
	info := f.s.do(t, call{target: "/v1/oauth2/userinfo", token: tok.AccessToken})
	if !strings.Contains(info.Body.String(), `"email":"`+f.email+`"`) {
		t.Errorf("userinfo: %d %s", info.Code, info.Body)
	}

	again := redirectOf(t, f.page(t, session, target))
	if again.Query().Get("code") == "" {
		t.Errorf("the remembered consent was asked again: %s", again)
	}
	if rec := f.page(t, session, target+"&prompt=consent"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "csrf_token") {
		t.Errorf("prompt=consent answered %d without the page", rec.Code)
	}

	// Upstream's dashboard posts the request's parameters in the query string.
	query := cloneForm(form)
	body := url.Values{"action": {"allow"}, "csrf_token": {query.Get("csrf_token")}}
	query.Del("csrf_token")
	query.Del("action")
	query.Del("organizations")
	if loc := redirectOf(t, f.postForm(t, session, "/v1/oauth2/consent?"+query.Encode(), body)); loc.Query().Get("code") == "" {
		t.Errorf("a consent with the request in the query sent the browser to %s", loc)
	}
}

func TestTheConsentEndpointRefusesWhatThePageDidNotSend(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	session := f.signIn(t)
	c := f.client(t, "client_secret_post", "openid")
	form := pageForm(t, f.page(t, session, "/v1/oauth2/authorize?response_type=code&client_id="+c.ID).Body.String())
	form.Set("action", "allow")
	forged := cloneForm(form)
	forged.Set("csrf_token", "forged")
	for _, tt := range []struct {
		name   string
		rec    func() *httptest.ResponseRecorder
		status int
		error  string
	}{
		{"refuses an anonymous caller", func() *httptest.ResponseRecorder {
			return f.s.do(t, oauthCall("/v1/oauth2/consent", oauthClient{}, form))
		}, http.StatusUnauthorized, "Unauthorized"},
		{"refuses a personal access token", func() *httptest.ResponseRecorder {
			call := oauthCall("/v1/oauth2/consent", oauthClient{}, form)
			call.token = f.pat
			return f.s.do(t, call)
		}, http.StatusForbidden, "NotPermitted"},
		{"refuses a forged form", func() *httptest.ResponseRecorder {
			call := oauthCall("/v1/oauth2/consent", oauthClient{}, forged)
			call.header["Cookie"] = auth.SessionCookie + "=" + session
			return f.s.do(t, call)
		}, http.StatusForbidden, "CSRFVerificationFailed"},
		{"refuses the true form posted by a page of another site", func() *httptest.ResponseRecorder {
			call := oauthCall("/v1/oauth2/consent", oauthClient{}, form)
			call.header["Cookie"] = auth.SessionCookie + "=" + session
			call.header["Origin"] = "https://evil.example"
			return f.s.do(t, call)
		}, http.StatusForbidden, "CSRFVerificationFailed"},
		{"refuses a session that was signed out", func() *httptest.ResponseRecorder {
			ended := f.signIn(t)
			f.s.Exec(t, `UPDATE user_sessions SET deleted_at = now() WHERE token = $1`, auth.Hash(f.s.Secret, ended))
			call := oauthCall("/v1/oauth2/consent", oauthClient{}, form)
			call.header["Cookie"] = auth.SessionCookie + "=" + ended
			return f.s.do(t, call)
		}, http.StatusUnauthorized, "Unauthorized"},
		{"shows a forged form's refusal to a browser on a page", func() *httptest.ResponseRecorder {
			return f.postForm(t, session, "/v1/oauth2/consent", forged)
		}, http.StatusForbidden, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := tt.rec()
			if rec.Code != tt.status || (tt.error != "" && !strings.Contains(rec.Body.String(), `"error":"`+tt.error+`"`)) {
				t.Errorf("answered %d %s, want %d %s", rec.Code, rec.Body, tt.status, tt.error)
			}
		})
	}
}

// redirectOf is the Location of a 302, failing the test for any other answer.
func redirectOf(t *testing.T, rec *httptest.ResponseRecorder) *url.URL {
	t.Helper()
	loc, err := url.Parse(rec.Header().Get("Location"))
	if rec.Code != http.StatusFound || err != nil {
		t.Fatalf("answered %d %s, want a redirect", rec.Code, rec.Body)
	}
	return loc
}

func TestPromptLoginAsksForTheSignInAgainAndThenShowsTheConsentPage(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	session := f.signIn(t)
	c := f.client(t, "client_secret_post", "openid")
	target := "/v1/oauth2/authorize?response_type=code&client_id=" + c.ID + "&scope=openid&prompt=login"
	login := redirectOf(t, f.page(t, session, target))
	req := httptest.NewRequest(http.MethodGet, login.String(), nil)
	for k, v := range browserHeaders(session) {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	f.s.h.ServeHTTP(rec, req)
	page := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(page, `name="email"`) || strings.Contains(page, "You are signed in") {
		t.Fatalf("the sign-in page over a live session answered %d:\n%s", rec.Code, page)
	}
	back := login.Query().Get("return_to")
	if !strings.Contains(page, `name="return_to" value="`+strings.ReplaceAll(back, "&", "&amp;")+`"`) {
		t.Errorf("the sign-in page does not lead back to %s:\n%s", back, page)
	}
	again := f.signIn(t)
	if rec := f.page(t, again, back); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `id="allow"`) {
		t.Errorf("signed in again, %s answered %d, want the consent page", back, rec.Code)
	}
}
