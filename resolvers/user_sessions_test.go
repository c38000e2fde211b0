package resolvers_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/resolvers"
	"till/resolvers/resolverstest"
)

// browser is a signed-in browser talking to /graphql: its session cookie, the CSRF token
// its pages hold, and the origin its pages are served from.
type browser struct {
	s      *resolverstest.Server
	cookie string
	csrf   string
	origin string
}

// gqlReply is what a /graphql answer says.
type gqlReply struct {
	status    int
	setCookie string
	Data      json.RawMessage `json:"data"`
	Errors    []struct {
		Message    string `json:"message"`
		Extensions struct {
			Code   string `json:"code"`
			Reason string `json:"reason"`
		} `json:"extensions"`
	} `json:"errors"`
}

// code is the first error's code, or OK.
func (r gqlReply) code() string {
	if len(r.Errors) == 0 {
		return "OK"
	}
	return r.Errors[0].Extensions.Code
}

// send makes one request with the browser's cookie; header adds or removes (empty value)
// headers after the browser's own.
func (b browser) send(t *testing.T, method, query string, header map[string]string) gqlReply {
	t.Helper()
	var req *http.Request
	if method == http.MethodGet {
		req = httptest.NewRequest(method, "/graphql?query="+url.QueryEscape(query), nil)
	} else {
		body, _ := json.Marshal(map[string]any{"query": query})
		req = httptest.NewRequest(method, "/graphql", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
	}
	req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: b.cookie})
	req.Header.Set("Origin", b.origin)
	req.Header.Set(auth.CSRFHeader, b.csrf)
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	b.s.GraphQL.ServeHTTP(rec, req)
	out := gqlReply{status: rec.Code, setCookie: rec.Header().Get("Set-Cookie")}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("not a GraphQL answer (%d): %s", rec.Code, rec.Body)
	}
	return out
}

func signedInBrowser(t *testing.T, s *resolverstest.Server, spec resolverstest.UserSpec) (browser, resolverstest.User) {
	t.Helper()
	u := s.NewUser(t, spec)
	cookie, csrf := s.NewUserSession(t, u.ID)
	return browser{s: s, cookie: cookie, csrf: csrf, origin: resolverstest.PortalURL}, u
}

func TestABrowserSessionActsAsItsUserOnGraphQL(t *testing.T) {
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	b, u := signedInBrowser(t, s, resolverstest.UserSpec{Scope: "customers:read", Orgs: []uuid.UUID{org.ID}, Role: "admin"})

	var me struct {
		Viewer struct {
			ID, Email     string
			CsrfToken     string
			Organizations []struct {
				Role         string
				Organization struct{ ID string }
			}
		}
	}
	reply := b.send(t, http.MethodGet, `{ viewer { id email csrfToken organizations { role organization { id } } } }`, nil)
	if reply.code() != "OK" || json.Unmarshal(reply.Data, &me) != nil {
		t.Fatalf("viewer: %d %+v", reply.status, reply)
	}
	v := me.Viewer
	if v.ID != u.ID.String() || v.Email != u.Email || v.CsrfToken != b.csrf || len(v.Organizations) != 1 ||
		v.Organizations[0].Role != "admin" || v.Organizations[0].Organization.ID != org.ID.String() {
		t.Errorf("viewer = %+v, want the session's user, its CSRF token and its admin membership", v)
	}

	t.Run("the session acts within its user's organizations with every scope", func(t *testing.T) {
		reply := b.send(t, http.MethodPost, `mutation { createCustomer(input: {email: "c@example.com"}) { id } }`, nil)
		if reply.code() != "OK" {
			t.Errorf("createCustomer through the session: %+v", reply)
		}
	})
	t.Run("the session lists itself as current", func(t *testing.T) {
		var got struct {
			UserSessions []struct {
				ID, UserAgent string
				Current       bool
			}
		}
		_, _ = s.NewUserSession(t, u.ID)
		reply := b.send(t, http.MethodPost, `{ userSessions { id userAgent current } }`, nil)
		if json.Unmarshal(reply.Data, &got) != nil || len(got.UserSessions) != 2 {
			t.Fatalf("userSessions: %+v", reply)
		}
		current := 0
		for _, x := range got.UserSessions {
			if x.Current {
				current++
			}
		}
		if current != 1 {
			t.Errorf("%d sessions are current, want 1: %+v", current, got.UserSessions)
		}
	})
	t.Run("a personal access token sees no CSRF token and cannot sign out", func(t *testing.T) {
		var got struct{ Viewer struct{ CsrfToken *string } }
		s.Query(t, u.Token, `{ viewer { csrfToken } }`, nil, &got)
		if got.Viewer.CsrfToken != nil {
			t.Errorf("a token's viewer has the CSRF token %q", *got.Viewer.CsrfToken)
		}
		e := s.QueryError(t, u.Token, `mutation { signOut }`, nil)
		if e.Extensions.Code != "BAD_USER_INPUT" {
			t.Errorf("signOut with a token: %+v", e)
		}
	})
}

