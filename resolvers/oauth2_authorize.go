package resolvers

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"time"

	"github.com/google/uuid"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// codeTTL is how long an authorization code can be exchanged (authlib's 300 s).
const codeTTL = 300 * time.Second

// AuthorizeRequest carries the parameters of an authorization request (the query string of
// GET /v1/oauth2/authorize, the consent page's form, or the consent mutation's input).
type AuthorizeRequest struct {
	ResponseType        string
	ClientID            string
	RedirectURI         string
	Scope               string
	State               string
	Nonce               string
	CodeChallenge       string
	CodeChallengeMethod string
	Prompt              string
	SubType             string
	OrganizationID      *uuid.UUID
	// Malformed says the query holds text PostgreSQL cannot store (U+0000, bytes that are not
	// UTF-8); nothing else of the request is read then.
	Malformed bool
}

// ValidAuthorization is an authorization request that passed validation: the client, the
// redirect URI actually used and the scopes granted.
type ValidAuthorization struct {
	Request     AuthorizeRequest
	Client      *storage.OAuth2Client
	RedirectURI string
	Scopes      auth.ScopeSet
	SubType     string
}

// codeChallengePattern is RFC 7636's code_challenge and code_verifier syntax.
var codeChallengePattern = regexp.MustCompile(`^[A-Za-z0-9\-._~]{43,128}$`)

// ValidateAuthorization checks a request as authlib's authorization-code grant does. Errors
// about the client or the redirect URI are shown to the user; the rest go to the redirect URI.
func (r *Resolver) ValidateAuthorization(ctx context.Context, req AuthorizeRequest) (*ValidAuthorization, error) {
	if req.ClientID == "" {
		return nil, oauthError(400, "invalid_client", "")
	}
	client, err := storage.GetOAuth2ClientByClientID(ctx, r.db, req.ClientID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, oauthError(400, "invalid_client", "")
	}
	if err != nil {
		return nil, err
	}
	v := &ValidAuthorization{Request: req, Client: client, RedirectURI: req.RedirectURI}
	switch {
	case req.RedirectURI == "" && len(client.RedirectURIs) == 1:
		v.RedirectURI = client.RedirectURIs[0]
	case req.RedirectURI == "":
		return nil, oauthError(400, "invalid_request", `Missing "redirect_uri" in request.`)
	case !slices.Contains(client.RedirectURIs, req.RedirectURI):
		return nil, oauthError(400, "invalid_request", `Redirect URI `+req.RedirectURI+` is not supported by client.`)
	}
	redirect := func(code, description string) error {
		return &OAuth2Error{Code: code, Description: description, Status: 400, Redirect: v.RedirectURI, State: req.State}
	}
	if req.ResponseType != "code" {
		return nil, redirect("unsupported_response_type", `response_type="`+req.ResponseType+`" is not supported`)
	}
	if !slices.Contains(client.ResponseTypes, "code") || !slices.Contains(client.GrantTypes, "authorization_code") {
		return nil, redirect("unauthorized_client", `The client is not authorized to use "response_type=code"`)
	}
	allowed, err := auth.ParseScopes(client.Scope)
	if err != nil {
		return nil, redirect("invalid_scope", "")
	}
	v.Scopes = allowed
	if req.Scope != "" {
		requested, err := auth.ParseScopes(req.Scope)
		if err != nil || !subset(requested, allowed) {
			return nil, redirect("invalid_scope", "")
		}
		v.Scopes = requested
	}
	switch req.CodeChallengeMethod {
	case "", "plain", "S256":
	default:
		return nil, redirect("invalid_request", "Unsupported code_challenge_method")
	}
	if req.CodeChallenge == "" && req.CodeChallengeMethod != "" {
		return nil, redirect("invalid_request", `Missing "code_challenge"`)
	}
	if req.CodeChallenge == "" && client.ClientSecretHash == nil {
		return nil, redirect("invalid_request", `Missing "code_challenge"`)
	}
	// A public client's challenge travels through the browser like its code, so with plain
	// whoever sees the authorization request can redeem the code; OAuth 2.1 requires S256
	// there. Confidential clients keep plain, as upstream allows: their secret protects the code.
	if req.CodeChallenge != "" && client.ClientSecretHash == nil && req.CodeChallengeMethod != "S256" {
		return nil, redirect("invalid_request", `Public clients must use "code_challenge_method=S256"`)
	}
	if req.CodeChallenge != "" && !codeChallengePattern.MatchString(req.CodeChallenge) {
		return nil, redirect("invalid_request", `Invalid "code_challenge"`)
	}
	switch req.Prompt {
	case "", "none", "login", "consent":
	default:
		return nil, redirect("invalid_request", `Invalid "prompt" parameter`)
	}
	v.SubType = req.SubType
	if v.SubType == "" {
		v.SubType = client.DefaultSubType
	}
	if v.SubType != "user" && v.SubType != "organization" {
		return nil, redirect("invalid_request", `Invalid "sub_type" parameter`)
	}
	return v, nil
}

