package resolvers

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/auth"
	"till/storage"
)

// Access-token lifetimes: authlib's BearerTokenGenerator defaults, which upstream keeps
// (contract §3.1): ten days from a code, one hour from a refresh.
const (
	codeTokenTTL    = 864000 * time.Second
	refreshTokenTTL = 3600 * time.Second
)

// ClientCredentials are how a request to the token, introspection or revocation endpoint
// authenticated its client: HTTP Basic (client_secret_basic) or form fields.
type ClientCredentials struct {
	ID     string
	Secret string
	// Basic is true when they came in an Authorization: Basic header; a failure then carries
	// a WWW-Authenticate: Basic challenge (RFC 6749 §5.2).
	Basic bool
	// Addr is the address the request came from, for throttling failed authentications;
	// empty throttles by client only.
	Addr string
}

// TokenRequest is the form of POST /v1/oauth2/token.
type TokenRequest struct {
	Client       ClientCredentials
	GrantType    string
	Code         string
	RedirectURI  string
	CodeVerifier string
	RefreshToken string
	Scope        string
	// Malformed says the form could not be read, or holds text PostgreSQL cannot store
	// (U+0000, bytes that are not UTF-8); nothing else of the request is read then.
	Malformed bool
}

// TokenResponse is RFC 6749 §5.1's answer; empty RefreshToken and IDToken are left out.
type TokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope"`
	IDToken      string `json:"id_token,omitempty"`
}

// authenticateClient checks client credentials. At the token endpoint (tokenEndpoint) the
// method must be the one the client registered, and public clients authenticate with their id
// alone; introspection and revocation accept only Basic or form secrets (contract §4.9).
// Failures are throttled per client and per address (oauth2_client_throttle.go).
func (r *Resolver) authenticateClient(ctx context.Context, creds ClientCredentials, tokenEndpoint bool) (*storage.OAuth2Client, error) {
	throttle, now := r.clientAuth(), r.Now()
	if err := throttle.refuse(creds, now); err != nil {
		return nil, err
	}
	c, err := r.checkClientCredentials(ctx, creds, tokenEndpoint)
	var oe *OAuth2Error
	if errors.As(err, &oe) && oe.Code == "invalid_client" {
		throttle.fail(creds, c, now)
		return nil, err
	}
	return c, err
}

// checkClientCredentials is authenticateClient without the throttle. On an invalid_client
// failure it still returns the client when it exists, for the throttle to count against.
func (r *Resolver) checkClientCredentials(ctx context.Context, creds ClientCredentials, tokenEndpoint bool) (*storage.OAuth2Client, error) {
	fail := &OAuth2Error{Code: "invalid_client", Status: 401}
	if creds.ID == "" {
		return nil, fail
	}
	c, err := storage.GetOAuth2ClientByClientID(ctx, r.db, creds.ID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fail
	}
	if err != nil {
		return nil, err
	}
	method := "client_secret_post"
	switch {
	case creds.Basic:
		method = "client_secret_basic"
	case creds.Secret == "":
		method = "none"
	}
	if method == "none" {
		if tokenEndpoint && c.TokenEndpointAuthMethod == "none" {
			return c, nil
		}
		return c, fail
	}
	if tokenEndpoint && c.TokenEndpointAuthMethod != method {
		return c, fail
	}
	if !r.verifyClientSecret(c, creds.Secret) {
		return c, fail
	}
	return c, nil
}

// ExchangeOAuth2Token answers the token endpoint: the authorization_code and refresh_token
// grants. A failure is the whole error answer, whoever caused it.
func (r *Resolver) ExchangeOAuth2Token(ctx context.Context, req TokenRequest) (*TokenResponse, *OAuth2Error) {
	if req.Malformed {
		return nil, malformedOAuth2Request()
	}
	resp, err := r.exchangeToken(ctx, req)
	if err != nil {
		return nil, r.oauth2Failure(ctx, "token", req.Client, err)
	}
	return resp, nil
}

// exchangeToken runs a grant. Every failure the client caused is an *OAuth2Error.
func (r *Resolver) exchangeToken(ctx context.Context, req TokenRequest) (*TokenResponse, error) {
	switch req.GrantType {
	case "":
		return nil, oauthError(400, "invalid_request", `Missing "grant_type" in request.`)
	case "authorization_code", "refresh_token":
	default:
		return nil, oauthError(400, "unsupported_grant_type", `grant_type "`+req.GrantType+`" is not supported`)
	}
	client, err := r.authenticateClient(ctx, req.Client, true)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(client.GrantTypes, req.GrantType) {
		return nil, oauthError(400, "unauthorized_client", `The client is not authorized to use "grant_type=`+req.GrantType+`"`)
	}
	if req.GrantType == "authorization_code" {
		return r.exchangeCode(ctx, client, req)
	}
	return r.refresh(ctx, client, req)
}

