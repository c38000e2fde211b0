package resolvers

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/internal/auth"
)

// Websocket limits: a connection must introduce itself soon, answer pings, and send only
// small messages (a subscribe message is a document, bounded like a POST body).
const (
	liveInitTimeout = 10 * time.Second
	livePing        = 25 * time.Second
)

// HandlerOption adds to what Handler serves.
type HandlerOption func(*handlerOptions)

type handlerOptions struct {
	credentials auth.Resolver
}

// WithSubscriptions serves GraphQL subscriptions over websockets (graphql-transport-ws, and
// the older graphql-ws) on the handler, resolving the credentials connections present with
// credentials (the server's cache, so a revocation announced to it ends streams at once).
// The resolver must have been built with a LiveHub.
func WithSubscriptions(credentials auth.Resolver) HandlerOption {
	return func(o *handlerOptions) { o.credentials = credentials }
}

// websocketTransport is the subscription transport. Browsers may open it from Till's own
// origin and the configured browser origins only, whatever credential they then present:
// a page elsewhere cannot ride a signed-in user's cookie (cross-site websocket hijacking).
func (r *Resolver) websocketTransport(credentials auth.Resolver) transport.Websocket {
	var origins []string
	for _, o := range r.browserOrigins {
		if u, err := url.Parse(o); err == nil && u.Host != "" {
			origins = append(origins, u.Scheme+"://"+u.Host)
		}
	}
	limit := int64(maxQueryBytes)
	return transport.Websocket{
		Implementation: newLiveSocket(websocket.AcceptOptions{OriginPatterns: origins}),
		InitFunc: func(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			conn, err := r.openLive(ctx, credentials, payload)
			if err != nil {
				return transport.WithWebsocketCloseCode(ctx, 4403), nil, err
			}
			return context.WithValue(auth.WithPrincipal(ctx, conn.first), liveConnKey{}, conn), nil, nil
		},
		InitTimeout:      liveInitTimeout,
		PingPongInterval: livePing,
		PayloadReadLimit: &limit,
	}
}

// liveSource is the credential the websocket's upgrade request carried, kept for the
// connection_init message to fall back on.
type liveSource struct {
	bearer, session string
}

type liveSourceKey struct{}

// withLiveSource keeps req's bearer token or session cookie in its context.
func withLiveSource(req *http.Request) *http.Request {
	var s liveSource
	if token, ok := auth.BearerToken(req.Header.Get("Authorization")); ok {
		s.bearer = token
	} else if token, ok := auth.SessionToken(req); ok {
		s.session = token
	}
	return req.WithContext(context.WithValue(req.Context(), liveSourceKey{}, s))
}

// openLive authenticates a connection: the bearer token of connection_init's Authorization
// (or authorization) entry, else the upgrade request's bearer token, else its session cookie.
// A connection without a valid credential is closed: no subscription is open to anyone.
func (r *Resolver) openLive(ctx context.Context, credentials auth.Resolver, payload transport.InitPayload) (*liveConn, error) {
	src, _ := ctx.Value(liveSourceKey{}).(liveSource)
	for key, v := range payload {
		if s, ok := v.(string); ok && strings.EqualFold(key, "authorization") {
			token, ok := auth.BearerToken(s)
			if !ok {
				return nil, errors.New("the Authorization entry must be Bearer <token>")
			}
			src = liveSource{bearer: token}
		}
	}
	var credential auth.Credential
	switch {
	case src.bearer != "":
		c, err := auth.BearerCredential(r.secret, src.bearer)
		if err != nil {
			return nil, errors.New("Unauthorized: the token is invalid, expired or revoked")
		}
		credential = c
	case src.session != "":
		credential = auth.SessionCredential(r.secret, src.session)
	default:
		return nil, errors.New("Unauthorized: send a bearer token in the connection_init payload's Authorization entry")
	}
	conn := &liveConn{resolve: func(ctx context.Context) (auth.Principal, auth.Stamp, error) {
		return credential.ResolveStamped(ctx, credentials)
	}}
	p, _, err := conn.resolve(ctx)
	if err != nil {
		if errors.Is(err, auth.ErrInvalidToken) {
			return nil, errors.New("Unauthorized: the token is invalid, expired or revoked")
		}
		return nil, errors.New("the credential could not be checked; try again")
	}
	conn.first = p
	return conn, nil
}

// liveConn is one authenticated websocket connection.
type liveConn struct {
	// first is the principal the connection was opened with.
	first   auth.Principal
	resolve func(context.Context) (auth.Principal, auth.Stamp, error)
	active  atomic.Int32
}

type liveConnKey struct{}

// take counts a new subscription, refusing one over maxLivePerConnection.
func (c *liveConn) take() bool {
	if c.active.Add(1) > maxLivePerConnection {
		c.active.Add(-1)
		return false
	}
	return true
}

// release ends one subscription's count.
func (c *liveConn) release() { c.active.Add(-1) }

// principal resolves the connection's credential again, with the stamp of the credential
// cache's answer.
func (c *liveConn) principal(ctx context.Context) (auth.Principal, auth.Stamp, error) {
	p, stamp, err := c.resolve(ctx)
	if errors.Is(err, auth.ErrInvalidToken) {
		return p, stamp, Unauthorized()
	}
	return p, stamp, err
}

// liveOperations keeps each transport to its kind of operation: queries and mutations go
// over HTTP, where the CSRF token, the request's audit record and the HTTP limits apply;
// subscriptions go over the websocket.
type liveOperations struct{}

// ExtensionName implements graphql.HandlerExtension.
func (liveOperations) ExtensionName() string { return "LiveOperations" }

// Validate implements graphql.HandlerExtension.
func (liveOperations) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext implements graphql.OperationContextMutator.
func (liveOperations) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if op.Operation == nil {
		return nil
	}
	_, socket := ctx.Value(liveConnKey{}).(*liveConn)
	msg := ""
	switch subscription := op.Operation.Operation == ast.Subscription; {
	case socket && !subscription:
		msg = "Only subscriptions are served over the websocket: send queries and mutations over HTTP."
	case !socket && subscription:
		msg = "Subscriptions are served over a websocket at /graphql (graphql-transport-ws)."
	default:
		return nil
	}
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": GraphQLBadUserInput}}
}
