package rest_test

import (
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"testing"

	"till/internal/auth"
)

// signIn opens a browser session of the fixture's user, as signing in on the sign-in page
// does, and returns its cookie's value.
func (f *oauthFixture) signIn(t *testing.T) string {
	t.Helper()
	token, _ := f.s.NewUserSession(t, f.user)
	return token
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
		h["Cookie"] = auth.SessionCookie + "=" + session
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
