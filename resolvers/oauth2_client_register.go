package resolvers

import (
	"context"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// OAuth2ClientMetadata is an RFC 7591 client metadata document as /v1/oauth2/register
// receives it. Nil pointers and nil slices are absent fields, so the use cases fill the same
// defaults as for GraphQL; an empty non-nil slice is sent on and refused like any other.
type OAuth2ClientMetadata struct {
	RedirectURIs            []string
	TokenEndpointAuthMethod *string
	GrantTypes              []string
	ResponseTypes           []string
	Scope                   *string
	ClientName              string
	ClientURI               *string
	LogoURI                 *string
	TosURI                  *string
	PolicyURI               *string
	DefaultSubType          *string
}

// OAuth2ClientConfiguration is a registered client as the registration endpoints show it
// (RFC 7591 §3.2.1 client information). ClientSecret is set only in the answer that created
// the secret, since Till keeps nothing but its hash. SecretExpiresAt is nil for public
// clients and the zero time for secrets that never expire.
type OAuth2ClientConfiguration struct {
	OAuth2ClientMetadata
	ClientID        string
	ClientSecret    *string
	IssuedAt        time.Time
	SecretExpiresAt *time.Time
}

// RegisterOAuth2Client creates a client for the calling user through the same use case as
// GraphQL's createOAuth2Client, under the same scope.
func (r *Resolver) RegisterOAuth2Client(ctx context.Context, m OAuth2ClientMetadata) (*OAuth2ClientConfiguration, error) {
	if err := requireClientRegistrant(ctx, model.ScopeOrganizationsWrite); err != nil {
		return nil, err
	}
	out, err := r.createOAuth2Client(ctx, m.createInput())
	if err != nil {
		return nil, err
	}
	return clientConfiguration(out.Client, out.ClientSecret), nil
}

// RegisteredOAuth2Client reads one of the calling user's clients (RFC 7592 read).
func (r *Resolver) RegisteredOAuth2Client(ctx context.Context, clientID string) (*OAuth2ClientConfiguration, error) {
	if err := requireClientRegistrant(ctx, model.ScopeOrganizationsRead, model.ScopeOrganizationsWrite); err != nil {
		return nil, err
	}
	c, err := r.oauth2Client(ctx, clientID)
	if err != nil {
		return nil, err
	}
	return clientConfiguration(c, nil), nil
}

// ReplaceOAuth2Client is the RFC 7592 update: the document replaces the client's metadata,
// absent fields taking their registration defaults as upstream's full-model update does,
// except the informational URIs, which an absent or null value leaves as they are (upstream
// drops None before merging). bodyClientID must name the client being changed (RFC 7592
// §2.2); a mismatch is invalid_request once the client is known to exist.
func (r *Resolver) ReplaceOAuth2Client(ctx context.Context, clientID, bodyClientID string, m OAuth2ClientMetadata) (*OAuth2ClientConfiguration, error) {
	if err := requireClientRegistrant(ctx, model.ScopeOrganizationsWrite); err != nil {
		return nil, err
	}
	w, err := checkOAuth2ClientCreate(m.createInput())
	if err != nil {
		return nil, err
	}
	if _, err := r.oauth2Client(ctx, clientID); err != nil {
		return nil, err
	}
	if bodyClientID != clientID {
		return nil, oauthError(http.StatusBadRequest, "invalid_request", "")
	}
	in := model.OAuth2ClientUpdateInput{ClientName: &w.ClientName, RedirectUris: w.RedirectURIs, Scope: &w.Scope,
		TokenEndpointAuthMethod: &w.TokenEndpointAuthMethod, GrantTypes: w.GrantTypes, ResponseTypes: w.ResponseTypes,
		DefaultSubType: &w.DefaultSubType}
	for _, f := range []struct {
		value *string
		field *graphql.Omittable[*string]
	}{{w.ClientURI, &in.ClientURI}, {w.LogoURI, &in.LogoURI}, {w.TosURI, &in.TosURI}, {w.PolicyURI, &in.PolicyURI}} {
		if f.value != nil {
			*f.field = graphql.OmittableOf(f.value)
		}
	}
	out, err := r.updateOAuth2Client(ctx, clientID, in)
	if err != nil {
		return nil, err
	}
	return clientConfiguration(out.Client, out.ClientSecret), nil
}

// DeregisterOAuth2Client deletes one of the calling user's clients through the use case that
// also revokes its tokens (RFC 7592 delete).
func (r *Resolver) DeregisterOAuth2Client(ctx context.Context, clientID string) error {
	if err := requireClientRegistrant(ctx, model.ScopeOrganizationsWrite); err != nil {
		return err
	}
	_, err := r.deleteOAuth2Client(ctx, clientID)
	return err
}

// AuthorizeOAuth2ClientRegistration applies requireClientRegistrant for a read or a write
// ahead of the use case, so /v1 can answer 401/403 before it validates the body, in
// upstream's order.
func (r *Resolver) AuthorizeOAuth2ClientRegistration(ctx context.Context, write bool) error {
	if write {
		return requireClientRegistrant(ctx, model.ScopeOrganizationsWrite)
	}
	return requireClientRegistrant(ctx, model.ScopeOrganizationsRead, model.ScopeOrganizationsWrite)
}

// requireClientRegistrant admits the principals the registration endpoints serve: a user
// (personal access token or OAuth user token), standing in for upstream's web session, with
// one of the scopes GraphQL asks for the same use case. Every other principal is treated as
// anonymous, as upstream downgrades subjects a route does not accept, and so unauthorized.
func requireClientRegistrant(ctx context.Context, anyOf ...model.Scope) error {
	if auth.FromContext(ctx).Kind != auth.KindUser {
		return Unauthorized()
	}
	return checkScope(ctx, anyOf)
}

func (m OAuth2ClientMetadata) createInput() model.OAuth2ClientCreateInput {
	return model.OAuth2ClientCreateInput{ClientName: m.ClientName, ClientURI: m.ClientURI, LogoURI: m.LogoURI,
		TosURI: m.TosURI, PolicyURI: m.PolicyURI, RedirectUris: m.RedirectURIs, Scope: m.Scope,
		TokenEndpointAuthMethod: m.TokenEndpointAuthMethod, GrantTypes: m.GrantTypes, ResponseTypes: m.ResponseTypes,
		DefaultSubType: m.DefaultSubType}
}

func clientConfiguration(c *storage.OAuth2Client, secret *string) *OAuth2ClientConfiguration {
	out := &OAuth2ClientConfiguration{
		OAuth2ClientMetadata: OAuth2ClientMetadata{RedirectURIs: c.RedirectURIs, TokenEndpointAuthMethod: &c.TokenEndpointAuthMethod,
			GrantTypes: c.GrantTypes, ResponseTypes: c.ResponseTypes, Scope: &c.Scope, ClientName: c.ClientName,
			ClientURI: c.ClientURI, LogoURI: c.LogoURI, TosURI: c.TosURI, PolicyURI: c.PolicyURI,
			DefaultSubType: &c.DefaultSubType},
		ClientID: c.ClientID, ClientSecret: secret, IssuedAt: c.CreatedAt,
	}
	if c.ClientSecretHash != nil {
		expires := time.Time{}
		if c.ClientSecretExpiresAt != nil {
			expires = *c.ClientSecretExpiresAt
		}
		out.SecretExpiresAt = &expires
	}
	return out
}
