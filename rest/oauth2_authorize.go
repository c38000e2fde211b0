package rest

import (
	"errors"
	"net/http"
	"time"

	"till/internal/auth"
	"till/resolvers"
)

// oauth2Authorize serves GET /v1/oauth2/authorize: it validates the request and answers the
// consent-screen data. Till has no browser session, so callers are anonymous (any bearer token
// is 403 NotPermitted, as upstream answers API tokens), prompt=none can only fail with
// login_required and prompt=login is 401.
func oauth2Authorize(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !auth.FromContext(req.Context()).Anonymous() {
			writeError(w, http.StatusForbidden, "NotPermitted", "Not permitted")
			return
		}
		q := req.URL.Query()
		if !storableValues(q) {
			writeOAuth2Error(w, http.StatusBadRequest, "invalid_request", "", nil)
			return
		}
		areq := resolvers.AuthorizeRequest{ResponseType: q.Get("response_type"), ClientID: q.Get("client_id"),
			RedirectURI: q.Get("redirect_uri"), Scope: q.Get("scope"), State: q.Get("state"), Nonce: q.Get("nonce"),
			CodeChallenge: q.Get("code_challenge"), CodeChallengeMethod: q.Get("code_challenge_method"),
			Prompt: q.Get("prompt"), SubType: q.Get("sub_type")}
		consent, err := r.OAuth2ConsentData(req.Context(), areq)
		var oe *resolvers.OAuth2Error
		switch {
		case errors.As(err, &oe) && oe.Redirect != "":
			oauthRedirect(w, oe.RedirectURL(r.Issuer()))
			return
		case err != nil:
			writeOAuthFailure(w, req, r, resolvers.ClientCredentials{}, err)
			return
		}
		switch areq.Prompt {
		case "login":
			writeDetail(w, http.StatusUnauthorized, "Unauthorized")
			return
		case "none":
			e := &resolvers.OAuth2Error{Code: "login_required", Redirect: consent.RedirectURI, State: areq.State}
			oauthRedirect(w, e.RedirectURL(r.Issuer()))
			return
		}
		writeOAuthJSON(w, http.StatusOK, authorizeBody(consent))
	})
}

// oauthRedirect sends the browser back to the client as authlib does: 302, Location, no body.
func oauthRedirect(w http.ResponseWriter, location string) {
	h := w.Header()
	h.Set("Location", location)
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	w.WriteHeader(http.StatusFound)
}

// authorizeClient is OAuth2ClientPublic.
type authorizeClient struct {
	CreatedAt  string  `json:"created_at"`
	ModifiedAt *string `json:"modified_at"`
	ClientID   string  `json:"client_id"`
	ClientName *string `json:"client_name"`
	ClientURI  *string `json:"client_uri"`
	LogoURI    *string `json:"logo_uri"`
	TosURI     *string `json:"tos_uri"`
	PolicyURI  *string `json:"policy_uri"`
}

// authorizeResponse is AuthorizeResponseUser for an anonymous caller: upstream always answers
// sub_type user, and a request for an organization subject only sets
// requires_single_organization.
type authorizeResponse struct {
	Client                     authorizeClient   `json:"client"`
	SubType                    string            `json:"sub_type"`
	Sub                        *struct{}         `json:"sub"`
	Scopes                     []auth.Scope      `json:"scopes"`
	Organizations              []struct{}        `json:"organizations"`
	RequiresSingleOrganization bool              `json:"requires_single_organization"`
	ScopeDisplayNames          map[string]string `json:"scope_display_names"`
}

