package resolvers

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/storage"
)

// AuthorizeOutcome is the answer to an authorization request at GET /v1/oauth2/authorize.
// Exactly one of Consent, Redirect, Error, NotPermitted and LoginRequired is set; Form comes
// with Consent for a signed-in browser user.
type AuthorizeOutcome struct {
	// Consent is the consent-screen data, answered 200 to API callers.
	Consent *AuthorizeResponse
	// Form is what the consent page needs besides Consent to post the user's answer. It is
	// set only for a signed-in browser user; without it a browser must sign in first.
	Form *ConsentForm
	// Redirect sends the browser back to the client (302): with a code when a remembered
	// consent skips the page, or with an error its registered redirect URI may receive.
	Redirect string
	// Error is shown to the user as RFC 6749 JSON: the request named no valid client or
	// redirect URI, could not be read, or met a server fault.
	Error *OAuth2Error
	// NotPermitted refuses a caller that sent a bearer token: the endpoint serves browser
	// sessions, and upstream answers an API token 403 NotPermitted.
	NotPermitted bool
	// LoginRequired answers prompt=login, which asks the user to sign in again: upstream's
	// 401 to API callers, the sign-in page to a browser.
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

// AuthorizeUser is the contract's AuthorizeUser: the signed-in user a user token acts for.
type AuthorizeUser struct {
	ID        uuid.UUID `json:"id"`
	Email     string    `json:"email"`
	AvatarURL *string   `json:"avatar_url"`
}

// AuthorizeOrganization is the contract's AuthorizeOrganization: an organization the user
// may choose on the consent screen.
type AuthorizeOrganization struct {
	ID        uuid.UUID `json:"id"`
	Slug      string    `json:"slug"`
	AvatarURL *string   `json:"avatar_url"`
}

// AuthorizeResponse is the contract's AuthorizeResponseUser or AuthorizeResponseOrganization,
// told apart by sub_type. sub_type says what the tokens will act for: Till issues
// organization tokens for an organization subject, so it answers sub_type organization then
// (upstream, which issues only user tokens now, always answers user).
type AuthorizeResponse struct {
	Client  AuthorizeClient `json:"client"`
	SubType string          `json:"sub_type"`
	// Sub is the signed-in user (*AuthorizeUser) for a user subject; null for an anonymous
	// caller, and for an organization subject, whose organization is chosen on the screen.
	Sub any `json:"sub"`
	// Scopes are what the consent grants: the request's, or when it names none the client's
	// narrowed to what the signed-in user holds.
	Scopes []auth.Scope `json:"scopes"`
	// Organizations are what the user may choose: for a user subject the organizations the
	// session reaches (an optional down-scope), for an organization subject those the user
	// manages. Empty for an anonymous caller.
	Organizations              []AuthorizeOrganization `json:"organizations"`
	RequiresSingleOrganization bool                    `json:"requires_single_organization"`
	ScopeDisplayNames          map[auth.Scope]string   `json:"scope_display_names"`
}

// OAuth2Authorize answers an authorization request: it validates the request and says what
// the consent screen shows, or where the browser goes instead. An anonymous caller gets the
// screen's data (a browser is sent to sign in); a signed-in browser user also gets the
// form, or goes straight back to the client when a remembered consent covers the request;
// a bearer token is refused, since only the user in person may consent.
func (r *Resolver) OAuth2Authorize(ctx context.Context, req AuthorizeRequest) AuthorizeOutcome {
	p := auth.FromContext(ctx)
	if !p.Anonymous() && !browserUser(p) {
		return AuthorizeOutcome{NotPermitted: true}
	}
	if req.Malformed {
		return AuthorizeOutcome{Error: malformedOAuth2Request()}
	}
	v, redirect, shown := r.validateForBrowser(ctx, "authorize", req)
	switch {
	case redirect != "":
		return AuthorizeOutcome{Redirect: redirect}
	case shown != nil:
		return AuthorizeOutcome{Error: shown}
	case req.Prompt == "login":
		return AuthorizeOutcome{LoginRequired: true}
	case p.Anonymous() && req.Prompt == "none":
		return r.redirectError(v, "login_required", "")
	case p.Anonymous():
		return AuthorizeOutcome{Consent: consentScreen(v, v.Scopes)}
	}
	return r.signedInAuthorize(ctx, p, v)
}

// validateForBrowser validates an authorization request a browser brings: a refusal the
// client's registered redirect URI may receive is a redirect there, any other is shown to
// the user (a server fault logged and hidden as server_error).
func (r *Resolver) validateForBrowser(ctx context.Context, endpoint string, req AuthorizeRequest) (v *ValidAuthorization, redirect string, shown *OAuth2Error) {
	v, err := r.ValidateAuthorization(ctx, req)
	var oe *OAuth2Error
	switch {
	case errors.As(err, &oe) && oe.Redirect != "":
		return nil, oe.RedirectURL(r.Issuer()), nil
	case err != nil:
		return nil, "", r.oauth2Failure(ctx, endpoint, ClientCredentials{}, err)
	}
	return v, "", nil
}

// browserUser reports whether p is a user signed in with a browser session, the only
// principal that may see the consent page and answer it.
func browserUser(p auth.Principal) bool {
	return p.Kind == auth.KindUser && p.BrowserSession && p.OAuthClientID == ""
}

// signedInAuthorize is OAuth2Authorize for a signed-in browser user: a remembered consent
// (or a first-party client) issues the code at once unless prompt=consent asks for the page,
// which a first-party client skips all the same, as upstream; prompt=none without one is
// consent_required; otherwise the page.
func (r *Resolver) signedInAuthorize(ctx context.Context, p auth.Principal, v *ValidAuthorization) AuthorizeOutcome {
	scopes, refusal := boundedScopes(v, p.Scopes)
	if refusal != "" {
		return r.redirectError(v, "invalid_scope", refusal)
	}
	if v.Request.Prompt != "consent" || v.Client.FirstParty {
		org, ok, err := r.rememberedConsent(ctx, p, v, scopes)
		if err != nil {
			return AuthorizeOutcome{Error: r.oauth2Failure(ctx, "authorize", ClientCredentials{}, err)}
		}
		if ok {
			return r.silentConsent(ctx, v, org)
		}
	}
	if v.Request.Prompt == "none" {
		return r.redirectError(v, "consent_required", "")
	}
	screen := consentScreen(v, scopes)
	u, err := storage.GetOAuth2User(ctx, r.db, p.UserID)
	var memberships []storage.OAuth2Membership
	if err == nil {
		memberships, err = storage.ListUserOrganizations(ctx, r.db, p.UserID)
	}
	switch {
	case errors.Is(err, storage.ErrNotFound): // the user was deleted after the session was read
		return AuthorizeOutcome{LoginRequired: true}
	case err != nil:
		return AuthorizeOutcome{Error: r.oauth2Failure(ctx, "authorize", ClientCredentials{}, err)}
	}
	if v.SubType == "user" {
		screen.Sub = &AuthorizeUser{ID: u.ID, Email: u.Email, AvatarURL: u.AvatarURL}
	}
	for _, m := range memberships {
		if slices.Contains(p.Organizations, m.ID) && (v.SubType == "user" || mayConsentForOrganization(m.Role)) {
			screen.Organizations = append(screen.Organizations, AuthorizeOrganization{ID: m.ID, Slug: m.Slug, AvatarURL: m.AvatarURL})
		}
	}
	form := r.consentForm(p, v)
	form.Email = u.Email
	return AuthorizeOutcome{Consent: screen, Form: form}
}

// silentConsent issues the code of a remembered consent. A refusal of grantConsent (the
// rights changed in between) is the client's consent_required, as prompt=none would get.
func (r *Resolver) silentConsent(ctx context.Context, v *ValidAuthorization, org *uuid.UUID) AuthorizeOutcome {
	v.Request.OrganizationID = org
	issued, err := r.grantConsent(ctx, v)
	var refused *Error
	switch {
	case errors.As(err, &refused):
		return r.redirectError(v, "consent_required", "")
	case err != nil:
		return AuthorizeOutcome{Error: r.oauth2Failure(ctx, "authorize", ClientCredentials{}, err)}
	}
	return AuthorizeOutcome{Redirect: issued.Redirect}
}

// redirectError sends an OAuth error to the request's validated redirect URI.
func (r *Resolver) redirectError(v *ValidAuthorization, code, description string) AuthorizeOutcome {
	e := &OAuth2Error{Code: code, Description: description, Status: http.StatusBadRequest, Redirect: v.RedirectURI,
		State: v.Request.State}
	return AuthorizeOutcome{Redirect: e.RedirectURL(r.Issuer())}
}

// consentScreen is the consent data of a valid request granting scopes, with upstream's
// wording of every scope; the caller adds the user and the organizations.
func consentScreen(v *ValidAuthorization, scopes auth.ScopeSet) *AuthorizeResponse {
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
	return &AuthorizeResponse{Client: client, SubType: v.SubType, Scopes: scopes.List(),
		Organizations: []AuthorizeOrganization{}, RequiresSingleOrganization: v.SubType == "organization",
		ScopeDisplayNames: names}
}

// sameOrigin reports whether link is served from base's origin (scheme, host and port).
func sameOrigin(link, base string) bool {
	l, err1 := url.Parse(link)
	b, err2 := url.Parse(base)
	return err1 == nil && err2 == nil && b.Host != "" && l.Scheme == b.Scheme && l.Host == b.Host
}
