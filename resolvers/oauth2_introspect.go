package resolvers

import (
	"context"
	"encoding/json"
	"errors"

	"till/internal/auth"
	"till/storage"
)

// TokenQuery is the form of POST /v1/oauth2/introspect (RFC 7662) and /v1/oauth2/revoke
// (RFC 7009): the client, the token it asks about and its token_type_hint.
type TokenQuery struct {
	Client        ClientCredentials
	Token         string
	TokenTypeHint string
	// Malformed says the form could not be read, or holds text PostgreSQL cannot store
	// (U+0000, bytes that are not UTF-8); nothing else of the request is read then.
	Malformed bool
}

// Introspection is RFC 7662's answer (contract §3.1): every member for an active token, and
// {"active": false} alone for any other, which tells a client nothing about a token it may
// not know about.
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

// MarshalJSON writes an inactive token's answer as {"active": false} alone.
func (i Introspection) MarshalJSON() ([]byte, error) {
	if !i.Active {
		return []byte(`{"active":false}`), nil
	}
	type members Introspection
	return json.Marshal(members(i))
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

// IntrospectOAuth2Token answers the introspection endpoint: inactive for an unknown,
// foreign, expired or revoked token, whichever of the two tokens of a pair was given. A
// failure is the whole error answer.
func (r *Resolver) IntrospectOAuth2Token(ctx context.Context, q TokenQuery) (*Introspection, *OAuth2Error) {
	if q.Malformed {
		return nil, malformedOAuth2Request()
	}
	info, err := r.introspect(ctx, q.Client, q.Token, q.TokenTypeHint)
	if err != nil {
		return nil, r.oauth2Failure(ctx, "introspect", q.Client, err)
	}
	if info == nil {
		info = &Introspection{}
	}
	return info, nil
}

// introspect is nil for a token that is not active.
func (r *Resolver) introspect(ctx context.Context, creds ClientCredentials, token, hint string) (*Introspection, error) {
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

// RevokeOAuth2Token answers the revocation endpoint; nil is success. A failure is the whole
// error answer.
func (r *Resolver) RevokeOAuth2Token(ctx context.Context, q TokenQuery) *OAuth2Error {
	if q.Malformed {
		return malformedOAuth2Request()
	}
	return r.oauth2Failure(ctx, "revoke", q.Client, r.revoke(ctx, q.Client, q.Token, q.TokenTypeHint))
}

// revoke is RFC 7009. An unknown token is a success, a token of another client
// invalid_grant. The hint access_token revokes only the access token, which still ends the
// pair; anything else revokes both.
func (r *Resolver) revoke(ctx context.Context, creds ClientCredentials, token, hint string) error {
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

// OAuth2UserInfo answers userinfo for a bearer token, which must be a live OAuth2 access
// token. It fails with auth.ErrInvalidToken for any other token (a PAT or OAT too), answered
// as the bearer middleware answers a dead token, and otherwise with an *OAuth2Error.
func (r *Resolver) OAuth2UserInfo(ctx context.Context, token string) (*UserInfo, error) {
	info, err := r.userInfo(ctx, token)
	if err != nil && !errors.Is(err, auth.ErrInvalidToken) {
		return nil, r.oauth2Failure(ctx, "userinfo", ClientCredentials{}, err)
	}
	return info, err
}

// userInfo reads the claims: email claims need the email scope; an organization's name (its
// slug) needs openid.
func (r *Resolver) userInfo(ctx context.Context, token string) (*UserInfo, error) {
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