func authorizeBody(c *resolvers.OAuth2Consent) authorizeResponse {
	cl := c.Client
	client := authorizeClient{CreatedAt: cl.CreatedAt.UTC().Format(time.RFC3339Nano), ClientID: cl.ClientID,
		ClientName: &cl.ClientName, ClientURI: cl.ClientURI, LogoURI: cl.LogoURI, TosURI: cl.TosURI, PolicyURI: cl.PolicyURI}
	if cl.ModifiedAt != nil {
		m := cl.ModifiedAt.UTC().Format(time.RFC3339Nano)
		client.ModifiedAt = &m
	}
	return authorizeResponse{Client: client, SubType: "user", Scopes: c.Scopes, Organizations: []struct{}{},
		RequiresSingleOrganization: c.RequiresSingleOrganization, ScopeDisplayNames: scopeDisplayNames}
}

// scopeDisplayNames is the consent screen wording of every scope, upstream's default of
// AuthorizeResponse*.scope_display_names.
var scopeDisplayNames = map[string]string{
	"openid":                           "OpenID",
	"profile":                          "Read your profile",
	"email":                            "Read your email address",
	"user:read":                        "Read your user account",
	"user:write":                       "Manage your user account",
	"organizations:read":               "Read your organizations",
	"organizations:write":              "Create or modify organizations",
	"custom_fields:read":               "Read custom fields",
	"custom_fields:write":              "Create or modify custom fields",
	"discounts:read":                   "Read discounts",
	"discounts:write":                  "Create or modify discounts",
	"checkout_links:read":              "Read checkout links",
	"checkout_links:write":             "Create or modify checkout links",
	"checkouts:read":                   "Read checkout sessions",
	"checkouts:write":                  "Create or modify checkout sessions",
	"transactions:read":                "Read transactions",
	"transactions:write":               "Create or modify transactions",
	"payouts:read":                     "Read payouts",
	"payouts:write":                    "Create or modify payouts",
	"products:read":                    "Read products",
	"products:write":                   "Create or modify products",
	"benefits:read":                    "Read benefits",
	"benefits:write":                   "Create or modify benefits",
	"events:read":                      "Read events",
	"events:write":                     "Create events",
	"meters:read":                      "Read meters",
	"meters:write":                     "Create or modify meters",
	"files:read":                       "Read file uploads",
	"files:write":                      "Create or modify file uploads",
	"subscriptions:read":               "Read subscriptions made on your organizations",
	"subscriptions:write":              "Create or modify subscriptions made on your organizations",
	"customers:read":                   "Read customers",
	"customers:write":                  "Create or modify customers",
	"members:read":                     "Read members",
	"members:write":                    "Create or modify members",
	"wallets:read":                     "Read wallets",
	"wallets:write":                    "Create or modify wallets",
	"disputes:read":                    "Read disputes",
	"disputes:write":                   "Create or modify disputes",
	"customer_meters:read":             "Read customer meters",
	"customer_sessions:write":          "Create or modify customer sessions",
	"member_sessions:write":            "Create or modify member sessions",
	"customer_seats:read":              "Read customer seats",
	"customer_seats:write":             "Create or modify customer seats",
	"orders:read":                      "Read orders made on your organizations",
	"orders:write":                     "Modify orders made on your organizations",
	"refunds:read":                     "Read refunds made on your organizations",
	"refunds:write":                    "Create or modify refunds",
	"payments:read":                    "Read payments made on your organizations",
	"metrics:read":                     "Read metrics",
	"metrics:write":                    "Create or modify metric definitions",
	"webhooks:read":                    "Read webhooks",
	"webhooks:write":                   "Create or modify webhooks",
	"license_keys:read":                "Read license keys",
	"license_keys:write":               "Modify license keys",
	"customer_portal:read":             "Read your orders, subscriptions and benefits",
	"customer_portal:write":            "Create or modify your orders, subscriptions and benefits",
	"notifications:read":               "Read notifications",
	"notifications:write":              "Mark notifications as read",
	"notification_recipients:read":     "Read notification recipients",
	"notification_recipients:write":    "Create or modify notification recipients",
	"organization_access_tokens:read":  "Read organization access tokens",
	"organization_access_tokens:write": "Create or modify organization access tokens",
}