// TestCookieRequestsThatMayChangeSomethingProveTheirPage is the CSRF rule: a request the
// cookie authenticates that is not a GET needs the session's token from a trusted origin.
func TestCookieRequestsThatMayChangeSomethingProveTheirPage(t *testing.T) {
	s := resolverstest.New(t)
	b, _ := signedInBrowser(t, s, resolverstest.UserSpec{Scope: "customers:read"})
	other, _ := signedInBrowser(t, s, resolverstest.UserSpec{Scope: "customers:read"})
	stranger := s.NewUser(t, resolverstest.UserSpec{Scope: "customers:read"})
	const query = `{ viewer { email } }`
	const mutation = `mutation { revokeUserSession(id: "0f8d6a51-3c1e-4b7a-9d2e-5a6b7c8d9e0f") { id } }`
	for _, c := range []struct {
		name, method, doc string
		header            map[string]string
		status            int
		code              string
	}{
		{"a cross-site POST with the cookie but no token is refused", http.MethodPost, mutation,
			map[string]string{auth.CSRFHeader: "", "Origin": "https://evil.example"}, 403, "FORBIDDEN"},
		{"a POST without the token is refused even from Till's page", http.MethodPost, query,
			map[string]string{auth.CSRFHeader: ""}, 403, "FORBIDDEN"},
		{"a wrong token is refused", http.MethodPost, mutation, map[string]string{auth.CSRFHeader: "x" + b.csrf[1:]}, 403, "FORBIDDEN"},
		{"another session's token is refused", http.MethodPost, mutation, map[string]string{auth.CSRFHeader: other.csrf}, 403, "FORBIDDEN"},
		{"the right token from another site's page is refused", http.MethodPost, mutation,
			map[string]string{"Origin": "https://evil.example"}, 403, "FORBIDDEN"},
		{"the right token from an opaque origin is refused", http.MethodPost, mutation, map[string]string{"Origin": "null"}, 403, "FORBIDDEN"},
		{"the right token without Origin from another site is refused", http.MethodPost, mutation,
			map[string]string{"Origin": "", "Sec-Fetch-Site": "cross-site"}, 403, "FORBIDDEN"},
		{"the right token from Till's page passes", http.MethodPost, mutation, nil, 200, "NOT_FOUND"},
		{"the right token from the request's own host passes", http.MethodPost, mutation,
			map[string]string{"Origin": "http://example.com"}, 200, "NOT_FOUND"},
		{"a GET query needs no token", http.MethodGet, query, map[string]string{auth.CSRFHeader: "", "Origin": ""}, 200, "OK"},
		{"a GET never runs a mutation", http.MethodGet, mutation, nil, 405, "BAD_USER_INPUT"},
		{"a bearer token wins over the cookie, and needs no CSRF token", http.MethodPost, query,
			map[string]string{"Authorization": "Bearer " + stranger.Token, auth.CSRFHeader: "", "Origin": "https://evil.example"}, 200, "OK"},
	} {
		t.Run(c.name, func(t *testing.T) {
			reply := b.send(t, c.method, c.doc, c.header)
			if reply.status != c.status || reply.code() != c.code {
				t.Errorf("HTTP %d %s, want %d %s: %+v", reply.status, reply.code(), c.status, c.code, reply.Errors)
			}
			if c.status == 403 && reply.code() != "OK" && reply.Errors[0].Extensions.Reason != "CSRFVerificationFailed" {
				t.Errorf("reason %q, want CSRFVerificationFailed", reply.Errors[0].Extensions.Reason)
			}
		})
	}
	t.Run("the bearer token's user is the one served", func(t *testing.T) {
		var got struct{ Viewer struct{ Email string } }
		reply := b.send(t, http.MethodPost, query, map[string]string{"Authorization": "Bearer " + stranger.Token})
		if json.Unmarshal(reply.Data, &got) != nil || got.Viewer.Email != stranger.Email {
			t.Errorf("viewer %+v, want the bearer token's user %s", reply, stranger.Email)
		}
	})
}

