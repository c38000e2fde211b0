package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/internal/auth"
)

// standInCookie carries the stand-in's browser session.
const standInCookie = "till_test_session"

// signInStandIn serves app with a stand-in for browser sign-in: /login signs the browser in
// as email at once and sends it on to its same-origin return_to, and a request carrying the
// stand-in's cookie acts as that user's browser session, as the session middleware resolves
// one: every scope, the user's organizations.
func signInStandIn(t *testing.T, app testApp, email string) http.Handler {
	t.Helper()
	p := auth.Principal{Kind: auth.KindUser, TokenID: uuid.New(), BrowserSession: true,
		Scopes: auth.NewScopeSet(auth.AllScopes()...)}
	if err := app.db.DB.Get(&p.UserID, `SELECT id FROM users WHERE email = $1`, email); err != nil {
		t.Fatal(err)
	}
	if err := app.db.DB.Select(&p.Organizations, `SELECT organization_id FROM user_organizations WHERE user_id = $1`,
		p.UserID); err != nil {
		t.Fatal(err)
	}
	session := uuid.NewString()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" {
			back := r.URL.Query().Get("return_to")
			if !strings.HasPrefix(back, "/") || strings.HasPrefix(back, "//") {
				http.Error(w, "return_to must be a path of this origin", http.StatusBadRequest)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: standInCookie, Value: session, Path: "/", HttpOnly: true,
				SameSite: http.SameSiteLaxMode})
			http.Redirect(w, r, back, http.StatusFound)
			return
		}
		if c, err := r.Cookie(standInCookie); err == nil && c.Value == session {
			r = r.WithContext(auth.WithPrincipal(r.Context(), p))
		}
		app.handler.ServeHTTP(w, r)
	})
}
