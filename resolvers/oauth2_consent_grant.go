package resolvers

import (
	"context"
	"net/url"
	"slices"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/auth"
	"till/storage"
)

// IssuedConsent is what a consent hands the client: the single-use code and the client's
// redirect URI carrying it.
type IssuedConsent struct {
	Code     string
	Redirect string
}

// grantConsent is the one consent of Till, whether the signed-in user gives it through the
// authorizeOAuth2 mutation, the consent page's form, or a remembered consent that skips the
// page: it issues an authorization code bound to everything the token endpoint will check
// and remembers the consent. The caller validated v; the rules of what the user may grant
// are checked here, so no path grants more than another: the organization named must be
// one of the user's, an organization subject needs a user who manages it, and the scopes
// are bounded by what the consenting credential holds (oauth2_consent_rights.go).
func (r *Resolver) grantConsent(ctx context.Context, v *ValidAuthorization) (*IssuedConsent, error) {
	p := auth.FromContext(ctx)
	orgID := v.Request.OrganizationID
	if v.SubType == "organization" && orgID == nil {
		return nil, Invalid("missing", "organizationId is required for subType organization.", nil, "input", "organizationId")
	}
	if orgID != nil && !slices.Contains(p.Organizations, *orgID) {
		return nil, Invalid("value_error", "Organization not found.", orgID.String(), "input", "organizationId")
	}
	if v.SubType == "organization" {
		if err := checkOrganizationConsent(ctx, r.db, p.UserID, *orgID); err != nil {
			return nil, err
		}
	}
	scopes, err := consentScopes(v, p.Scopes)
	if err != nil {
		return nil, err
	}
	userID := p.UserID
	c := storage.OAuth2AuthorizationCode{ClientID: v.Client.ClientID, SubType: v.SubType,
		RedirectURI: v.RedirectURI, Scope: scopes.String(), Nonce: optional(v.Request.Nonce), ConsentedBy: &userID}
	grant := storage.OAuth2GrantWrite{ClientID: c.ClientID, Scope: c.Scope, UserID: &userID}
	switch {
	case v.SubType == "organization":
		c.OrganizationID = orgID
		grant.UserID, grant.OrganizationID = nil, orgID
	case orgID != nil:
		c.UserID, c.OrganizationIDs = &userID, []string{orgID.String()}
		grant.OrganizationIDs = []uuid.UUID{*orgID}
	default:
		c.UserID = &userID
	}
	if v.Request.CodeChallenge != "" {
		method := v.Request.CodeChallengeMethod
		if method == "" {
			method = "plain"
		}
		c.CodeChallenge, c.CodeChallengeMethod = &v.Request.CodeChallenge, &method
	}
	code := auth.Generate(auth.PrefixAuthorizationCode)
	c.Code = auth.Hash(r.secret, code)
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		if _, err := storage.CreateOAuth2AuthorizationCode(ctx, tx, c, codeTTL); err != nil {
			return err
		}
		return storage.UpsertOAuth2Grant(ctx, tx, grant)
	})
	if err != nil {
		return nil, err
	}
	return &IssuedConsent{Code: code, Redirect: withQuery(v.RedirectURI, url.Values{"code": {code}}, v.Request.State, r.Issuer())}, nil
}

// deniedRedirect is where a refused request sends the browser: the validated redirect URI
// with error=access_denied, so only a registered redirect URI ever receives the answer.
func (r *Resolver) deniedRedirect(v *ValidAuthorization) string {
	denied := &OAuth2Error{Code: "access_denied", Redirect: v.RedirectURI, State: v.Request.State}
	return denied.RedirectURL(r.Issuer())
}