// exchangeCode redeems an authorization code. The code is marked used in the same
// transaction that issues the tokens, so a failed check leaves it unused and of concurrent
// exchanges exactly one wins; a code already used is a replay, and every token it issued is
// revoked.
func (r *Resolver) exchangeCode(ctx context.Context, client *storage.OAuth2Client, req TokenRequest) (*TokenResponse, error) {
	if req.Code == "" {
		return nil, oauthError(400, "invalid_request", `Missing "code" in request.`)
	}
	var resp *TokenResponse
	var replayed *storage.OAuth2AuthorizationCode
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		code, err := storage.UseOAuth2AuthorizationCode(ctx, tx, auth.Hash(r.secret, req.Code), client.ClientID)
		switch {
		case errors.Is(err, storage.ErrCodeUsed):
			replayed = code
			return oauthError(400, "invalid_grant", `Invalid "code" in request.`)
		case errors.Is(err, storage.ErrNotFound):
			return oauthError(400, "invalid_grant", `Invalid "code" in request.`)
		case err != nil:
			return err
		}
		if req.RedirectURI != code.RedirectURI {
			return oauthError(400, "invalid_grant", `Invalid "redirect_uri" in request.`)
		}
		if err := checkCodeVerifier(code, req.CodeVerifier); err != nil {
			return err
		}
		if err := recheckConsenter(ctx, tx, code.SubType, code.ConsentedBy, code.OrganizationID, "code"); err != nil {
			return err
		}
		resp, err = r.issueTokens(ctx, tx, client, issue{subType: code.SubType, userID: code.UserID,
			organizationID: code.OrganizationID, organizationIDs: code.OrganizationIDs, scope: code.Scope,
			nonce: code.Nonce, codeID: &code.ID, consentedBy: code.ConsentedBy, ttl: codeTokenTTL})
		if err != nil {
			return err
		}
		if auth.NewScopeSet(splitScope(code.Scope)...).Has(auth.ScopeOpenID) {
			subject := code.UserID
			if subject == nil {
				subject = code.OrganizationID
			}
			now := r.Now().UTC().Truncate(time.Second)
			resp.IDToken, err = r.SignIDToken(ctx, IDTokenClaims{Subject: subject.String(), Audience: client.ClientID,
				Nonce: deref(code.Nonce), AuthTime: code.AuthTime, IssuedAt: now, Expiry: now.Add(IDTokenLifetime)})
		}
		return err
	})
	if replayed != nil {
		if _, rerr := storage.RevokeOAuth2TokensOfCode(context.WithoutCancel(ctx), r.db, replayed.ID); rerr != nil {
			return nil, rerr
		}
	}
	return resp, err
}

// checkCodeVerifier is PKCE (RFC 7636 §4.6), with authlib's errors: a missing or malformed
// verifier is invalid_request, a mismatch (or a verifier for a code without a challenge)
// invalid_grant.
func checkCodeVerifier(code *storage.OAuth2AuthorizationCode, verifier string) error {
	if code.CodeChallenge == nil && verifier == "" {
		return nil
	}
	if verifier == "" {
		return oauthError(400, "invalid_request", `Missing "code_verifier"`)
	}
	if !codeChallengePattern.MatchString(verifier) {
		return oauthError(400, "invalid_request", `Invalid "code_verifier"`)
	}
	failed := oauthError(400, "invalid_grant", "Code challenge failed.")
	if code.CodeChallenge == nil {
		return failed
	}
	want := verifier
	if deref(code.CodeChallengeMethod) == "S256" {
		sum := sha256.Sum256([]byte(verifier))
		want = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	if subtle.ConstantTimeCompare([]byte(want), []byte(*code.CodeChallenge)) != 1 {
		return failed
	}
	return nil
}

// refresh rotates a refresh token: the old pair dies (its access token too) and a new pair,
// optionally narrower, is issued for the same subject.
func (r *Resolver) refresh(ctx context.Context, client *storage.OAuth2Client, req TokenRequest) (*TokenResponse, error) {
	if req.RefreshToken == "" {
		return nil, oauthError(400, "invalid_request", `Missing "refresh_token" in request.`)
	}
	var resp *TokenResponse
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		old, err := storage.UseOAuth2RefreshToken(ctx, tx, auth.Hash(r.secret, req.RefreshToken), client.ClientID)
		if errors.Is(err, storage.ErrNotFound) {
			return oauthError(400, "invalid_grant", `Invalid "refresh_token" in request.`)
		}
		if err != nil {
			return err
		}
		if err := recheckConsenter(ctx, tx, old.SubType, old.ConsentedBy, old.OrganizationID, "refresh_token"); err != nil {
			return err
		}
		scope := old.Scope
		if req.Scope != "" {
			requested, err := auth.ParseScopes(req.Scope)
			if err != nil || !subset(requested, auth.NewScopeSet(splitScope(old.Scope)...)) {
				return oauthError(400, "invalid_scope", "")
			}
			scope = requested.String()
		}
		resp, err = r.issueTokens(ctx, tx, client, issue{subType: old.SubType, userID: old.UserID,
			organizationID: old.OrganizationID, organizationIDs: old.OrganizationIDs, scope: scope,
			nonce: old.Nonce, codeID: old.AuthorizationCodeID, consentedBy: old.ConsentedBy, ttl: refreshTokenTTL})
		return err
	})
	return resp, err
}

