package rest_test

import (
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/rest"
)

// testSessionCookie carries a browser session in these tests: the principal the session
// middleware would resolve, keyed by a name the test chose.
const testSessionCookie = "test_session"

// browserSessions stands in for the session middleware: a request without a bearer token
// whose test_session cookie names a session acts as that session's user.
type browserSessions map[string]auth.Principal

// mountWithSessions puts the /v1 router in front of the application with the bearer
// middleware and, inside it, the browser sessions, and returns the sessions to fill.
func (s *v1) mountWithSessions(tb testing.TB) browserSessions {
	tb.Helper()
	sessions := browserSessions{}
	bearer := auth.Middleware(s.Resolver, s.Secret)
	authn := func(next http.Handler) http.Handler {
		withSession := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, hasBearer := auth.BearerToken(r.Header.Get("Authorization")); !hasBearer {
				if c, err := r.Cookie(testSessionCookie); err == nil {
					if p, ok := sessions[c.Value]; ok {
						r = r.WithContext(auth.WithPrincipal(r.Context(), p))
					}
				}
			}
			next.ServeHTTP(w, r)
		})
		return bearer(withSession)
	}
	h, err := rest.New(s.Resolver, authn, s.Deps.Logger)
	if err != nil {
		tb.Fatalf("rest.New: %v", err)
	}
	s.h = h
	return sessions
}

// signIn opens a browser session of the fixture's user holding every scope and reaching
// both organizations, and returns its cookie's value.
func (f *oauthFixture) signIn(sessions browserSessions) string {
	name := uuid.NewString()
	sessions[name] = auth.Principal{Kind: auth.KindUser, TokenID: uuid.New(), UserID: f.user, BrowserSession: true,
		Scopes: auth.NewScopeSet(auth.AllScopes()...), Organizations: []uuid.UUID{f.orgA.ID, f.orgB.ID}}
	return name
}

// browserAccept is what Chromium sends when it navigates to a page.
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// page requests target as a browser navigating to it with the session cookie (none when
// empty).
func (f *oauthFixture) page(t *testing.T, session, target string) *httptest.ResponseRecorder {
	t.Helper()
	return f.s.do(t, call{target: target, header: browserHeaders(session)})
}

// postForm posts form to target as the consent page does, with the session cookie.
func (f *oauthFixture) postForm(t *testing.T, session, target string, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	body := form.Encode()
	h := browserHeaders(session)
	h["Content-Type"] = "application/x-www-form-urlencoded"
	h["Content-Length"] = strconv.Itoa(len(body))
	return f.s.do(t, call{method: http.MethodPost, target: target, body: body, header: h})
}

func browserHeaders(session string) map[string]string {
	h := map[string]string{"Accept": browserAccept}
	if session != "" {
		h["Cookie"] = testSessionCookie + "=" + session
	}
	return h
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// pageForm reads the hidden fields of a consent page, as the browser would post them.
func pageForm(t *testing.T, page string) url.Values {
	t.Helper()
	form := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(page, -1) {
		form.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	if form.Get("csrf_token") == "" {
		t.Fatalf("no consent form in the page:\n%s", page)
	}
	return form
}
