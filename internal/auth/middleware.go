package auth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
)

// ErrInvalidToken is what a [Resolver] returns, or wraps, when a well-formed
// token matches no live credential: unknown hash, expired, revoked, or owned
// by a deleted user, organization, customer or member. The middleware turns
// it into 401 invalid_token; any other error is a server fault.
var ErrInvalidToken = errors.New("auth: invalid token")

// errWrongKind is a resolver's principal that its token kind cannot give: a server fault.
var errWrongKind = errors.New("auth: principal of the wrong kind")

// Resolver looks a credential up by its [Hash] in the store its kind names.
// It lives in storage code; this package only defines the seam so it stays a
// leaf.
type Resolver interface {
	// ResolveToken returns the principal of the token with this hash. kind is
	// never TokenInvalid or TokenClientRegistration. The principal's Kind must
	// fit the token kind: organization tokens give KindOrganization, personal
	// tokens KindUser, OAuth2 tokens KindUser (or KindOrganization for legacy
	// till_at_o_ tokens), sessions their session kind. Session scopes are set
	// by the middleware and may be left empty.
	ResolveToken(ctx context.Context, kind TokenKind, hash string) (Principal, error)
}

// TokenRefuser is a handler that answers a refused bearer token in its own protocol, as
// /graphql answers with a GraphQL errors array where /v1 keeps upstream's OAuth2 body. err
// is [ErrInvalidToken] for a bad, expired or revoked token, another error when looking the
// token up failed (a server fault, already logged).
type TokenRefuser interface {
	RefuseToken(w http.ResponseWriter, r *http.Request, err error)
}

// Middleware authenticates every request before routing, as upstream's
// AuthSubjectMiddleware does: it reads the bearer token, classifies it by
// prefix, checks its checksum, resolves its HMAC hash (keyed by secret) and
// stores the principal for [FromContext]. Without a token — or with another
// scheme, or a non-ASCII token — the request is anonymous. A bad token gets
// 401 invalid_token on every route, including public ones, because upstream
// does so. Resolver failures other than [ErrInvalidToken] give a bare 500 and
// are logged through the default slog logger. A next handler that is a
// [TokenRefuser] writes both answers itself. With a resolver that keeps
// sessions (a [Cache]), a request that calls [SessionsChanged] empties them
// when it is done, and one that calls [TokensChanged] empties its tokens at once.
//
// With WithBrowserSessions, a request without a bearer token may be authenticated by the
// session cookie instead, under the CSRF rules of [Browser]; a bearer token wins when both
// are present.
//
// It panics if resolve is nil or secret is empty: both are wiring mistakes
// that would otherwise authenticate nobody or hash with a guessable key.
func Middleware(resolve Resolver, secret []byte, opts ...Option) func(http.Handler) http.Handler {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if resolve == nil {
		panic("auth: Middleware needs a Resolver")
	}
	if len(secret) == 0 {
		panic("auth: Middleware needs a non-empty secret")
	}
	secret = slices.Clone(secret)
	return func(next http.Handler) http.Handler {
		refuse := func(w http.ResponseWriter, _ *http.Request, err error) {
			switch {
			case errors.Is(err, ErrInvalidToken):
				WriteInvalidToken(w)
			case errors.Is(err, ErrCSRF):
				writeJSON(w, http.StatusForbidden, csrfRefusedBody)
			default:
				writeInternalError(w)
			}
		}
		if tr, ok := next.(TokenRefuser); ok {
			refuse = tr.RefuseToken
		}
		return forgettingChanges(resolve, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			token, ok := BearerToken(r.Header.Get("Authorization"))
			if !ok {
				if o.browser != nil {
					o.browser.serve(w, r, resolve, secret, refuse, next)
					return
				}
				next.ServeHTTP(w, r)
				return
			}
			if Classify(token) == TokenClientRegistration {
				next.ServeHTTP(w, r)
				return
			}
			ctx := r.Context()
			p, err := ResolveBearer(ctx, resolve, secret, token)
			if err != nil {
				refuse(w, r, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(WithPrincipal(ctx, p)))
		}))
	}
}

// Credential is a token checked and hashed once, so a long-lived connection can resolve it
// again (for every event a subscription delivers) without hashing it again.
type Credential struct {
	kind TokenKind
	hash string
	// browser marks a browser session read from its cookie.
	browser bool
}

// BearerCredential checks a bearer token as Middleware does: classified by prefix, its
// checksum checked, hashed with secret. A token no principal may hold (malformed, a client
// registration token) is [ErrInvalidToken].
func BearerCredential(secret []byte, token string) (Credential, error) {
	kind := Classify(token)
	if kind == TokenInvalid || kind == TokenClientRegistration || !ChecksumValid(token) {
		return Credential{}, ErrInvalidToken
	}
	return Credential{kind: kind, hash: Hash(secret, token)}, nil
}

