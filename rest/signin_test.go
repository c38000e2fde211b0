package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"till/internal/auth"
	"till/internal/jobs"
	"till/internal/mail"
	"till/internal/ratelimit"
	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/rest"
	"till/storage/storagetest"
)

// site is Till's HTTP surface as a browser meets it: /graphql with browser sessions, and
// the sign-in endpoints and pages beside /v1; its mail lands in an inbox.
type site struct {
	*resolverstest.App
	h    http.Handler
	mu   sync.Mutex
	mail []mail.Message
}

func (s *site) Send(_ context.Context, m mail.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mail = append(s.mail, m)
	return nil
}

func newSite(t *testing.T, opts ...resolverstest.Option) *site {
	t.Helper()
	s := &site{}
	opts = append([]resolverstest.Option{func(d *resolvers.Deps) { d.Mail = s }}, opts...)
	s.App = resolverstest.NewApp(t, storagetest.New(t), opts...)
	v1, err := rest.New(s.Resolver, auth.Middleware(s.Resolver, s.Secret), s.Deps.Logger)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/graphql", s.GraphQL)
	mux.Handle("/", v1)
	s.h = ratelimit.WithClientIP(ratelimit.ClientIP(nil))(mux)
	return s
}

// hit is one request: a JSON body or a form, the session cookie, extra headers ("" deletes).
type hit struct {
	method, path string
	json         any
	form         url.Values
	cookie       string
	header       map[string]string
}

func (s *site) do(t *testing.T, h hit) *httptest.ResponseRecorder {
	t.Helper()
	var body string
	switch {
	case h.json != nil:
		b, _ := json.Marshal(h.json)
		body = string(b)
	case h.form != nil:
		body = h.form.Encode()
	}
	req := httptest.NewRequest(h.method, h.path, strings.NewReader(body))
	req.Header.Set("Content-Length", strconv.Itoa(len(body)))
	req.Header.Set("Origin", resolverstest.PortalURL)
	req.Header.Set("User-Agent", "Mozilla/5.0 (signin test)")
	if h.json != nil {
		req.Header.Set("Content-Type", "application/json")
	} else if h.form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if h.cookie != "" {
		req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: h.cookie})
	}
	for k, v := range h.header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	return rec
}

var (
	codeInMail = regexp.MustCompile(`\b([A-Z2-9]{4}-[A-Z2-9]{4})\b`)
	linkInMail = regexp.MustCompile(`/login/link\?token=(till_sl_[A-Za-z0-9]+)`)
)

// delivered runs the mail jobs and returns the code and link token of the last mail to.
func (s *site) delivered(t *testing.T, to string) (code, link string) {
	t.Helper()
	if _, err := (&jobs.Worker{DB: s.DB, Handlers: s.Resolver.JobHandlers()}).RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.mail) - 1; i >= 0; i-- {
		if s.mail[i].To == to {
			c, l := codeInMail.FindStringSubmatch(s.mail[i].Text), linkInMail.FindStringSubmatch(s.mail[i].Text)
			if c == nil || l == nil {
				t.Fatalf("the mail to %s holds no code and link:\n%s", to, s.mail[i].Text)
			}
			return c[1], l[1]
		}
	}
	t.Fatalf("no mail to %s", to)
	return "", ""
}

// sessionCookie is the session cookie a response set.
func sessionCookie(t *testing.T, rec *httptest.ResponseRecorder) *http.Cookie {
	t.Helper()
	for _, c := range rec.Result().Cookies() {
		if c.Name == auth.SessionCookie {
			return c
		}
	}
	t.Fatalf("no session cookie set (%d): %v", rec.Code, rec.Header())
	return nil
}

