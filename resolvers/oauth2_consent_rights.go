package resolvers

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/auth"
	"till/storage"
)

// A consent hands an application part of the consenting user's own power, so it never
// grants more than the user holds (DESIGN §5). What the user holds is what the credential
// they consent with holds: the personal access token's or the browser session's scopes. For
// an organization subject the application acts as the organization itself, with no user in
// between whose role later checks could apply, so the user must also be one who manages the
// organization.

// mayConsentForOrganization reports whether a role lets a user hand an application an
// organization token: owners and admins manage the organization and may; a plain member may
// not, or any member could mint a token stronger than their own membership.
func mayConsentForOrganization(role string) bool {
	return role == "owner" || role == "admin"
}

// organizationConsenter reports whether userID may consent for orgID now: member says the
// user, the organization and the membership are all live; allowed that the role also lets the
// user consent for it.
func organizationConsenter(ctx context.Context, q sqlx.QueryerContext, userID, orgID uuid.UUID) (member, allowed bool, err error) {
	role, err := storage.OAuth2ConsentingRole(ctx, q, userID, orgID)
	if errors.Is(err, storage.ErrNotFound) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	return true, mayConsentForOrganization(role), nil
}

// checkOrganizationConsent refuses a consent for an organization subject by a user who may
// not give it; an organization the user is not in reads as not found, as for any other id.
func checkOrganizationConsent(ctx context.Context, q sqlx.QueryerContext, userID, orgID uuid.UUID) error {
	member, allowed, err := organizationConsenter(ctx, q, userID, orgID)
	switch {
	case err != nil:
		return err
	case !member:
		return Invalid("value_error", "Organization not found.", orgID.String(), "input", "organizationId")
	case !allowed:
		return NotPermitted("Only owners and admins of the organization may authorize an application to act for it.")
	}
	return nil
}

// consentScopes bounds the scopes of a consent by the consenting credential's scopes. A scope
// the request names explicitly but the user does not hold is refused with invalid_scope
// rather than dropped: the application asked for it, and silently issuing less would leave it
// to discover the gap on its first refused call, while the user would have approved a screen
// that promised more than was given. When the request names no scope, the default (every
// scope the client may request) is narrowed to what the user holds, as RFC 6749 §3.3 lets a
// server choose its default; an empty result is refused.
func consentScopes(v *ValidAuthorization, held auth.ScopeSet) (auth.ScopeSet, error) {
	granted, refusal := boundedScopes(v, held)
	if refusal != "" {
		return nil, BadRequest("invalid_scope: " + refusal)
	}
	return granted, nil
}

// boundedScopes is consentScopes with the refusal as an invalid_scope description, for
// callers that answer it as an OAuth error.
func boundedScopes(v *ValidAuthorization, held auth.ScopeSet) (auth.ScopeSet, string) {
	if v.Request.Scope != "" {
		if !subset(v.Scopes, held) {
			return nil, "The scope requested exceeds the scopes of the consenting credential."
		}
		return v.Scopes, ""
	}
	granted := auth.ScopeSet{}
	for s := range v.Scopes {
		if held.Has(s) {
			granted[s] = struct{}{}
		}
	}
	if len(granted) == 0 {
		return nil, "The consenting credential holds none of the scopes the client may request."
	}
	return granted, ""
}

// recheckConsenter is the token endpoint's check that the consent behind an organization
// subject's code or refresh token still stands: the consenting user is still an owner or
// admin of the organization. A user subject needs none here, since its tokens act as the user
// and every request applies the user's current memberships and roles.
func recheckConsenter(ctx context.Context, q sqlx.QueryerContext, subType string, consentedBy, orgID *uuid.UUID, what string) error {
	if subType != "organization" {
		return nil
	}
	revoked := oauthError(400, "invalid_grant", `The consent behind this "`+what+`" no longer stands.`)
	if consentedBy == nil || orgID == nil {
		return revoked
	}
	_, allowed, err := organizationConsenter(ctx, q, *consentedBy, *orgID)
	if err != nil {
		return err
	}
	if !allowed {
		return revoked
	}
	return nil
}
