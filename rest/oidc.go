package rest

import (
	"encoding/json"
	"net/http"

	"till/internal/auth"
	"till/resolvers"
)

// Where OpenID Connect relying parties find the provider: both at the root of the origin,
// as OpenID Connect Discovery 1.0 and go-oidc, oauthlib and friends expect for an issuer
// without a path.
const (
	OpenIDConfigurationPath = "/.well-known/openid-configuration"
	JWKSPath                = "/.well-known/jwks.json"
)

// openIDConfiguration is the discovery document (OpenID Connect Discovery 1.0 §3, with the
// RFC 8414 endpoints for revocation and introspection). Every member is always present.
type openIDConfiguration struct {
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

// newOpenIDConfiguration describes the provider at issuer. The lists say what the /v1/oauth2
// endpoints accept (contract §3.1, §4.9): the code flow only, PKCE, public clients at the
// token endpoint but not at revocation or introspection, and the claims id tokens and
// userinfo carry.
func newOpenIDConfiguration(issuer string) openIDConfiguration {
	scopes := auth.AllScopes()
	names := make([]string, len(scopes))
	for i, s := range scopes {
		names[i] = string(s)
	}
	clientAuth := []string{"client_secret_basic", "client_secret_post"}
	return openIDConfiguration{
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

// OpenIDConfigurationHandler serves the discovery document at OpenIDConfigurationPath. It
// needs no token and may be cached for an hour: it changes only with the configuration.
func OpenIDConfigurationHandler(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			oidcMethodNotAllowed(w)
			return
		}
		body, err := json.Marshal(newOpenIDConfiguration(r.Issuer()))
		if err != nil {
			writeOIDCError(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		writeOIDCDocument(w, "application/json", "public, max-age=3600", body)
	})
}

// JWKSHandler serves the id-token verification keys at JWKSPath. The set may be cached for
// five minutes: a retired key stays listed far longer than that, and a relying party that
// meets a new kid refetches the set (go-oidc does), so a fresh key is picked up at once.
func JWKSHandler(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			oidcMethodNotAllowed(w)
			return
		}
		set, err := r.OIDCKeySet(req.Context())
		if err != nil {
			r.Logger().ErrorContext(req.Context(), "oidc: key set", "error", err)
			writeOIDCError(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		body, err := json.Marshal(set)
		if err != nil {
			writeOIDCError(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		writeOIDCDocument(w, "application/jwk-set+json", "public, max-age=300", body)
	})
}

// writeOIDCDocument sends a document anyone may read: cacheable for the given directive and
// readable cross-origin, since browser applications fetch discovery and keys themselves.
func writeOIDCDocument(w http.ResponseWriter, contentType, cacheControl string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", cacheControl)
	h.Set("Access-Control-Allow-Origin", "*")
	_, _ = w.Write(body)
}

// writeOIDCError sends a {"detail": ...} error that no cache keeps, so a recovered server
// answers the next request.
func writeOIDCError(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Cache-Control", "no-store")
	writeDetail(w, status, detail)
}

// oidcMethodNotAllowed answers anything but GET and HEAD on the read-only OpenID documents.
func oidcMethodNotAllowed(w http.ResponseWriter) {
	w.Header().Set("Allow", "GET, HEAD")
	writeOIDCError(w, http.StatusMethodNotAllowed, "Method Not Allowed")
}
