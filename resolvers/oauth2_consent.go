package resolvers

import (
	"context"
	"errors"
	"time"

	"till/internal/auth"
)

// AuthorizeOutcome is the answer to an authorization request at GET /v1/oauth2/authorize.
// Exactly one field is set.
type AuthorizeOutcome struct {
	// Consent is the consent-screen data, answered 200.
	Consent *AuthorizeResponse
	// Redirect sends the browser back to the client (302) with an error its registered
	// redirect URI may receive: a refused request, or login_required for prompt=none.
	Redirect string
	// Error is shown to the user as RFC 6749 JSON: the request named no valid client or
	// redirect URI, could not be read, or met a server fault.
	Error *OAuth2Error
	// NotPermitted refuses a caller that sent a bearer token: the endpoint serves browser
	// sessions, and upstream answers an API token 403 NotPermitted.
	NotPermitted bool
	// LoginRequired answers prompt=login, which asks the user to sign in again: Till has no
	// browser session to sign in to, so the answer is upstream's 401 for a missing session.
	LoginRequired bool
}

// AuthorizeClient is the contract's OAuth2ClientPublic: what a consent screen shows of the
// client.
type AuthorizeClient struct {
	CreatedAt  string  `json:"created_at"`
	ModifiedAt *string `json:"modified_at"`
	ClientID   string  `json:"client_id"`
	ClientName *string `json:"client_name"`
	ClientURI  *string `json:"client_uri"`
	LogoURI    *string `json:"logo_uri"`
	TosURI     *string `json:"tos_uri"`
	PolicyURI  *string `json:"policy_uri"`
}

// AuthorizeResponse is the contract's AuthorizeResponseUser for an anonymous caller. Till has
// no browser session, so sub is always null and organizations empty, and upstream always
// answers sub_type user: a request for an organization subject only sets
// requires_single_organization. The dashboard then consents through the authorizeOAuth2
// mutation.
type AuthorizeResponse struct {
	Client                     AuthorizeClient       `json:"client"`
	SubType                    string                `json:"sub_type"`
	Sub                        *struct{}             `json:"sub"`
	Scopes                     []auth.Scope          `json:"scopes"`
	Organizations              []struct{}            `json:"organizations"`
	RequiresSingleOrganization bool                  `json:"requires_single_organization"`
	ScopeDisplayNames          map[auth.Scope]string `json:"scope_display_names"`
}

// OAuth2Authorize answers an authorization request: it validates the request and says what
// the consent screen shows, or where the browser goes instead. Callers are anonymous, since
// Till has no browser session; so prompt=none can only fail with login_required, and
// prompt=login is refused.
func (r *Resolver) OAuth2Authorize(ctx context.Context, req AuthorizeRequest) AuthorizeOutcome {
	if !auth.FromContext(ctx).Anonymous() {
		return AuthorizeOutcome{NotPermitted: true}
	}
	if req.Malformed {
		return AuthorizeOutcome{Error: malformedOAuth2Request()}
	}
	v, err := r.ValidateAuthorization(ctx, req)
	var oe *OAuth2Error
	switch {
	case errors.As(err, &oe) && oe.Redirect != "":
		return AuthorizeOutcome{Redirect: oe.RedirectURL(r.Issuer())}
	case err != nil:
		return AuthorizeOutcome{Error: r.oauth2Failure(ctx, "authorize", ClientCredentials{}, err)}
	}
	switch req.Prompt {
	case "login":
		return AuthorizeOutcome{LoginRequired: true}
	case "none":
		e := &OAuth2Error{Code: "login_required", Redirect: v.RedirectURI, State: req.State}
		return AuthorizeOutcome{Redirect: e.RedirectURL(r.Issuer())}
	}
	return AuthorizeOutcome{Consent: consentScreen(v)}
}

// consentScreen is the consent data of a valid request, with upstream's wording of every
// scope.
func consentScreen(v *ValidAuthorization) *AuthorizeResponse {
	c := v.Client
	client := AuthorizeClient{CreatedAt: c.CreatedAt.UTC().Format(time.RFC3339Nano), ClientID: c.ClientID,
		ClientName: &c.ClientName, ClientURI: c.ClientURI, LogoURI: c.LogoURI, TosURI: c.TosURI, PolicyURI: c.PolicyURI}
	if c.ModifiedAt != nil {
		m := c.ModifiedAt.UTC().Format(time.RFC3339Nano)
		client.ModifiedAt = &m
	}
	names := map[auth.Scope]string{}
	for _, s := range auth.AllScopes() {
		names[s] = s.DisplayName()
	}
	return &AuthorizeResponse{Client: client, SubType: "user", Scopes: v.Scopes.List(), Organizations: []struct{}{},
		RequiresSingleOrganization: v.SubType == "organization", ScopeDisplayNames: names}
}
