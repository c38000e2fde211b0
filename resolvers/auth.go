package resolvers

import (
	"context"
	"errors"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// HasScope enforces @hasScope: organization and user principals only (sessions count as
// anonymous here, as upstream downgrades them; with usersOnly, users only), with at least one
// of the listed scopes, and for users the permission from their role (see roles.go).
func (r *Resolver) HasScope(ctx context.Context, _ any, next graphql.Resolver, anyOf []model.Scope,
	permission model.Permission, usersOnly bool) (any, error) {
	if err := checkScope(ctx, anyOf, usersOnly); err != nil {
		return nil, err
	}
	ctx, err := r.checkRole(ctx, permission)
	if err != nil {
		return nil, err
	}
	return next(ctx)
}

// Public is @public: the field needs no credential, so there is nothing to check here. The
// directive exists so that every root field declares its guard where tests can read it.
func Public(ctx context.Context, _ any, next graphql.Resolver, _ string) (any, error) {
	return next(ctx)
}

// FirstParty enforces @firstParty: a user acting in person, through their own personal
// access token or browser session, never through a token an OAuth2 application holds for
// them.
func FirstParty(ctx context.Context, _ any, next graphql.Resolver) (any, error) {
	if err := checkFirstParty(ctx); err != nil {
		return nil, err
	}
	return next(ctx)
}

func checkFirstParty(ctx context.Context) error {
	p := auth.FromContext(ctx)
	if p.Kind != auth.KindUser {
		return Unauthorized()
	}
	if p.OAuthClientID != "" {
		return NotPermitted("OAuth2 access tokens cannot act as the user in person.")
	}
	return nil
}

// Portal enforces @portal: customer and member sessions only.
func Portal(ctx context.Context, _ any, next graphql.Resolver) (any, error) {
	if err := checkPortal(ctx); err != nil {
		return nil, err
	}
	return next(ctx)
}

// Billing enforces @billing: a portal session allowed to use billing features.
func (r *Resolver) Billing(ctx context.Context, _ any, next graphql.Resolver) (any, error) {
	if err := r.checkBilling(ctx); err != nil {
		return nil, err
	}
	return next(ctx)
}

func (r *Resolver) checkBilling(ctx context.Context) error {
	if err := checkPortal(ctx); err != nil {
		return err
	}
	return r.requireBillingRole(ctx)
}

func checkScope(ctx context.Context, anyOf []model.Scope, usersOnly bool) error {
	p := auth.FromContext(ctx)
	if p.Kind != auth.KindUser && (usersOnly || p.Kind != auth.KindOrganization) {
		return Unauthorized()
	}
	required := make([]auth.Scope, len(anyOf))
	names := make([]string, len(anyOf))
	for i, s := range anyOf {
		required[i] = wireScope(s)
		names[i] = string(required[i])
	}
	if !p.HasAnyScope(required...) {
		return InsufficientScope(names)
	}
	return nil
}

func checkPortal(ctx context.Context) error {
	p := auth.FromContext(ctx)
	if p.Kind != auth.KindCustomerSession && p.Kind != auth.KindMemberSession {
		return Unauthorized()
	}
	return nil
}

// Authorize applies the @hasScope, @portal and @billing rules of a document's fields
// without running it. /v1 calls it before validating parameters and bodies, because upstream
// authenticates first: a request that is both unauthorized and malformed gets 401/403, not
// 422. The rules stay the schema's directives; this only reads them earlier. doc must have
// been loaded against the schema (gqlparser.LoadQuery) so its fields carry definitions.
func (r *Resolver) Authorize(ctx context.Context, doc *ast.QueryDocument) error {
	for _, op := range doc.Operations {
		if err := r.authorizeSelections(ctx, op.SelectionSet, doc.Fragments, 0); err != nil {
			return err
		}
	}
	return nil
}

// authorizeSelections checks the directives of every field of a selection set, depth first
// in document order, as execution would meet them.
func (r *Resolver) authorizeSelections(ctx context.Context, set ast.SelectionSet, frags ast.FragmentDefinitionList, depth int) error {
	if depth > maxDepth {
		return nil
	}
	for _, sel := range set {
		var err error
		switch s := sel.(type) {
		case *ast.Field:
			if err = r.authorizeField(ctx, s); err == nil {
				err = r.authorizeSelections(ctx, s.SelectionSet, frags, depth+1)
			}
		case *ast.InlineFragment:
			err = r.authorizeSelections(ctx, s.SelectionSet, frags, depth+1)
		case *ast.FragmentSpread:
			if f := frags.ForName(s.Name); f != nil {
				err = r.authorizeSelections(ctx, f.SelectionSet, frags, depth+1)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *Resolver) authorizeField(ctx context.Context, f *ast.Field) error {
	if f.Definition == nil {
		return nil
	}
	if f.Definition.Directives.ForName("portal") != nil {
		if err := checkPortal(ctx); err != nil {
			return err
		}
	}
	if f.Definition.Directives.ForName("firstParty") != nil {
		if err := checkFirstParty(ctx); err != nil {
			return err
		}
	}
	if f.Definition.Directives.ForName("billing") != nil {
		if err := r.checkBilling(ctx); err != nil {
			return err
		}
	}
	if d := f.Definition.Directives.ForName("hasScope"); d != nil {
		var anyOf []model.Scope
		if arg := d.Arguments.ForName("any"); arg != nil {
			for _, c := range arg.Value.Children {
				anyOf = append(anyOf, model.Scope(c.Value.Raw))
			}
		}
		usersOnly := false
		if arg := d.Arguments.ForName("usersOnly"); arg != nil {
			usersOnly = arg.Value.Raw == "true"
		}
		if err := checkScope(ctx, anyOf, usersOnly); err != nil {
			return err
		}
	}
	return nil
}

// wireScope turns customer_portal_write into customer_portal:write.
func wireScope(s model.Scope) auth.Scope {
	v := strings.ToLower(string(s))
	i := strings.LastIndex(v, "_")
	return auth.Scope(v[:i] + ":" + v[i+1:])
}

// organizations lists the organizations the principal may see; tenancy filters use it.
func organizations(ctx context.Context) []uuid.UUID {
	p := auth.FromContext(ctx)
	switch p.Kind {
	case auth.KindOrganization, auth.KindCustomerSession, auth.KindMemberSession:
		return []uuid.UUID{p.OrganizationID}
	case auth.KindUser:
		if n, ok := narrowed(ctx); ok {
			return n.granted
		}
		return p.Organizations
	}
	return nil
}

// memberships counts the organizations the principal belongs to, whatever its role there
// allows: the count that decides whether a call must name its organization.
func memberships(ctx context.Context) int {
	if p := auth.FromContext(ctx); p.Kind == auth.KindUser {
		return len(p.Organizations)
	}
	return len(organizations(ctx))
}

// targetOrganization picks the organization a create acts in: an organization token's own,
// or for user tokens the requested one (required when the user belongs to several, even if
// the role allows the call in only one of them).
func targetOrganization(ctx context.Context, requested *uuid.UUID) (uuid.UUID, error) {
	orgs := organizations(ctx)
	if requested != nil {
		for _, o := range orgs {
			if o == *requested {
				return o, nil
			}
		}
		return uuid.Nil, Invalid("value_error", "Organization not found.", requested.String(), "input", "organizationId")
	}
	if len(orgs) == 1 && memberships(ctx) == 1 {
		return orgs[0], nil
	}
	if n, ok := narrowed(ctx); ok && len(orgs) == 0 {
		return uuid.Nil, permissionDenied(n.perm)
	}
	return uuid.Nil, Invalid("missing", "organization_id is required.", nil, "input", "organizationId")
}

// ResolveToken implements auth.Resolver over the token tables.
func (r *Resolver) ResolveToken(ctx context.Context, kind auth.TokenKind, hash string) (auth.Principal, error) {
	var (
		t   *storage.ResolvedToken
		err error
		p   auth.Principal
	)
	switch kind {
	case auth.TokenOrganization:
		t, err = storage.ResolveOrganizationToken(ctx, r.db, hash)
		p.Kind = auth.KindOrganization
	case auth.TokenPersonal:
		t, err = storage.ResolvePersonalToken(ctx, r.db, hash)
		p.Kind = auth.KindUser
	case auth.TokenCustomerSession:
		t, err = storage.ResolveCustomerSession(ctx, r.db, hash)
		p.Kind = auth.KindCustomerSession
	case auth.TokenMemberSession:
		t, err = storage.ResolveMemberSession(ctx, r.db, hash)
		p.Kind = auth.KindMemberSession
	case auth.TokenUserSession:
		return r.resolveUserSession(ctx, hash)
	case auth.TokenOAuthAccess:
		return r.resolveOAuthToken(ctx, hash)
	default:
		return auth.Principal{}, auth.ErrInvalidToken
	}
	if errors.Is(err, storage.ErrNotFound) {
		return auth.Principal{}, auth.ErrInvalidToken
	}
	if err != nil {
		return auth.Principal{}, err
	}
	if kind == auth.TokenPersonal {
		r.recordPersonalTokenUse(ctx, t)
	}
	p.TokenID, p.OrganizationID, p.UserID = t.ID, t.OrganizationID, t.UserID
	p.CustomerID, p.MemberID, p.MemberRole, p.Organizations = t.CustomerID, t.MemberID, t.MemberRole, t.Organizations
	p.Roles = rolesOf(t.Roles)
	p.ExpiresAt = t.ExpiresAt
	if t.Customer != nil {
		p.Subject = t.Customer
	}
	if t.Scope != "" {
		if p.Scopes, err = auth.ParseScopes(t.Scope); err != nil {
			return auth.Principal{}, auth.ErrInvalidToken
		}
	}
	return p, nil
}