func TestARevokedOrExpiredSessionStopsAtOnce(t *testing.T) {
	s := resolverstest.New(t)
	b, u := signedInBrowser(t, s, resolverstest.UserSpec{Scope: "customers:read"})
	second := b
	second.cookie, second.csrf = s.NewUserSession(t, u.ID)
	outsider, _ := signedInBrowser(t, s, resolverstest.UserSpec{Scope: "customers:read"})
	signedIn := func(x browser) bool { return x.send(t, http.MethodGet, `{ viewer { id } }`, nil).code() == "OK" }

	var list struct {
		UserSessions []struct {
			ID      string
			Current bool
		}
	}
	if err := json.Unmarshal(b.send(t, http.MethodGet, `{ userSessions { id current } }`, nil).Data, &list); err != nil {
		t.Fatal(err)
	}
	var firstID string
	for _, x := range list.UserSessions {
		if x.Current {
			firstID = x.ID
		}
	}
	t.Run("another user's session is not found", func(t *testing.T) {
		doc := `mutation { revokeUserSession(id: "` + firstID + `") { id } }`
		coverTenancy(doc)
		reply := outsider.send(t, http.MethodPost, doc, nil)
		if reply.code() != "NOT_FOUND" || !signedIn(b) {
			t.Errorf("revoking another user's session: %+v", reply)
		}
	})
	t.Run("a session revoked from another stops at once", func(t *testing.T) {
		reply := second.send(t, http.MethodPost, `mutation { revokeUserSession(id: "`+firstID+`") { id } }`, nil)
		if reply.code() != "OK" {
			t.Fatalf("revoking: %+v", reply)
		}
		after := b.send(t, http.MethodGet, `{ viewer { id } }`, nil)
		if after.code() != "UNAUTHENTICATED" || !strings.Contains(after.setCookie, auth.SessionCookie+"=;") {
			t.Errorf("the revoked session: %+v, Set-Cookie %q; want anonymous and the cookie dropped", after, after.setCookie)
		}
	})
	t.Run("signing out ends the current session", func(t *testing.T) {
		if reply := second.send(t, http.MethodPost, `mutation { signOut }`, nil); reply.code() != "OK" {
			t.Fatalf("signOut: %+v", reply)
		}
		if signedIn(second) {
			t.Error("the session still works after signing out")
		}
	})
	t.Run("an expired session stops", func(t *testing.T) {
		third := b
		third.cookie, third.csrf = s.NewUserSession(t, u.ID)
		if !signedIn(third) {
			t.Fatal("a fresh session does not work")
		}
		s.Exec(t, `UPDATE user_sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1`, u.ID)
		if signedIn(third) {
			t.Error("an expired session still works")
		}
	})
	t.Run("a cookie Till never made is no session", func(t *testing.T) {
		forged := b
		forged.cookie = auth.Generate(auth.PrefixUserSession)
		if reply := forged.send(t, http.MethodGet, `{ viewer { id } }`, nil); reply.code() != "UNAUTHENTICATED" {
			t.Errorf("a forged cookie: %+v", reply)
		}
	})
	t.Run("a session token is no bearer token", func(t *testing.T) {
		third := b
		third.cookie, _ = s.NewUserSession(t, u.ID)
		reply := browser{s: s}.send(t, http.MethodGet, `{ viewer { id } }`, map[string]string{"Authorization": "Bearer " + third.cookie})
		if reply.status != http.StatusUnauthorized {
			t.Errorf("a session token as a bearer token: %d %+v", reply.status, reply)
		}
	})
}

func TestSigningInPastTheCapEndsTheOldestSession(t *testing.T) {
	w := newSignInWorld(t)
	ctx := t.Context()
	var first string
	for i := range resolvers.MaxUserSessions + 1 {
		code, _, _ := w.request(t, "many@example.com")
		out, err := w.Resolver.SignInWithCode(ctx, "many@example.com", code, client)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = out.Session.ID.String()
		}
	}
	var live int
	var oldestRevoked bool
	w.Get(t, &live, `SELECT count(*) FROM user_sessions WHERE deleted_at IS NULL`)
	w.Get(t, &oldestRevoked, `SELECT deleted_at IS NOT NULL FROM user_sessions WHERE id = $1`, first)
	if live != resolvers.MaxUserSessions || !oldestRevoked {
		t.Errorf("%d live sessions, the first revoked: %t; want %d and true", live, oldestRevoked, resolvers.MaxUserSessions)
	}
}
