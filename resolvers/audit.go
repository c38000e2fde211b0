package resolvers

import (
	"context"
	"net/http"

	"github.com/99designs/gqlgen/graphql"

	"till/internal/auth"
	"till/internal/ratelimit"
	"till/internal/reqinfo"
	"till/storage"
)

// The API a change came through, as the audit log names it.
const (
	auditAPIGraphQL = "graphql"
	auditAPIV1      = "v1"
)

// auditActor is who the principal in ctx is, as the audit log records it.
func auditActor(ctx context.Context, api string) storage.AuditContext {
	p := auth.FromContext(ctx)
	a := storage.AuditContext{API: api, TokenID: p.TokenID, OAuthClientID: p.OAuthClientID}
	switch p.Kind {
	case auth.KindOrganization:
		a.Kind = storage.AuditActorKindOrganization
	case auth.KindUser:
		a.Kind, a.UserID = storage.AuditActorKindUser, p.UserID
	case auth.KindCustomerSession:
		a.Kind, a.CustomerID = storage.AuditActorKindCustomerSession, p.CustomerID
	case auth.KindMemberSession:
		a.Kind, a.CustomerID, a.MemberID = storage.AuditActorKindMemberSession, p.CustomerID, p.MemberID
	default:
		a.Kind = storage.AuditActorKindAnonymous
	}
	return a
}

// AuditRequests records, for the transactions the request's use cases run, who makes the
// request (its principal, so it goes after the bearer middleware), through which api
// (graphql or v1) and from where: the client address the rate limits count (an IPv6
// client's /64), the user agent and the request id. The GraphQL root field or the /v1 route
// adds what operation it is (AuditOperation).
func AuditRequests(api string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		next.ServeHTTP(w, req.WithContext(requestAudit(req, api)))
	})
}

// requestAudit is req's context with the request's actor.
func requestAudit(req *http.Request, api string) context.Context {
	ctx := req.Context()
	a := auditActor(ctx, api)
	ip, ok := ratelimit.ClientIPFrom(ctx)
	if !ok {
		ip = ratelimit.ClientIP(nil)(req)
	}
	a.IP, a.UserAgent = ip, req.UserAgent()
	if info := reqinfo.From(ctx); info != nil {
		a.RequestID = info.ID
	}
	return storage.WithAuditContext(ctx, a)
}

// ActingAs is ctx with p as its principal and as the actor its changes are audited as: for a
// route that authenticates its caller itself (the consent page by the session cookie), once
// it has.
func ActingAs(ctx context.Context, p auth.Principal) context.Context {
	return auditAs(auth.WithPrincipal(ctx, p), p)
}

// auditAs is ctx with p as its audit actor, keeping the request's operation and origin.
func auditAs(ctx context.Context, p auth.Principal) context.Context {
	a, _ := storage.AuditContextFrom(ctx)
	who := auditActor(auth.WithPrincipal(ctx, p), a.API)
	a.Kind, a.UserID, a.TokenID, a.OAuthClientID, a.CustomerID, a.MemberID = who.Kind, who.UserID, who.TokenID,
		who.OAuthClientID, who.CustomerID, who.MemberID
	return storage.WithAuditContext(ctx, a)
}

// AuditOperation names the operation of a /v1 route that runs no GraphQL (an OAuth2
// endpoint) for the changes it makes.
func AuditOperation(operation string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		next.ServeHTTP(w, req.WithContext(withAuditOperation(req.Context(), operation, auditAPIV1)))
	})
}

// withAuditOperation is ctx with operation as its actor's operation; an actor is made from
// the principal when ctx has none yet (an operation run in process, such as till demo's).
func withAuditOperation(ctx context.Context, operation, api string) context.Context {
	a, ok := storage.AuditContextFrom(ctx)
	if !ok {
		a = auditActor(ctx, api)
	}
	a.Operation = operation
	return storage.WithAuditContext(ctx, a)
}

// auditOperations names every root field's changes after the field (createProduct,
// updateCustomer), on /graphql and on the /v1 routes that run GraphQL alike.
type auditOperations struct{}

var (
	_ graphql.HandlerExtension     = auditOperations{}
	_ graphql.RootFieldInterceptor = auditOperations{}
)

// ExtensionName implements graphql.HandlerExtension.
func (auditOperations) ExtensionName() string { return "AuditOperations" }

// Validate implements graphql.HandlerExtension.
func (auditOperations) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptRootField implements graphql.RootFieldInterceptor.
func (auditOperations) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	if fc := graphql.GetRootFieldContext(ctx); fc != nil {
		ctx = withAuditOperation(ctx, fc.Field.Name, auditAPIGraphQL)
	}
	return next(ctx)
}
