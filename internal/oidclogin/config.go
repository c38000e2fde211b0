// Package oidclogin signs users in with an OpenID Connect provider (any standard one: Google,
// Microsoft Entra, Keycloak, Authentik, another Till): it sends the browser to the provider
// with state, nonce and PKCE, and turns the provider's answer into a verified identity. What
// an identity may do (find or create the user, open a session) is the application's rule.
package oidclogin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// ProviderConfig is one provider as the operator configures it in TILL_OIDC_PROVIDERS, a
// JSON array of these objects.
type ProviderConfig struct {
	// Name identifies the provider in URLs (/auth/oidc/{name}) and in stored identities, so
	// it must never change once users signed in with it.
	Name string `json:"name"`
	// DisplayName is what the sign-in page shows ("Sign in with …"); Name when empty.
	DisplayName string `json:"display_name"`
	// Issuer is the provider's issuer URL; its discovery document is read from
	// {issuer}/.well-known/openid-configuration.
	Issuer       string `json:"issuer"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	// Scopes are asked besides openid; email and profile when empty.
	Scopes []string `json:"scopes"`
}

// providerName keeps names safe in URL paths and logs.
var providerName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// ParseProviders reads TILL_OIDC_PROVIDERS. Empty means no provider. Every mistake is
// reported with the provider it concerns, so a typo stops the server at start rather than a
// user at sign-in.
func ParseProviders(s string) ([]ProviderConfig, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []ProviderConfig
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("TILL_OIDC_PROVIDERS: not a JSON array of providers: %w", err)
	}
	seen := map[string]bool{}
	for i, p := range out {
		where := fmt.Sprintf("TILL_OIDC_PROVIDERS[%d]", i)
		if !providerName.MatchString(p.Name) {
			return nil, fmt.Errorf("%s: name %q must be 1 to 32 lowercase letters, digits or dashes", where, p.Name)
		}
		where += " (" + p.Name + ")"
		if seen[p.Name] {
			return nil, fmt.Errorf("%s: the name is used twice", where)
		}
		seen[p.Name] = true
		if err := checkIssuer(p.Issuer); err != nil {
			return nil, fmt.Errorf("%s: issuer: %w", where, err)
		}
		if p.ClientID == "" {
			return nil, fmt.Errorf("%s: client_id is required", where)
		}
		if p.DisplayName == "" {
			out[i].DisplayName = p.Name
		}
		if len(p.Scopes) == 0 {
			out[i].Scopes = []string{"email", "profile"}
		}
	}
	return out, nil
}

// checkIssuer accepts https issuers, and http only on a loopback host, where a provider
// under test or on the same machine runs; tokens must never travel in clear elsewhere.
func checkIssuer(issuer string) error {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return errors.New("must be an absolute URL without query or fragment")
	}
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopback(u.Hostname()):
		return nil
	default:
		return errors.New("must use https (http only on localhost)")
	}
}

func loopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// Names lists the configured providers for the start-up summary; secrets never appear.
func Names(ps []ProviderConfig) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name + " (" + p.Issuer + ")"
	}
	return strings.Join(names, ", ")
}
