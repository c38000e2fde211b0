package auth

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Kind is what a request acts as. Each request has exactly one, and routes
// accept only some kinds: a kind a route does not accept is treated as
// [KindAnonymous] there (contract §1.6 step 4).
type Kind int

// Principal kinds. The zero value is anonymous, so a missing principal is
// never mistaken for an authenticated one.
const (
	// KindAnonymous is a request without a usable credential.
	KindAnonymous Kind = iota
	// KindOrganization acts for one organization (organization access token,
	// or a legacy organization OAuth2 token).
	KindOrganization
	// KindUser acts for a user through a personal access token, an OAuth2
	// token or a browser session, across the organizations the user belongs to.
	KindUser
	// KindCustomerSession acts for one customer in the customer portal.
	KindCustomerSession
	// KindMemberSession acts for one member of a customer in the portal.
	KindMemberSession
)

// String names the kind for logs and test failures.
func (k Kind) String() string {
	switch k {
	case KindOrganization:
		return "organization"
	case KindUser:
		return "user"
	case KindCustomerSession:
		return "customer_session"
	case KindMemberSession:
		return "member_session"
	default:
		return "anonymous"
	}
}

// Principal is who a request acts as and what it may do. Use cases take it
// from the context rather than re-reading credentials, so one resolution per
// request decides tenancy and scopes everywhere.
type Principal struct {
	// Kind says which of the id fields are meaningful.
	Kind Kind
	// TokenID is the id of the credential row (token or session), for usage
	// recording, revocation and audit; uuid.Nil for anonymous.
	TokenID uuid.UUID
	// OrganizationID is the tenant of organization principals and of
	// customer and member sessions.
	OrganizationID uuid.UUID
	// UserID is set for user principals.
	UserID uuid.UUID
	// CustomerID is set for customer sessions, and for member sessions as the
	// member's customer, whose data the portal shows.
	CustomerID uuid.UUID
	// MemberID is set for member sessions.
	MemberID uuid.UUID
	// MemberRole is the member's role (owner, billing_manager, member) for member sessions,
	// read with the session on every request so a changed role applies at once.
	MemberRole string
	// Scopes are the token's stored scopes; for sessions always exactly
	// customer_portal:write.
	Scopes ScopeSet
	// Organizations lists the organizations a user principal may see: the
	// user's memberships, narrowed to the token's down-scope list when it has
	// one (contract §1.6 step 7). The resolver computes it so tenancy filters
	// need no further lookup; empty means none, so a forgetful resolver fails
	// closed.
	Organizations []uuid.UUID
	// Roles is a user principal's role in each of Organizations, read with the credential
	// so a changed role applies on the next request. Guards intersect the token's scopes
	// with the permissions of the role in the organization an operation acts on; an
	// organization missing here grants nothing.
	Roles map[uuid.UUID]Role
	// OAuthClientID is the client_id of the OAuth2 application whose access token this is;
	// empty for first-party credentials (organization and personal tokens, sessions). Rules
	// that only the user in person may exercise, such as consenting to another application,
	// refuse delegated principals by it.
	OAuthClientID string
	// BrowserSession marks a user signed in through the session cookie rather than a token;
	// TokenID is then the session's id, which signing out and the list of sessions need.
	// Pages that act for the user in person, such as the OAuth2 consent page, accept only
	// these, and a cookie-carried request that may change something passes the CSRF check.
	BrowserSession bool
	// ExpiresAt is when the credential stops being valid; nil when it never does. A cache of
	// principals never keeps one past it.
	ExpiresAt *time.Time
	// Subject is a record the resolver read with the credential (a session's customer), or
	// nil. auth never reads it. A Cache shares it between the requests that use the same
	// session, so it is read-only: a use case copies it before changing anything.
	Subject any
}

// Anonymous reports whether the principal carries no identity, the case that
// turns into 401 Unauthorized on authenticated routes.
func (p Principal) Anonymous() bool {
	return p.Kind == KindAnonymous
}

// HasAnyScope reports whether the principal holds at least one of required:
// upstream's any-of rule (contract §1.6 step 5). customer_portal:write also
// satisfies customer_portal:read, because every upstream portal read route
// accepts either. With no required scopes the route has no scope requirement
// and the answer is true.
func (p Principal) HasAnyScope(required ...Scope) bool {
	if len(required) == 0 {
		return true
	}
	for _, s := range required {
		if p.Scopes.Has(s) {
			return true
		}
		if s == ScopeCustomerPortalRead && p.Scopes.Has(ScopeCustomerPortalWrite) {
			return true
		}
	}
	return false
}

// principalKey is the unexported context key type, so no other package can
// read or overwrite the principal except through this package.
type principalKey struct{}

// WithPrincipal returns a context carrying p; the middleware calls it once per
// request, and tests and background jobs use it to act as someone.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal stored by [WithPrincipal], or an
// anonymous principal when there is none, so forgetting the middleware fails
// closed.
func FromContext(ctx context.Context) Principal {
	p, _ := ctx.Value(principalKey{}).(Principal)
	return p
}
