package auth

import (
	"context"
	"net/http"
	"sync/atomic"
)

// A Cache learns of changes to sessions from PostgreSQL's notifications, which reach the
// process a moment after the change commits: on a loaded machine, tens of milliseconds.
// A client that changes a customer and at once reads the portal through the same process
// must not see the old customer in that moment, so a request that changes what a session
// lookup answers says so (SessionsChanged), and the middleware empties the cache when the
// request's handler returns: after the change committed, before the client has the answer.

// sessionsForgetter is a Resolver that keeps sessions (a Cache).
type sessionsForgetter interface{ ForgetSessions() }

// tokensForgetter is a Resolver that keeps organization and personal tokens (a Cache).
type tokensForgetter interface{ ForgetTokens() }

type (
	sessionChangesKey  struct{}
	tokensForgetterKey struct{}
)

// TokensChanged empties, at once, the tokens kept by the cache the request of ctx went
// through. A use case that revokes a token calls it after the revocation committed, so the
// revoked token is refused by this process from that moment, not only once the change
// notification arrives; other processes forget on the notification. It does nothing outside
// such a request.
func TokensChanged(ctx context.Context) {
	if f, ok := ctx.Value(tokensForgetterKey{}).(tokensForgetter); ok {
		f.ForgetTokens()
	}
}

// SessionsChanged records that the request of ctx changed a customer, a member or a
// session, so that the cache of sessions it went through forgets them once the request's
// handler returns. It does nothing outside such a request.
func SessionsChanged(ctx context.Context) {
	if changed, ok := ctx.Value(sessionChangesKey{}).(*atomic.Bool); ok {
		changed.Store(true)
	}
}

// forgettingChanges wraps next so that TokensChanged reaches the tokens resolve keeps, and
// a request that called SessionsChanged empties the sessions of resolve when it is done;
// resolve that keeps neither leaves next alone.
func forgettingChanges(resolve Resolver, next http.Handler) http.Handler {
	if tokens, ok := resolve.(tokensForgetter); ok {
		inner := next
		next = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inner.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tokensForgetterKey{}, tokens)))
		})
	}
	forget, ok := resolve.(sessionsForgetter)
	if !ok {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		changed := new(atomic.Bool)
		defer func() {
			if changed.Load() {
				forget.ForgetSessions()
			}
		}()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionChangesKey{}, changed)))
	})
}