// issue is what a new token pair is bound to.
type issue struct {
	subType                string
	userID, organizationID *uuid.UUID
	organizationIDs        []string
	scope                  string
	nonce                  *string
	codeID                 *uuid.UUID
	consentedBy            *uuid.UUID
	ttl                    time.Duration
}

// issueTokens stores a new pair (the refresh token only when the client may refresh) and
// returns the plaintext tokens, which exist nowhere else.
func (r *Resolver) issueTokens(ctx context.Context, q sqlx.ExtContext, client *storage.OAuth2Client, in issue) (*TokenResponse, error) {
	accessPrefix, refreshPrefix := auth.PrefixOAuthUserAccessToken, auth.PrefixOAuthUserRefreshToken
	if in.subType == "organization" {
		accessPrefix, refreshPrefix = auth.PrefixOAuthOrganizationAccessToken, auth.PrefixOAuthOrganizationRefreshToken
	}
	resp := &TokenResponse{AccessToken: auth.Generate(accessPrefix), TokenType: "Bearer",
		ExpiresIn: int(in.ttl.Seconds()), Scope: in.scope}
	w := storage.OAuth2TokenWrite{ClientID: client.ClientID, AccessToken: auth.Hash(r.secret, resp.AccessToken),
		Scope: in.scope, SubType: in.subType, UserID: in.userID, OrganizationID: in.organizationID,
		OrganizationIDs: in.organizationIDs, Nonce: in.nonce, ExpiresIn: in.ttl, AuthorizationCodeID: in.codeID,
		ConsentedBy: in.consentedBy}
	if slices.Contains(client.GrantTypes, "refresh_token") {
		resp.RefreshToken = auth.Generate(refreshPrefix)
		hash := auth.Hash(r.secret, resp.RefreshToken)
		w.RefreshToken = &hash
	}
	if _, err := storage.CreateOAuth2Token(ctx, q, w); err != nil {
		return nil, err
	}
	return resp, nil
}

// splitScope splits a stored, space-separated scope into scopes without validating them.
func splitScope(scope string) []auth.Scope {
	set, err := auth.ParseScopes(scope)
	if err != nil {
		return nil
	}
	return set.List()
}

// resolveOAuthToken builds the principal of a live OAuth2 access token: a user acting in
// their (possibly down-scoped) organizations, or an organization.
func (r *Resolver) resolveOAuthToken(ctx context.Context, hash string) (auth.Principal, error) {
	t, err := storage.ResolveOAuth2AccessToken(ctx, r.db, hash)
	if errors.Is(err, storage.ErrNotFound) {
		return auth.Principal{}, auth.ErrInvalidToken
	}
	if err != nil {
		return auth.Principal{}, err
	}
	p := auth.Principal{Kind: auth.KindUser, TokenID: t.ID, UserID: t.UserID, Organizations: t.Organizations,
		Roles: rolesOf(t.Roles)}
	if t.SubType == "organization" {
		p = auth.Principal{Kind: auth.KindOrganization, TokenID: t.ID, OrganizationID: t.OrganizationID}
	}
	p.OAuthClientID = t.ClientID
	expires := t.ExpiresAt
	p.ExpiresAt = &expires
	if p.Scopes, err = auth.ParseScopes(t.Scope); err != nil {
		return auth.Principal{}, auth.ErrInvalidToken
	}
	return p, nil
}
