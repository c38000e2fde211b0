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
// It panics if resolve is nil or secret is empty: both are wiring mistakes
// that would otherwise authenticate nobody or hash with a guessable key.
func Middleware(resolve Resolver, secret []byte) func(http.Handler) http.Handler {
	if resolve == nil {
		panic("auth: Middleware needs a Resolver")
	}
	if len(secret) == 0 {
		panic("auth: Middleware needs a non-empty secret")
	}
	secret = slices.Clone(secret)
	return func(next http.Handler) http.Handler {
		refuse := func(w http.ResponseWriter, _ *http.Request, err error) {
			if errors.Is(err, ErrInvalidToken) {
				WriteInvalidToken(w)
				return
			}
			writeInternalError(w)
		}
		if tr, ok := next.(TokenRefuser); ok {
			refuse = tr.RefuseToken
		}
		return forgettingChanges(resolve, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			token, ok := BearerToken(r.Header.Get("Authorization"))
			if !ok {
				next.ServeHTTP(w, r)
				return
			}
			kind := Classify(token)
			switch {
			case kind == TokenInvalid:
				refuse(w, r, ErrInvalidToken)
				return
			case kind == TokenClientRegistration:
				next.ServeHTTP(w, r)
				return
			case !ChecksumValid(token):
				refuse(w, r, ErrInvalidToken)
				return
			}
			ctx := r.Context()
			p, err := resolve.ResolveToken(ctx, kind, Hash(secret, token))
			switch {
			case errors.Is(err, ErrInvalidToken):
				refuse(w, r, ErrInvalidToken)
				return
			case err != nil:
				slog.ErrorContext(ctx, "auth: resolving bearer token failed",
					"token_kind", kind.String(), "error", err)
				refuse(w, r, err)
				return
			case !kindFits(kind, p.Kind):
				slog.ErrorContext(ctx, "auth: resolver returned a principal of the wrong kind",
					"token_kind", kind.String(), "principal_kind", p.Kind.String())
				refuse(w, r, errWrongKind)
				return
			}
			if p.Kind == KindCustomerSession || p.Kind == KindMemberSession {
				p.Scopes = NewScopeSet(ScopeCustomerPortalWrite)
			}
			next.ServeHTTP(w, r.WithContext(WithPrincipal(ctx, p)))
		}))
	}
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
	case TokenPersonal:
		return kind == KindUser
	default:
		return false
	}
}
