package rest_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

func TestTheSignInPageSignsInAndLeadsBack(t *testing.T) {
	s := newSite(t)
	const email = "page@example.com"
	page := s.do(t, hit{method: http.MethodGet, path: "/login?return_to=" + url.QueryEscape("/v1/oauth2/authorize?client_id=x")})
	t.Run("the page loads nothing from elsewhere and runs no script", func(t *testing.T) {
		csp, body := page.Header().Get("Content-Security-Policy"), page.Body.String()
		if page.Code != http.StatusOK || !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") ||
			strings.Contains(csp, "unsafe-inline") || strings.Contains(body, "<script") || strings.Contains(body, "src=") ||
			page.Header().Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET /login: %d CSP %q\n%s", page.Code, csp, body)
		}
		if !strings.Contains(body, `name="return_to" value="/v1/oauth2/authorize?client_id=x"`) {
			t.Errorf("the email form does not carry return_to:\n%s", body)
		}
	})
	returnTo := "/v1/oauth2/authorize?client_id=x"
	codeForm := s.do(t, hit{method: http.MethodPost, path: "/login", form: url.Values{"email": {email}, "return_to": {returnTo}}})
	if codeForm.Code != http.StatusOK || !strings.Contains(codeForm.Body.String(), `action="/login/code"`) {
		t.Fatalf("POST /login: %d\n%s", codeForm.Code, codeForm.Body)
	}
	code, _ := s.delivered(t, email)
	t.Run("a wrong code shows the form again with why", func(t *testing.T) {
		rec := s.do(t, hit{method: http.MethodPost, path: "/login/code", form: url.Values{"email": {email}, "code": {"2222-2222"}}})
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "not correct") {
			t.Errorf("%d\n%s", rec.Code, rec.Body)
		}
	})
	signedIn := s.do(t, hit{method: http.MethodPost, path: "/login/code",
		form: url.Values{"email": {email}, "code": {code}, "return_to": {returnTo}}})
	if signedIn.Code != http.StatusSeeOther || signedIn.Header().Get("Location") != returnTo {
		t.Fatalf("POST /login/code: %d Location %q", signedIn.Code, signedIn.Header().Get("Location"))
	}
	cookie := sessionCookie(t, signedIn)
	if got := s.viewerEmail(t, cookie.Value); got != email {
		t.Fatalf("the cookie signs in %q", got)
	}
	home := s.do(t, hit{method: http.MethodGet, path: "/login", cookie: cookie.Value})
	csrf := csrfField.FindStringSubmatch(home.Body.String())
	if home.Code != http.StatusOK || !strings.Contains(home.Body.String(), email) || csrf == nil {
		t.Fatalf("GET /login signed in: %d\n%s", home.Code, home.Body)
	}
	t.Run("signing out from the page needs the page's token", func(t *testing.T) {
		rec := s.do(t, hit{method: http.MethodPost, path: "/logout", cookie: cookie.Value, form: url.Values{"csrf_token": {"forged"}}})
		if rec.Code != http.StatusForbidden || s.viewerEmail(t, cookie.Value) != email {
			t.Errorf("forged sign-out: %d", rec.Code)
		}
		rec = s.do(t, hit{method: http.MethodPost, path: "/logout", cookie: cookie.Value, form: url.Values{"csrf_token": {csrf[1]}}})
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/login" || s.viewerEmail(t, cookie.Value) != "" {
			t.Errorf("sign-out: %d %v", rec.Code, rec.Header())
		}
	})
}

func TestTheSignInPageRefusesWhatCouldMisleadABrowser(t *testing.T) {
	s := newSite(t)
	for _, c := range []struct{ name, returnTo string }{
		{"another site", "https://evil.example/x"},
		{"a protocol-relative address", "//evil.example/x"},
		{"a backslash address", "/\\evil.example"},
	} {
		t.Run("a return_to to "+c.name+" leads to the sign-in page instead", func(t *testing.T) {
			email := "open-redirect@example.com"
			s.do(t, hit{method: http.MethodPost, path: "/login", form: url.Values{"email": {email}, "return_to": {c.returnTo}}})
			code, _ := s.delivered(t, email)
			rec := s.do(t, hit{method: http.MethodPost, path: "/login/code",
				form: url.Values{"email": {email}, "code": {code}, "return_to": {c.returnTo}}})
			if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/login" {
				t.Errorf("%d Location %q, want /login", rec.Code, rec.Header().Get("Location"))
			}
		})
	}
	t.Run("a form posted by another site's page signs nobody in", func(t *testing.T) {
		rec := s.do(t, hit{method: http.MethodPost, path: "/login", form: url.Values{"email": {"victim@example.com"}},
			header: map[string]string{"Origin": "https://evil.example"}})
		if rec.Code != http.StatusForbidden {
			t.Errorf("%d, want 403", rec.Code)
		}
	})
}

// TestAMagicLinkIsUsedOnlyByItsButton: mail scanners fetch links; only the page's POST
// signs in, once, and leads where the request said.
func TestAMagicLinkIsUsedOnlyByItsButton(t *testing.T) {
	s := newSite(t)
	const email = "link@example.com"
	s.do(t, hit{method: http.MethodPost, path: "/login", form: url.Values{"email": {email}, "return_to": {"/dashboard"}}})
	_, link := s.delivered(t, email)
	for range 3 {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			rec := s.do(t, hit{method: method, path: "/login/link?token=" + link})
			if rec.Code != http.StatusOK || len(rec.Result().Cookies()) != 0 {
				t.Fatalf("%s of the link: %d %v", method, rec.Code, rec.Header())
			}
		}
	}
	page := s.do(t, hit{method: http.MethodGet, path: "/login/link?token=" + link})
	if !strings.Contains(page.Body.String(), `action="/login/link"`) || page.Header().Get("Referrer-Policy") != "same-origin" {
		t.Errorf("the link page:\n%s", page.Body)
	}
	rec := s.do(t, hit{method: http.MethodPost, path: "/login/link", form: url.Values{"token": {link}}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/dashboard" {
		t.Fatalf("pressing the button: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	if got := s.viewerEmail(t, sessionCookie(t, rec).Value); got != email {
		t.Errorf("the link signed in %q", got)
	}
	again := s.do(t, hit{method: http.MethodPost, path: "/login/link", form: url.Values{"token": {link}}})
	if again.Code != http.StatusBadRequest || !strings.Contains(again.Body.String(), "already used") ||
		len(again.Result().Cookies()) != 0 {
		t.Errorf("the link a second time: %d\n%s", again.Code, again.Body)
	}
}
