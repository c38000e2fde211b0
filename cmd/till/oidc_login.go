package main

import (
	"fmt"
	"io"
	"net/http"

	"till/internal/oidclogin"
)

// oidcLogin builds the identity providers of TILL_OIDC_PROVIDERS (validated at start), or
// nil when there are none.
func oidcLogin(c config, secret []byte) (*oidclogin.Set, error) {
	ps, err := oidclogin.ParseProviders(c.OIDCProviders)
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	callback := func(name string) string { return c.PublicURL + "/auth/oidc/" + name + "/callback" }
	return oidclogin.NewSet(ps, secret, callback, &http.Client{Timeout: mailTimeout}), nil
}

// printOIDCLogin names the identity providers, never their secrets, and the redirect URI
// to register at each.
func (c config) printOIDCLogin(w io.Writer) {
	ps, err := oidclogin.ParseProviders(c.OIDCProviders)
	if err != nil || len(ps) == 0 {
		fmt.Fprintln(w, "  TILL_OIDC_PROVIDERS=(none: sign-in by mailed code only)")
		return
	}
	fmt.Fprintf(w, "  TILL_OIDC_PROVIDERS=%s (redirect URI %s/auth/oidc/<name>/callback)\n", oidclogin.Names(ps), c.PublicURL)
}
