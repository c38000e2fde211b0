package rest_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"till/internal/oidclogin"
	"till/internal/oidclogin/oidclogintest"
	"till/resolvers"
	"till/resolvers/resolverstest"
)

// oidcSite is a site whose sign-in page offers the provider p as "corp".
func oidcSite(t *testing.T, p *oidclogintest.Provider) *site {
	t.Helper()
	set := oidclogin.NewSet([]oidclogin.ProviderConfig{{Name: "corp", DisplayName: "Corp SSO", Issuer: p.URL,
		ClientID: p.ClientID, ClientSecret: p.ClientSecret, Scopes: []string{"email"}}},
		[]byte("0123456789abcdef0123456789abcdef"),
		func(name string) string { return resolverstest.PortalURL + "/auth/oidc/" + name + "/callback" }, nil)
	return newSite(t, func(d *resolvers.Deps) { d.OIDCLogin = set })
}

// atProvider follows the browser to the provider, which answers at once, and returns the
// callback path it sends the browser back to.
func atProvider(t *testing.T, location string) string {
	t.Helper()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(location)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	back, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusFound {
		t.Fatalf("provider answered %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	return back.RequestURI()
}

func flowCookie(t *testing.T, rec interface{ Result() *http.Response }) string {
	t.Helper()
	for _, c := range rec.Result().Cookies() {
		if c.Name == "till_oidc_flow" && c.MaxAge > 0 {
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/auth/oidc/" {
				t.Errorf("flow cookie flags: %+v", c)
			}
			return c.Value
		}
	}
	t.Fatal("no flow cookie")
	return ""
}

func TestSigningInWithAnIdentityProviderOpensASessionForTheVerifiedEmail(t *testing.T) {
	p := oidclogintest.New(t)
	s := oidcSite(t, p)
	page := s.do(t, hit{method: http.MethodGet, path: "/login?return_to=%2Fgraphql"})
	if !strings.Contains(page.Body.String(), `href="/auth/oidc/corp?return_to=%2fgraphql"`) ||
		!strings.Contains(page.Body.String(), "Sign in with Corp SSO") {
		t.Fatalf("the sign-in page does not offer the provider:\n%s", page.Body)
	}

	p.SignInNext(oidclogintest.User{Subject: "u-1", Email: "Ada@Example.com", EmailVerified: true})
	start := s.do(t, hit{method: http.MethodGet, path: "/auth/oidc/corp?return_to=%2Fgraphql"})
	if start.Code != http.StatusFound || !strings.HasPrefix(start.Header().Get("Location"), p.URL+"/authorize?") {
		t.Fatalf("start: %d %q", start.Code, start.Header().Get("Location"))
	}
	flow := flowCookie(t, start)
	callback := atProvider(t, start.Header().Get("Location"))

	t.Run("the answer without the flow cookie of the browser that left is refused", func(t *testing.T) {
		rec := s.do(t, hit{method: http.MethodGet, path: callback})
		if rec.Code != http.StatusBadRequest || sessionSet(rec) {
			t.Fatalf("%d\n%s", rec.Code, rec.Body)
		}
	})
	signed := s.do(t, hit{method: http.MethodGet, path: callback, header: map[string]string{"Cookie": "till_oidc_flow=" + flow}})
	if signed.Code != http.StatusSeeOther || signed.Header().Get("Location") != "/graphql" {
		t.Fatalf("callback: %d %q\n%s", signed.Code, signed.Header().Get("Location"), signed.Body)
	}
	if got := s.viewerEmail(t, sessionCookie(t, signed).Value); !strings.EqualFold(got, "ada@example.com") {
		t.Fatalf("signed in as %q", got)
	}
	t.Run("the same answer cannot be used twice", func(t *testing.T) {
		rec := s.do(t, hit{method: http.MethodGet, path: callback, header: map[string]string{"Cookie": "till_oidc_flow=" + flow}})
		if rec.Code == http.StatusSeeOther || sessionSet(rec) {
			t.Fatalf("replayed answer: %d", rec.Code)
		}
	})
}

func TestAnIdentityProviderSignInIsRefusedWhenTheEmailIsNotVerifiedOrTheProviderUnknown(t *testing.T) {
	p := oidclogintest.New(t)
	s := oidcSite(t, p)
	p.SignInNext(oidclogintest.User{Subject: "u-2", Email: "mallory@example.com", EmailVerified: false})
	start := s.do(t, hit{method: http.MethodGet, path: "/auth/oidc/corp"})
	rec := s.do(t, hit{method: http.MethodGet, path: atProvider(t, start.Header().Get("Location")),
		header: map[string]string{"Cookie": "till_oidc_flow=" + flowCookie(t, start)}})
	if rec.Code != http.StatusForbidden || sessionSet(rec) || !strings.Contains(rec.Body.String(), "did not confirm an email") {
		t.Fatalf("unverified email: %d\n%s", rec.Code, rec.Body)
	}
	for _, path := range []string{"/auth/oidc/nope", "/auth/oidc/nope/callback?code=x&state=y", "/auth/oidc/corp/callback?error=access_denied"} {
		rec := s.do(t, hit{method: http.MethodGet, path: path})
		if rec.Code < 400 || rec.Code >= 500 || sessionSet(rec) {
			t.Errorf("%s: %d", path, rec.Code)
		}
	}
}

// sessionSet reports whether an answer sets a session cookie.
func sessionSet(rec interface{ Result() *http.Response }) bool {
	for _, c := range rec.Result().Cookies() {
		if c.Name == "till_session" && c.MaxAge >= 0 && c.Value != "" {
			return true
		}
	}
	return false
}
