package ratelimit

import (
	"context"
	"net/http"
)

// clientIPKey is the context key of the caller's address.
type clientIPKey struct{}

// WithClientIP stores the address each request counts against in its
// context, computed once by clientIP (see ClientIP), so every rule that a
// request meets, whichever transport or operation it reaches, agrees on who
// is calling.
func WithClientIP(clientIP func(*http.Request) string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(ContextWithClientIP(r.Context(), clientIP(r))))
		})
	}
}

// ContextWithClientIP returns ctx carrying ip as the caller's address.
func ContextWithClientIP(ctx context.Context, ip string) context.Context {
	return context.WithValue(ctx, clientIPKey{}, ip)
}

// ClientIPFrom returns the caller's address stored by WithClientIP; found is
// false for work that did not arrive over HTTP.
func ClientIPFrom(ctx context.Context) (ip string, found bool) {
	ip, found = ctx.Value(clientIPKey{}).(string)
	return ip, found
}