// subset reports whether every scope of a is in b.
func subset(a, b auth.ScopeSet) bool {
	for s := range a {
		if !b.Has(s) {
			return false
		}
	}
	return true
}

// AuthorizeOAuth2 gives the signed-in user's consent through GraphQL. Only the user in
// person may consent (a personal access token or a browser session, never an OAuth token),
// so an application cannot grant itself, or another application, more than the user did.
func (r *Resolver) AuthorizeOAuth2(ctx context.Context, in model.AuthorizeOAuth2Input) (*model.AuthorizeOAuth2Payload, error) {
	v, err := r.consentRequest(ctx, in)
	if err != nil {
		return nil, err
	}
	issued, err := r.grantConsent(ctx, v)
	if err != nil {
		return nil, err
	}
	return &model.AuthorizeOAuth2Payload{RedirectURL: issued.Redirect, Code: &issued.Code}, nil
}

// DenyOAuth2 refuses an authorization request after validating it like a consent, so only a
// registered redirect URI ever receives the answer.
func (r *Resolver) DenyOAuth2(ctx context.Context, in model.AuthorizeOAuth2Input) (*model.AuthorizeOAuth2Payload, error) {
	v, err := r.consentRequest(ctx, in)
	if err != nil {
		return nil, err
	}
	return &model.AuthorizeOAuth2Payload{RedirectURL: r.deniedRedirect(v)}, nil
}

// consentRequest authenticates the consenting user and validates their request; OAuth
// protocol errors become BadRequest with the OAuth description, for the dashboard to show.
func (r *Resolver) consentRequest(ctx context.Context, in model.AuthorizeOAuth2Input) (*ValidAuthorization, error) {
	if err := checkFirstParty(ctx); err != nil {
		return nil, err
	}
	req := AuthorizeRequest{ResponseType: "code", ClientID: in.ClientID, RedirectURI: deref(in.RedirectURI),
		Scope: deref(in.Scope), State: deref(in.State), Nonce: deref(in.Nonce), CodeChallenge: deref(in.CodeChallenge),
		CodeChallengeMethod: deref(in.CodeChallengeMethod), OrganizationID: in.OrganizationID}
	if in.SubType != nil {
		req.SubType = string(*in.SubType)
	}
	v, err := r.ValidateAuthorization(ctx, req)
	var oe *OAuth2Error
	if errors.As(err, &oe) {
		return nil, BadRequest(oe.Code + ": " + oe.Description)
	}
	return v, err
}

// withQuery adds params, state (when set) and iss (RFC 9207, when set) to a redirect URI,
// keeping its own query.
func withQuery(base string, params url.Values, state, issuer string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	q := u.Query()
	for k, vs := range params {
		q[k] = vs
	}
	if state != "" {
		q.Set("state", state)
	}
	if issuer != "" {
		q.Set("iss", issuer)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// oauth2CodeRetention is how long a code is kept after it expires: long enough that a
// replay of a stolen code is recognised, and what it issued revoked, for a day.
const oauth2CodeRetention = 24 * time.Hour

// PurgeOAuth2Codes deletes authorization codes past their retention; serve runs it hourly.
func (r *Resolver) PurgeOAuth2Codes(ctx context.Context) (int, error) {
	return storage.PurgeOAuth2AuthorizationCodes(ctx, r.db, r.Now().Add(-oauth2CodeRetention))
}