// viewerEmail is who /graphql says the cookie signs in, or "" for nobody.
func (s *site) viewerEmail(t *testing.T, cookie string) string {
	t.Helper()
	rec := s.do(t, hit{method: http.MethodGet, path: "/graphql?query=" + url.QueryEscape("{ viewer { email } }"), cookie: cookie})
	var out struct {
		Data struct{ Viewer *struct{ Email string } }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Data.Viewer == nil {
		return ""
	}
	return out.Data.Viewer.Email
}

func TestSigningInThroughTheJSONEndpoints(t *testing.T) {
	s := newSite(t)
	const email = "ada@example.com"
	requested := s.do(t, hit{method: http.MethodPost, path: "/auth/login-code/request", json: map[string]string{"email": email}})
	if requested.Code != http.StatusAccepted {
		t.Fatalf("request: %d %s", requested.Code, requested.Body)
	}
	code, _ := s.delivered(t, email)

	t.Run("an address with no user gets the same answer as one with a user", func(t *testing.T) {
		again := s.do(t, hit{method: http.MethodPost, path: "/auth/login-code/request", json: map[string]string{"email": "nobody@example.com"}})
		if again.Code != requested.Code || again.Body.String() != requested.Body.String() {
			t.Errorf("%d %s, want the answer of any other address: %d %s", again.Code, again.Body, requested.Code, requested.Body)
		}
	})
	t.Run("a wrong code says so", func(t *testing.T) {
		rec := s.do(t, hit{method: http.MethodPost, path: "/auth/login-code/authenticate",
			json: map[string]string{"email": email, "code": "2222-2222"}})
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"cause":"wrong_code"`) ||
			len(rec.Result().Cookies()) != 0 {
			t.Errorf("%d %s", rec.Code, rec.Body)
		}
	})
	rec := s.do(t, hit{method: http.MethodPost, path: "/auth/login-code/authenticate", json: map[string]string{"email": email, "code": code}})
	if rec.Code != http.StatusOK {
		t.Fatalf("authenticate: %d %s", rec.Code, rec.Body)
	}
	var body struct {
		User      struct{ ID, Email string }
		CSRFToken string    `json:"csrf_token"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.User.Email != email || body.CSRFToken == "" {
		t.Fatalf("authenticate answered %s", rec.Body)
	}
	cookie := sessionCookie(t, rec)
	t.Run("the cookie is HttpOnly, Secure over https, SameSite=Lax, for the whole site, 30 days", func(t *testing.T) {
		life := time.Duration(cookie.MaxAge) * time.Second
		if !cookie.HttpOnly || !cookie.Secure || cookie.SameSite != http.SameSiteLaxMode || cookie.Path != "/" ||
			life < 30*24*time.Hour-time.Minute || life > 30*24*time.Hour || !strings.HasPrefix(cookie.Value, "till_us_") {
			t.Errorf("cookie %+v", cookie)
		}
		if d := time.Until(body.ExpiresAt); d < 29*24*time.Hour {
			t.Errorf("the session expires at %s", body.ExpiresAt)
		}
	})
	if got := s.viewerEmail(t, cookie.Value); got != email {
		t.Fatalf("the cookie signs in %q, want %s", got, email)
	}
	t.Run("signing out needs the CSRF token", func(t *testing.T) {
		rec := s.do(t, hit{method: http.MethodPost, path: "/auth/logout", cookie: cookie.Value})
		if rec.Code != http.StatusForbidden || s.viewerEmail(t, cookie.Value) != email {
			t.Errorf("sign-out without the token: %d %s", rec.Code, rec.Body)
		}
	})
	t.Run("signing out ends the session at once and drops the cookie", func(t *testing.T) {
		rec := s.do(t, hit{method: http.MethodPost, path: "/auth/logout", cookie: cookie.Value,
			header: map[string]string{auth.CSRFHeader: body.CSRFToken}})
		if rec.Code != http.StatusNoContent || sessionCookie(t, rec).MaxAge >= 0 {
			t.Errorf("sign-out: %d %v", rec.Code, rec.Header())
		}
		if got := s.viewerEmail(t, cookie.Value); got != "" {
			t.Errorf("the session still signs in %s", got)
		}
	})
	for _, c := range []struct {
		name   string
		h      hit
		status int
	}{
		{"a form body is refused", hit{method: http.MethodPost, path: "/auth/login-code/request",
			form: url.Values{"email": {email}}}, http.StatusUnsupportedMediaType},
		{"another site's page is refused", hit{method: http.MethodPost, path: "/auth/login-code/request",
			json: map[string]string{"email": email}, header: map[string]string{"Origin": "https://evil.example"}}, http.StatusForbidden},
		{"a body that is not a JSON object is refused", hit{method: http.MethodPost, path: "/auth/login-code/request",
			json: []int{1}}, http.StatusBadRequest},
		{"an email with a NUL byte is refused as input", hit{method: http.MethodPost, path: "/auth/login-code/authenticate",
			json: map[string]string{"email": "a\x00@example.com", "code": "AAAA-AAAA"}}, http.StatusUnprocessableEntity},
		{"signing out with no session is done already", hit{method: http.MethodPost, path: "/auth/logout"}, http.StatusNoContent},
	} {
		t.Run(c.name, func(t *testing.T) {
			if rec := s.do(t, c.h); rec.Code != c.status {
				t.Errorf("%d %s, want %d", rec.Code, rec.Body, c.status)
			}
		})
	}
}

func TestTheCookieIsNotSecureOverPlainHTTP(t *testing.T) {
	s := newSite(t, func(d *resolvers.Deps) { d.PortalURL = "http://127.0.0.1:8000" })
	s.do(t, hit{method: http.MethodPost, path: "/auth/login-code/request", json: map[string]string{"email": "plain@example.com"},
		header: map[string]string{"Origin": "http://127.0.0.1:8000"}})
	code, _ := s.delivered(t, "plain@example.com")
	rec := s.do(t, hit{method: http.MethodPost, path: "/auth/login-code/authenticate",
		json: map[string]string{"email": "plain@example.com", "code": code}, header: map[string]string{"Origin": "http://127.0.0.1:8000"}})
	if c := sessionCookie(t, rec); c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
		t.Errorf("cookie over plain http: %+v", c)
	}
}

func TestSignInRateLimitsAnswer429WithRetryAfter(t *testing.T) {
	s := newSite(t, func(d *resolvers.Deps) {
		g, err := ratelimit.New(ratelimit.Config{PerIP: ratelimit.Limit{Rate: 100, Interval: time.Hour},
			PerKey: ratelimit.Limit{Rate: 1, Interval: time.Hour}})
		if err != nil {
			t.Fatal(err)
		}
		d.SignInLimits = &resolvers.SignInLimits{Request: g, Redeem: g}
	})
	req := hit{method: http.MethodPost, path: "/auth/login-code/request", json: map[string]string{"email": "busy@example.com"}}
	if rec := s.do(t, req); rec.Code != http.StatusAccepted {
		t.Fatalf("first request: %d %s", rec.Code, rec.Body)
	}
	rec := s.do(t, req)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Errorf("second request: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	page := s.do(t, hit{method: http.MethodPost, path: "/login", form: url.Values{"email": {"busy@example.com"}}})
	if page.Code != http.StatusTooManyRequests || page.Header().Get("Retry-After") == "" {
		t.Errorf("the sign-in page over the limit: %d %v", page.Code, page.Header())
	}
}