// SessionCredential is the browser session whose token a session cookie carries. The caller
// applies the rules of cookie-carried requests (CSRF, origin) itself.
func SessionCredential(secret []byte, token string) Credential {
	return Credential{kind: TokenUserSession, hash: Hash(secret, token), browser: true}
}

// Resolve looks the credential up as Middleware does. It returns [ErrInvalidToken] for one
// that names no live credential and logs any other failure, which is a server fault.
func (c Credential) Resolve(ctx context.Context, resolve Resolver) (Principal, error) {
	p, _, err := c.ResolveStamped(ctx, resolve)
	return p, err
}

// ResolveStamped is Resolve with the stamp of a StampedResolver's answer (the zero Stamp
// from any other Resolver): while it is current, resolving again would give the same
// principal.
func (c Credential) ResolveStamped(ctx context.Context, resolve Resolver) (Principal, Stamp, error) {
	var (
		p     Principal
		stamp Stamp
		err   error
	)
	if stamped, ok := resolve.(StampedResolver); ok {
		p, stamp, err = stamped.ResolveStamped(ctx, c.kind, c.hash)
	} else {
		p, err = resolve.ResolveToken(ctx, c.kind, c.hash)
	}
	switch {
	case errors.Is(err, ErrInvalidToken):
		return Principal{}, Stamp{}, ErrInvalidToken
	case err != nil:
		slog.ErrorContext(ctx, "auth: resolving a credential failed", "token_kind", c.kind.String(), "error", err)
		return Principal{}, Stamp{}, err
	case !kindFits(c.kind, p.Kind):
		slog.ErrorContext(ctx, "auth: resolver returned a principal of the wrong kind",
			"token_kind", c.kind.String(), "principal_kind", p.Kind.String())
		return Principal{}, Stamp{}, errWrongKind
	}
	if p.Kind == KindCustomerSession || p.Kind == KindMemberSession {
		p.Scopes = NewScopeSet(ScopeCustomerPortalWrite)
	}
	p.BrowserSession = c.browser
	return p, stamp, nil
}

// ResolveBearer is BearerCredential resolved once.
func ResolveBearer(ctx context.Context, resolve Resolver, secret []byte, token string) (Principal, error) {
	c, err := BearerCredential(secret, token)
	if err != nil {
		return Principal{}, err
	}
	return c.Resolve(ctx, resolve)
}

// kindFits reports whether a resolver's principal kind is possible for the
// token kind, so a storage bug cannot, say, turn a PAT into a session.
func kindFits(token TokenKind, kind Kind) bool {
	switch token {
	case TokenMemberSession:
		return kind == KindMemberSession
	case TokenCustomerSession:
		return kind == KindCustomerSession
	case TokenOrganization:
		return kind == KindOrganization
	case TokenOAuthAccess:
		return kind == KindUser || kind == KindOrganization
	case TokenPersonal, TokenUserSession:
		return kind == KindUser
	default:
		return false
	}
}

// Option changes what Middleware accepts.
type Option func(*options)

type options struct {
	browser *browserSessions
}

// WithBrowserSessions makes the middleware accept a user's browser session from the session
// cookie when the request has no bearer token. Mount it only where Till's own pages and the
// dashboard call (/graphql); /v1 stays bearer-only, as upstream's public API is.
func WithBrowserSessions(b Browser) Option {
	return func(o *options) { o.browser = &browserSessions{b: b} }
}

// browserSessions authenticates requests by the session cookie.
type browserSessions struct{ b Browser }

// serve resolves the session cookie of r, if any, and serves r as that user. A cookie that
// names no live session is dropped and r served anonymously, as a request without one; a
// request that may change something must pass the CSRF check or is refused whole.
func (s *browserSessions) serve(w http.ResponseWriter, r *http.Request, resolve Resolver, secret []byte,
	refuse func(http.ResponseWriter, *http.Request, error), next http.Handler) {
	token, ok := SessionToken(r)
	if !ok {
		next.ServeHTTP(w, r)
		return
	}
	ctx := r.Context()
	p, err := SessionCredential(secret, token).Resolve(ctx, resolve)
	switch {
	case errors.Is(err, ErrInvalidToken):
		s.b.ClearSession(w, r)
		next.ServeHTTP(w, r)
		return
	case err != nil:
		refuse(w, r, err)
		return
	}
	if err := s.b.VerifyCSRF(r, secret, p.TokenID, r.Header.Get(CSRFHeader)); err != nil {
		refuse(w, r, err)
		return
	}
	next.ServeHTTP(w, r.WithContext(WithPrincipal(ctx, p)))
}
