package auth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"till/internal/auth"
)

// listening is a feed that always listens and never notifies: only a request's own
// SessionsChanged can empty the cache.
type listening struct{}

func (listening) Listening() bool { return true }

// sessionStore answers one customer session whose customer's name the test changes.
type sessionStore struct {
	name  string
	calls int
}

func (s *sessionStore) ResolveToken(context.Context, auth.TokenKind, string) (auth.Principal, error) {
	s.calls++
	return auth.Principal{Kind: auth.KindCustomerSession, Subject: s.name}, nil
}

func TestARequestThatChangesSessionsEmptiesTheCacheWhenItIsDone(t *testing.T) {
	secret := []byte("secret")
	session := auth.Generate(auth.PrefixCustomerSession)
	tests := []struct {
		name    string
		changes bool // the request calls SessionsChanged
		token   bool // the request is authenticated
		want    string
	}{
		{"a change forgets", true, true, "after"},
		{"an anonymous change forgets too", true, false, "after"},
		{"a request that changes nothing keeps the cache", false, true, "before"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &sessionStore{name: "before"}
			cache := auth.NewCache(store, time.Hour, time.Now, listening{})
			var seen string
			h := auth.Middleware(cache, secret)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/change" {
					store.name = "after" // the change commits inside the request
					if tt.changes {
						auth.SessionsChanged(r.Context())
					}
					return
				}
				seen, _ = auth.FromContext(r.Context()).Subject.(string)
			}))
			do := func(path string, token bool) {
				req := httptest.NewRequest(http.MethodPost, path, nil)
				if token {
					req.Header.Set("Authorization", "Bearer "+session)
				}
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
			do("/read", true)
			do("/change", tt.token)
			do("/read", true)
			if seen != tt.want {
				t.Errorf("read %q after the change, want %q", seen, tt.want)
			}
		})
	}
	auth.SessionsChanged(context.Background()) // outside a request: nothing to do, no panic
}
