package resolvers

import (
	"context"
	"errors"

	"till/internal/auth"
	"till/storage"
)

// Introspection is RFC 7662's answer for an active token (contract §3.1); an inactive token
// is answered {"active": false} alone, which the handler writes itself.
type Introspection struct {
	Active        bool     `json:"active"`
	ClientID      string   `json:"client_id"`
	TokenType     string   `json:"token_type"`
	Scope         string   `json:"scope"`
	SubType       string   `json:"sub_type"`
	Sub           string   `json:"sub"`
	Organizations []string `json:"organizations"`
	Aud           string   `json:"aud"`
	Iss           string   `json:"iss"`
	Exp           int64    `json:"exp"`
	Iat           int64    `json:"iat"`
}

// tokenHint reads token_type_hint; anything but the two RFC values is unsupported_token_type.
func tokenHint(hint string) (storage.TokenHint, error) {
	switch hint {
	case "":
		return storage.TokenHintNone, nil
	case "access_token":
		return storage.TokenHintAccess, nil
	case "refresh_token":
		return storage.TokenHintRefresh, nil
	}
	return 0, oauthError(400, "unsupported_token_type", "")
}

// findClientToken authenticates the client (Basic or form secret only), checks the request
// and looks the token up by its hash.
func (r *Resolver) findClientToken(ctx context.Context, creds ClientCredentials, token, hint string) (*storage.OAuth2Client, *storage.OAuth2Token, error) {
	client, err := r.authenticateClient(ctx, creds, false)
	if err != nil {
		return nil, nil, err
	}
	if token == "" {
		return nil, nil, oauthError(400, "invalid_request", `Missing "token" in request.`)
	}
	h, err := tokenHint(hint)
	if err != nil {
		return nil, nil, err
	}
	t, err := storage.FindOAuth2Token(ctx, r.db, auth.Hash(r.secret, token), h)
	if errors.Is(err, storage.ErrNotFound) {
		return client, nil, nil
	}
	return client, t, err
}

// IntrospectOAuth2Token answers RFC 7662: nil (inactive) for an unknown, foreign, expired or
// revoked token, whichever of the two tokens of a pair was given.
func (r *Resolver) IntrospectOAuth2Token(ctx context.Context, creds ClientCredentials, token, hint string) (*Introspection, error) {
	client, t, err := r.findClientToken(ctx, creds, token, hint)
	if err != nil || t == nil {
		return nil, err
	}
	if t.ClientID != client.ClientID || t.Revoked() || !r.Now().Before(t.ExpiresAt) {
		return nil, nil
	}
	sub := t.UserID
	if sub == nil {
		sub = t.OrganizationID
	}
	orgs := []string(t.OrganizationIDs)
	if orgs == nil {
		orgs = []string{}
	}
	return &Introspection{Active: true, ClientID: t.ClientID, TokenType: t.TokenType, Scope: t.Scope,
		SubType: t.SubType, Sub: sub.String(), Organizations: orgs, Aud: t.ClientID, Iss: r.Issuer(),
		Exp: t.ExpiresAt.Unix(), Iat: t.IssuedAt.Unix()}, nil
}

// RevokeOAuth2Token answers RFC 7009. An unknown token is a success, a token of another
// client invalid_grant. The hint access_token revokes only the access token, which still
// ends the pair; anything else revokes both.
func (r *Resolver) RevokeOAuth2Token(ctx context.Context, creds ClientCredentials, token, hint string) error {
	client, t, err := r.findClientToken(ctx, creds, token, hint)
	if err != nil || t == nil {
		return err
	}
	if t.ClientID != client.ClientID {
		return oauthError(400, "invalid_grant", "")
	}
	return storage.RevokeOAuth2Token(ctx, r.db, t.ID, hint == "access_token")
}

// UserInfo is the OIDC userinfo answer; absent claims are left out (upstream's exclude_unset).
type UserInfo struct {
	Sub           string  `json:"sub"`
	Name          *string `json:"name,omitempty"`
	Email         *string `json:"email,omitempty"`
	EmailVerified *bool   `json:"email_verified,omitempty"`
}

// OAuth2UserInfo answers userinfo for a bearer token that must be a live OAuth2 access token
// (a PAT or OAT is auth.ErrInvalidToken). Email claims need the email scope; an
// organization's name (its slug) needs openid.
func (r *Resolver) OAuth2UserInfo(ctx context.Context, token string) (*UserInfo, error) {
	if auth.Classify(token) != auth.TokenOAuthAccess {
		return nil, auth.ErrInvalidToken
	}
	t, err := storage.ResolveOAuth2AccessToken(ctx, r.db, auth.Hash(r.secret, token))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, auth.ErrInvalidToken
	}
	if err != nil {
		return nil, err
	}
	scopes, _ := auth.ParseScopes(t.Scope)
	if t.SubType == "organization" {
		info := &UserInfo{Sub: t.OrganizationID.String()}
		if scopes.Has(auth.ScopeOpenID) {
			o, err := storage.GetOAuth2Organization(ctx, r.db, t.OrganizationID)
			if err != nil {
				return nil, err
			}
			info.Name = &o.Slug
		}
		return info, nil
	}
	info := &UserInfo{Sub: t.UserID.String()}
	if scopes.Has(auth.ScopeEmail) {
		u, err := storage.GetOAuth2User(ctx, r.db, t.UserID)
		if err != nil {
			return nil, err
		}
		info.Email, info.EmailVerified = &u.Email, &u.EmailVerified
	}
	return info, nil
}

// OAuth2Consent is the consent-screen data of GET /v1/oauth2/authorize for an anonymous
// caller: Till has no browser session, so sub is always null and organizations empty; the
// dashboard then consents through the authorizeOAuth2 mutation.
type OAuth2Consent struct {
	Client *storage.OAuth2Client
	// RedirectURI is the validated redirect URI, the one a prompt=none answer goes to.
	RedirectURI                string
	Scopes                     []auth.Scope
	RequiresSingleOrganization bool
}

// OAuth2ConsentData validates an authorization request and says what to show.
func (r *Resolver) OAuth2ConsentData(ctx context.Context, req AuthorizeRequest) (*OAuth2Consent, error) {
	v, err := r.ValidateAuthorization(ctx, req)
	if err != nil {
		return nil, err
	}
	return &OAuth2Consent{Client: v.Client, RedirectURI: v.RedirectURI, Scopes: v.Scopes.List(), RequiresSingleOrganization: v.SubType == "organization"}, nil
}
