package resolvers

import (
	"context"
	"net/http"

	"github.com/99designs/gqlgen/graphql"

	"till/graph/model"
	"till/internal/auth"
)

// OAuth2ClientRequest is a call to the registration endpoints: /v1/oauth2/register (RFC
// 7591) and /v1/oauth2/register/{client_id} (RFC 7592).
type OAuth2ClientRequest struct {
	// ClientID is the client of the path; empty for a registration.
	ClientID string
	// Document is the client metadata of a registration or an update once its JSON types were
	// checked, keyed by GraphQL field names (redirectUris, clientName, …, and clientId, the
	// update's own copy of the id). Absent fields take the use case's defaults.
	Document map[string]any
	// MalformedBody says the body's JSON types were refused. The caller is still checked
	// first, as upstream checks it before the body.
	MalformedBody bool
}

// OAuth2ClientOutcome is the answer of a registration endpoint: a success (Status, with the
// Client unless it was deleted), or exactly one of OAuth2Error, Error and MalformedBody.
type OAuth2ClientOutcome struct {
	// Status is the success status: 201 for a registration, 200 for a read or an update, 204
	// for a deletion.
	Status int
	// Client is the client information a success shows; nil after a deletion.
	Client *OAuth2ClientConfiguration
	// OAuth2Error is authlib's answer: 401 invalid_client for a client that is unknown,
	// deleted or someone else's (RFC 7592 §2), 400 invalid_request for an update naming
	// another client, 400 invalid_client_metadata for a scope alone at fault.
	OAuth2Error *OAuth2Error
	// Error is a Polar answer: the caller is no user (Unauthorized) or lacks the scope
	// (insufficient_scope), the metadata's field errors, or a server fault.
	Error *Error
	// MalformedBody says the caller may go on and the body's JSON types are what is wrong:
	// the answer is the shape errors found while reading it.
	MalformedBody bool
}

// RegisterOAuth2Client creates a client for the calling user through the same use case as
// GraphQL's createOAuth2Client, under the same scope. The scopes the registration endpoints
// ask of the caller are the ones GraphQL asks for the same use cases.
func (r *Resolver) RegisterOAuth2Client(ctx context.Context, req OAuth2ClientRequest) OAuth2ClientOutcome {
	if refused, ok := r.clientRegistrant(ctx, req, model.ScopeOrganizationsWrite); !ok {
		return refused
	}
	out, err := r.createOAuth2Client(ctx, clientMetadataOf(req.Document).createInput())
	if err != nil {
		return r.registrationFailure(ctx, "register", err)
	}
	return OAuth2ClientOutcome{Status: http.StatusCreated, Client: r.clientConfiguration(out.Client, out.ClientSecret)}
}

// RegisteredOAuth2Client reads one of the calling user's clients (RFC 7592 read).
func (r *Resolver) RegisteredOAuth2Client(ctx context.Context, req OAuth2ClientRequest) OAuth2ClientOutcome {
	if refused, ok := r.clientRegistrant(ctx, req, model.ScopeOrganizationsRead, model.ScopeOrganizationsWrite); !ok {
		return refused
	}
	c, err := r.oauth2Client(ctx, req.ClientID)
	if err != nil {
		return r.registrationFailure(ctx, "read", err)
	}
	return OAuth2ClientOutcome{Status: http.StatusOK, Client: r.clientConfiguration(c, nil)}
}

// ReplaceOAuth2Client is the RFC 7592 update: the document replaces the client's metadata,
// absent fields taking their registration defaults as upstream's full-model update does,
// except the informational URIs, which an absent or null value leaves as they are (upstream
// drops None before merging). The document's client_id must name the client being changed
// (RFC 7592 §2.2); a mismatch is invalid_request once the client is known to exist.
func (r *Resolver) ReplaceOAuth2Client(ctx context.Context, req OAuth2ClientRequest) OAuth2ClientOutcome {
	if refused, ok := r.clientRegistrant(ctx, req, model.ScopeOrganizationsWrite); !ok {
		return refused
	}
	c, err := r.replaceOAuth2Client(ctx, req)
	if err != nil {
		return r.registrationFailure(ctx, "replace", err)
	}
	return OAuth2ClientOutcome{Status: http.StatusOK, Client: c}
}

func (r *Resolver) replaceOAuth2Client(ctx context.Context, req OAuth2ClientRequest) (*OAuth2ClientConfiguration, error) {
	w, err := checkOAuth2ClientCreate(clientMetadataOf(req.Document).createInput())
	if err != nil {
		return nil, err
	}
	if _, err := r.oauth2Client(ctx, req.ClientID); err != nil {
		return nil, err
	}
	if bodyClientID, _ := req.Document["clientId"].(string); bodyClientID != req.ClientID {
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
	out, err := r.updateOAuth2Client(ctx, req.ClientID, in)
	if err != nil {
		return nil, err
	}
	return r.clientConfiguration(out.Client, out.ClientSecret), nil
}

// DeregisterOAuth2Client deletes one of the calling user's clients through the use case that
// also revokes its tokens (RFC 7592 delete).
func (r *Resolver) DeregisterOAuth2Client(ctx context.Context, req OAuth2ClientRequest) OAuth2ClientOutcome {
	if refused, ok := r.clientRegistrant(ctx, req, model.ScopeOrganizationsWrite); !ok {
		return refused
	}
	if _, err := r.deleteOAuth2Client(ctx, req.ClientID); err != nil {
		return r.registrationFailure(ctx, "delete", err)
	}
	return OAuth2ClientOutcome{Status: http.StatusNoContent}
}

// clientRegistrant checks the caller, then the body's JSON types, in upstream's order: a
// 401 or 403 wins over a malformed body. When ok is false, refused is the answer.
func (r *Resolver) clientRegistrant(ctx context.Context, req OAuth2ClientRequest, anyOf ...model.Scope) (refused OAuth2ClientOutcome, ok bool) {
	if err := requireClientRegistrant(ctx, anyOf...); err != nil {
		return r.registrationFailure(ctx, "authorize", err), false
	}
	if req.MalformedBody {
		return OAuth2ClientOutcome{MalformedBody: true}, false
	}
	return OAuth2ClientOutcome{}, true
}

// requireClientRegistrant admits the principals the registration endpoints serve: a user
// (personal access token or OAuth user token), standing in for upstream's web session, with
// one of the scopes GraphQL asks for the same use case. Every other principal is treated as
// anonymous, as upstream downgrades subjects a route does not accept, and so unauthorized.
func requireClientRegistrant(ctx context.Context, anyOf ...model.Scope) error {
	if auth.FromContext(ctx).Kind != auth.KindUser {
		return Unauthorized()
	}
	return checkScope(ctx, anyOf, false)
}
