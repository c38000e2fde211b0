package resolvers

import "till/internal/auth"

// Where OpenID Connect relying parties find the provider: both at the root of the origin,
// as OpenID Connect Discovery 1.0 and go-oidc, oauthlib and friends expect for an issuer
// without a path.
const (
	OpenIDConfigurationPath = "/.well-known/openid-configuration"
	JWKSPath                = "/.well-known/jwks.json"
)

// OpenIDProviderMetadata is the discovery document (OpenID Connect Discovery 1.0 §3, with
// the RFC 8414 endpoints for revocation and introspection). Every member is always present.
type OpenIDProviderMetadata struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint"`
	TokenEndpoint                              string   `json:"token_endpoint"`
	UserinfoEndpoint                           string   `json:"userinfo_endpoint"`
	JWKSURI                                    string   `json:"jwks_uri"`
	RevocationEndpoint                         string   `json:"revocation_endpoint"`
	IntrospectionEndpoint                      string   `json:"introspection_endpoint"`
	ScopesSupported                            []string `json:"scopes_supported"`
	ResponseTypesSupported                     []string `json:"response_types_supported"`
	ResponseModesSupported                     []string `json:"response_modes_supported"`
	GrantTypesSupported                        []string `json:"grant_types_supported"`
	SubjectTypesSupported                      []string `json:"subject_types_supported"`
	IDTokenSigningAlgValuesSupported           []string `json:"id_token_signing_alg_values_supported"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethodsSupported     []string `json:"revocation_endpoint_auth_methods_supported"`
	IntrospectionEndpointAuthMethodsSupported  []string `json:"introspection_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported"`
	ClaimsSupported                            []string `json:"claims_supported"`
	AuthorizationResponseIssParameterSupported bool     `json:"authorization_response_iss_parameter_supported"`
}

// OpenIDDiscovery describes the provider at Issuer. The lists say what the /v1/oauth2
// endpoints accept (contract §3.1, §4.9): the code flow only, PKCE, public clients at the
// token endpoint but not at revocation or introspection, and the claims id tokens and
// userinfo carry.
func (r *Resolver) OpenIDDiscovery() OpenIDProviderMetadata {
	issuer := r.Issuer()
	scopes := auth.AllScopes()
	names := make([]string, len(scopes))
	for i, s := range scopes {
		names[i] = string(s)
	}
	clientAuth := []string{"client_secret_basic", "client_secret_post"}
	return OpenIDProviderMetadata{
		Issuer:                                     issuer,
		AuthorizationEndpoint:                      issuer + "/v1/oauth2/authorize",
		TokenEndpoint:                              issuer + "/v1/oauth2/token",
		UserinfoEndpoint:                           issuer + "/v1/oauth2/userinfo",
		JWKSURI:                                    issuer + JWKSPath,
		RevocationEndpoint:                         issuer + "/v1/oauth2/revoke",
		IntrospectionEndpoint:                      issuer + "/v1/oauth2/introspect",
		ScopesSupported:                            names,
		ResponseTypesSupported:                     []string{"code"},
		ResponseModesSupported:                     []string{"query"},
		GrantTypesSupported:                        []string{"authorization_code", "refresh_token"},
		SubjectTypesSupported:                      []string{"public"},
		IDTokenSigningAlgValuesSupported:           []string{"RS256"},
		TokenEndpointAuthMethodsSupported:          []string{"client_secret_basic", "client_secret_post", "none"},
		RevocationEndpointAuthMethodsSupported:     clientAuth,
		IntrospectionEndpointAuthMethodsSupported:  clientAuth,
		CodeChallengeMethodsSupported:              []string{"S256", "plain"},
		ClaimsSupported:                            []string{"iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "email", "email_verified", "name"},
		AuthorizationResponseIssParameterSupported: true,
	}
}
