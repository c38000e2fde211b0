package resolvers

import (
	"context"
	"errors"
	"strings"

	"till/internal/oidclogin"
)

// OpenID Connect sign-in: an identity provider the operator configured (TILL_OIDC_PROVIDERS)
// vouches for the user's email, and Till signs in the user with that email as a mailed code
// would, creating them on their first sign-in. Only an email the provider says it verified
// counts: an unverified one would let anyone who can register that address at the provider
// take over the Till account that has it.

// OIDCProviders lists the configured providers for the sign-in page, in configuration order.
func (r *Resolver) OIDCProviders() []oidclogin.ProviderConfig {
	return r.oidcLogin.Providers()
}

// StartOIDCSignIn begins a sign-in with provider name: where to send the browser, and the
// sealed flow the browser keeps meanwhile (a cookie). returnTo is where the sign-in leads,
// a path of Till's own origin.
func (r *Resolver) StartOIDCSignIn(ctx context.Context, name, returnTo string) (authURL, flow string, err error) {
	if !r.oidcLogin.Has(name) {
		return "", "", NotFound("Identity provider")
	}
	authURL, flow, err = r.oidcLogin.Start(ctx, name, SafeReturnTo(returnTo), r.Now())
	if err != nil {
		r.logger.WarnContext(ctx, "oidc sign-in: provider unavailable", "provider", name, "error", err)
		return "", "", providerUnavailable()
	}
	return authURL, flow, nil
}

// FinishOIDCSignIn completes the sign-in the browser's flow started with the provider's
// answer (state and code from the callback) and returns the new session and where it leads.
func (r *Resolver) FinishOIDCSignIn(ctx context.Context, name, flow, state, code string, client SignInClient) (*SignedIn, error) {
	f, err := r.oidcLogin.Open(flow, r.Now())
	if err != nil || f.Provider != name {
		return nil, BadRequest(oidclogin.ErrFlow.Error())
	}
	id, err := r.oidcLogin.Finish(ctx, f, state, code)
	if errors.Is(err, oidclogin.ErrFlow) {
		r.logger.InfoContext(ctx, "oidc sign-in refused", "provider", name, "error", err)
		return nil, BadRequest(oidclogin.ErrFlow.Error())
	}
	if err != nil {
		r.logger.WarnContext(ctx, "oidc sign-in: provider unavailable", "provider", name, "error", err)
		return nil, providerUnavailable()
	}
	if !id.EmailVerified || strings.TrimSpace(id.Email) == "" {
		return nil, NotPermitted("The identity provider did not confirm an email address for this account; sign in by email instead.")
	}
	out, err := r.SignInVerifiedEmail(ctx, id.Email, client)
	if err != nil {
		return nil, err
	}
	out.ReturnTo = f.ReturnTo
	return out, nil
}

// codeProviderUnavailable is an identity provider that did not answer (discovery or the
// token exchange failed): the sign-in can be tried again later.
const codeProviderUnavailable = "IdentityProviderUnavailable"

func providerUnavailable() *Error {
	return &Error{Code: codeProviderUnavailable, Detail: "The identity provider cannot be reached; try again later or sign in by email."}
}
