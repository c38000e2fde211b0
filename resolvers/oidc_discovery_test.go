package resolvers_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"till/internal/auth"
	"till/resolvers"
	"till/storage/storagetest"
)

func TestOpenIDDiscoveryDocument(t *testing.T) {
	t.Parallel()
	const issuer = "https://till.example.com"
	db := storagetest.New(t)
	var scopes []any
	for _, s := range auth.AllScopes() {
		scopes = append(scopes, string(s))
	}
	want := map[string]any{
		"issuer":                                         issuer,
		"authorization_endpoint":                         issuer + "/v1/oauth2/authorize",
		"token_endpoint":                                 issuer + "/v1/oauth2/token",
		"userinfo_endpoint":                              issuer + "/v1/oauth2/userinfo",
		"jwks_uri":                                       issuer + "/.well-known/jwks.json",
		"revocation_endpoint":                            issuer + "/v1/oauth2/revoke",
		"introspection_endpoint":                         issuer + "/v1/oauth2/introspect",
		"scopes_supported":                               scopes,
		"response_types_supported":                       []any{"code"},
		"response_modes_supported":                       []any{"query"},
		"grant_types_supported":                          []any{"authorization_code", "refresh_token"},
		"subject_types_supported":                        []any{"public"},
		"id_token_signing_alg_values_supported":          []any{"RS256"},
		"token_endpoint_auth_methods_supported":          []any{"client_secret_basic", "client_secret_post", "none"},
		"revocation_endpoint_auth_methods_supported":     []any{"client_secret_basic", "client_secret_post"},
		"introspection_endpoint_auth_methods_supported":  []any{"client_secret_basic", "client_secret_post"},
		"code_challenge_methods_supported":               []any{"S256", "plain"},
		"claims_supported":                               []any{"iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "email", "email_verified", "name"},
		"authorization_response_iss_parameter_supported": true,
	}
	for _, tt := range []struct {
		name      string
		publicURL string
	}{
		{"describes the provider at its public URL", issuer},
		// Relying parties compare the issuer byte for byte with the id tokens' iss.
		{"keeps a trailing slash of the public URL out of every URL", issuer + "/"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := resolvers.New(resolvers.Deps{DB: db, Secret: []byte("secret"), PortalURL: tt.publicURL})
			b, err := json.Marshal(r.OpenIDDiscovery())
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("discovery document (-want +got):\n%s", diff)
			}
		})
	}
}
