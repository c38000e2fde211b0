package resolvers

import (
	"context"
	"errors"
	"net/http"

	"till/graph/model"
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
// (RFC 7591 §3.2.1 client information), in the protocol's units. ClientSecret is set only in
// the answer that created the secret, since Till keeps nothing but its hash. Till issues no
// registration access token: a user token manages its clients.
type OAuth2ClientConfiguration struct {
	OAuth2ClientMetadata
	ClientID     string
	ClientSecret *string
	// ClientIDIssuedAt is when the client was registered, in seconds since the epoch.
	ClientIDIssuedAt int64
	// ClientSecretExpiresAt is client_secret_expires_at: nil for a public client, which has
	// no secret, and 0 for a secret that never expires.
	ClientSecretExpiresAt *int64
	// RegistrationClientURI is where the client is read, replaced and deleted (RFC 7592).
	RegistrationClientURI string
}

// clientMetadataOf reads a registration document whose JSON types were checked. Absent
// fields stay nil so the use case applies its defaults; an explicit empty list stays an
// empty list.
func clientMetadataOf(doc map[string]any) OAuth2ClientMetadata {
	str := func(key string) *string {
		if s, isString := doc[key].(string); isString {
			return &s
		}
		return nil
	}
	list := func(key string) []string {
		items, isList := doc[key].([]any)
		if !isList {
			return nil
		}
		out := make([]string, len(items))
		for i, item := range items {
			out[i], _ = item.(string)
		}
		return out
	}
	m := OAuth2ClientMetadata{RedirectURIs: list("redirectUris"), TokenEndpointAuthMethod: str("tokenEndpointAuthMethod"),
		GrantTypes: list("grantTypes"), ResponseTypes: list("responseTypes"), Scope: str("scope"),
		ClientURI: str("clientUri"), LogoURI: str("logoUri"), TosURI: str("tosUri"), PolicyURI: str("policyUri"),
		DefaultSubType: str("defaultSubType")}
	if name := str("clientName"); name != nil {
		m.ClientName = *name
	}
	return m
}

func (m OAuth2ClientMetadata) createInput() model.OAuth2ClientCreateInput {
	return model.OAuth2ClientCreateInput{ClientName: m.ClientName, ClientURI: m.ClientURI, LogoURI: m.LogoURI,
		TosURI: m.TosURI, PolicyURI: m.PolicyURI, RedirectUris: m.RedirectURIs, Scope: m.Scope,
		TokenEndpointAuthMethod: m.TokenEndpointAuthMethod, GrantTypes: m.GrantTypes, ResponseTypes: m.ResponseTypes,
		DefaultSubType: m.DefaultSubType}
}

// clientConfiguration is the client information of c, with secret when it was just issued.
func (r *Resolver) clientConfiguration(c *storage.OAuth2Client, secret *string) *OAuth2ClientConfiguration {
	out := &OAuth2ClientConfiguration{
		OAuth2ClientMetadata: OAuth2ClientMetadata{RedirectURIs: c.RedirectURIs, TokenEndpointAuthMethod: &c.TokenEndpointAuthMethod,
			GrantTypes: c.GrantTypes, ResponseTypes: c.ResponseTypes, Scope: &c.Scope, ClientName: c.ClientName,
			ClientURI: c.ClientURI, LogoURI: c.LogoURI, TosURI: c.TosURI, PolicyURI: c.PolicyURI,
			DefaultSubType: &c.DefaultSubType},
		ClientID: c.ClientID, ClientSecret: secret, ClientIDIssuedAt: c.CreatedAt.Unix(),
		RegistrationClientURI: r.Issuer() + "/v1/oauth2/register/" + c.ClientID,
	}
	if c.ClientSecretHash != nil {
		var expires int64
		if c.ClientSecretExpiresAt != nil && !c.ClientSecretExpiresAt.IsZero() {
			expires = c.ClientSecretExpiresAt.Unix()
		}
		out.ClientSecretExpiresAt = &expires
	}
	return out
}

// registrationFailure answers a use case's err as upstream answers it on the registration
// endpoints. A client that is unknown, deleted or someone else's is authlib's 401
// invalid_client (RFC 7592 §2); a server fault is logged here and shows nothing.
func (r *Resolver) registrationFailure(ctx context.Context, op string, err error) OAuth2ClientOutcome {
	var oe *OAuth2Error
	var te *Error
	switch {
	case errors.As(err, &oe):
		return OAuth2ClientOutcome{OAuth2Error: oe}
	case !errors.As(err, &te):
		r.logger.ErrorContext(ctx, "oauth2 registration failed", "operation", op, "error", err)
		return OAuth2ClientOutcome{Error: internalError()}
	case te.Code == CodeNotFound:
		unknown := oauthError(http.StatusUnauthorized, "invalid_client", "")
		return OAuth2ClientOutcome{OAuth2Error: unknown.withHeader("WWW-Authenticate", `Basic error="invalid_client", error_description=""`)}
	case len(te.Errors) > 0:
		return metadataFailure(te)
	}
	return OAuth2ClientOutcome{Error: te}
}

// metadataFailure answers the field errors of a client document. Upstream validates the
// shape with pydantic (422) before authlib checks the scope against the supported ones, so a
// scope error alone is 400 invalid_client_metadata, and otherwise only the other errors are
// sent.
func metadataFailure(te *Error) OAuth2ClientOutcome {
	var others []FieldError
	scopeFailed := false
	for _, fe := range te.Errors {
		if len(fe.Loc) == 2 && fe.Loc[0] == "input" && fe.Loc[1] == "scope" {
			scopeFailed = true
			continue
		}
		others = append(others, fe)
	}
	if len(others) == 0 && scopeFailed {
		return OAuth2ClientOutcome{OAuth2Error: oauthError(http.StatusBadRequest, "invalid_client_metadata", "Invalid claim 'scope'")}
	}
	remaining := *te
	remaining.Errors = others
	return OAuth2ClientOutcome{Error: &remaining}
}
