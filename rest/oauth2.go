package rest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"till/internal/auth"
	"till/internal/ratelimit"
	"till/internal/scalar"
	"till/resolvers"
)

// The guards of the OAuth2 endpoints. The authorization endpoint serves anonymous callers and
// users signed in with a browser session, as upstream's refuses every bearer token with 403;
// the consent form needs the browser session; the client endpoints authenticate the client
// from the form; userinfo reads an OAuth2 access token itself.
var (
	consentRequest = Guard{Public: "an authorization request; only a registered redirect URI receives its answer",
		Kinds: []auth.Kind{auth.KindAnonymous, auth.KindUser}, Browser: true, Refusal: http.StatusForbidden}
	consentAnswer       = Guard{Kinds: []auth.Kind{auth.KindUser}, Browser: true, Refusal: http.StatusForbidden}
	clientAuthenticated = Guard{Public: "the OAuth2 client's credentials in the form", Kinds: allKinds}
	delegatedToken      = Guard{Kinds: []auth.Kind{auth.KindUser, auth.KindOrganization}, Delegated: true}
	allKinds            = []auth.Kind{auth.KindAnonymous, auth.KindOrganization, auth.KindUser,
		auth.KindCustomerSession, auth.KindMemberSession}
)

// oauth2Routes are the OAuth 2.0 / OpenID Connect endpoints (contract §3.1). They are
// hand-written: their bodies are forms, their answers RFC 6749 JSON or redirects, not
// GraphQL-shaped. Each handler reads the request into the use case's typed request, makes
// that one call and writes its outcome; the protocol's rules are the use cases'. POST
// userinfo is upstream's hidden twin of GET.
func oauth2Routes(r *resolvers.Resolver) []Route {
	userinfo := oauth2UserInfo(r)
	return append(oauth2RegisterRoutes(r), []Route{
		{Method: http.MethodGet, Path: "/v1/oauth2/authorize", Handler: oauth2Authorize(r), Guard: consentRequest},
		{Method: http.MethodPost, Path: "/v1/oauth2/consent", Handler: oauth2Consent(r), Guard: consentAnswer},
		{Method: http.MethodPost, Path: "/v1/oauth2/token", Handler: oauth2Token(r), Guard: clientAuthenticated},
		{Method: http.MethodPost, Path: "/v1/oauth2/revoke", Handler: oauth2Revoke(r), Guard: clientAuthenticated},
		{Method: http.MethodPost, Path: "/v1/oauth2/introspect", Handler: oauth2Introspect(r), Guard: clientAuthenticated},
		{Method: http.MethodGet, Path: "/v1/oauth2/userinfo", Handler: userinfo, Guard: delegatedToken},
		{Method: http.MethodPost, Path: "/v1/oauth2/userinfo", Handler: userinfo, Guard: delegatedToken},
	}...)
}

// oauth2Token serves POST /v1/oauth2/token.
func oauth2Token(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		creds, form, malformed := clientForm(req)
		tok, fail := r.ExchangeOAuth2Token(req.Context(), resolvers.TokenRequest{Client: creds, Malformed: malformed,
			GrantType: form.Get("grant_type"), Code: form.Get("code"), RedirectURI: form.Get("redirect_uri"),
			CodeVerifier: form.Get("code_verifier"), RefreshToken: form.Get("refresh_token"), Scope: form.Get("scope")})
		if fail != nil {
			writeOAuth2Error(w, fail)
			return
		}
		writeOAuthJSON(w, http.StatusOK, tok)
	})
}

// oauth2Introspect serves POST /v1/oauth2/introspect (RFC 7662).
func oauth2Introspect(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info, fail := r.IntrospectOAuth2Token(req.Context(), tokenQuery(req))
		if fail != nil {
			writeOAuth2Error(w, fail)
			return
		}
		writeOAuthJSON(w, http.StatusOK, info)
	})
}

// oauth2Revoke serves POST /v1/oauth2/revoke (RFC 7009).
func oauth2Revoke(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if fail := r.RevokeOAuth2Token(req.Context(), tokenQuery(req)); fail != nil {
			writeOAuth2Error(w, fail)
			return
		}
		writeOAuthJSON(w, http.StatusOK, struct{}{})
	})
}

// oauth2UserInfo serves GET and POST /v1/oauth2/userinfo. The bearer middleware has already
// refused dead tokens; the use case refuses live tokens that are not OAuth2 access tokens.
func oauth2UserInfo(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		token, ok := auth.BearerToken(req.Header.Get("Authorization"))
		if !ok {
			auth.WriteUnauthorized(w)
			return
		}
		info, err := r.OAuth2UserInfo(req.Context(), token)
		var fail *resolvers.OAuth2Error
		switch {
		case errors.As(err, &fail):
			writeOAuth2Error(w, fail)
		case err != nil: // auth.ErrInvalidToken, the one other failure
			auth.WriteInvalidToken(w)
		default:
			writeOAuthJSON(w, http.StatusOK, info)
		}
	})
}

// clientForm parses the form body and reads the client credentials: HTTP Basic first, whose
// id and secret are form-urlencoded before base64 (RFC 6749 §2.3.1), else the form fields.
// The request's address comes along, for the throttle of failed authentications. A form or
// credentials holding text PostgreSQL cannot store (U+0000, bytes that are not UTF-8) is
// malformed, as an unparsable form is; nothing is read from it then.
func clientForm(req *http.Request) (creds resolvers.ClientCredentials, form url.Values, malformed bool) {
	if err := req.ParseForm(); err != nil || !storableValues(req.Form) {
		return resolvers.ClientCredentials{}, nil, true
	}
	form = req.PostForm
	creds = resolvers.ClientCredentials{ID: form.Get("client_id"), Secret: form.Get("client_secret")}
	scheme, value, _ := strings.Cut(req.Header.Get("Authorization"), " ")
	if strings.EqualFold(scheme, "basic") {
		creds = resolvers.ClientCredentials{Basic: true}
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(value))
		id, secret, found := strings.Cut(string(raw), ":")
		if err == nil && found {
			creds.ID, _ = url.QueryUnescape(id)
			creds.Secret, _ = url.QueryUnescape(secret)
		}
	}
	if !scalar.Storable(creds.ID) || !scalar.Storable(creds.Secret) {
		return resolvers.ClientCredentials{}, nil, true
	}
	creds.Addr = clientAddr(req)
	return creds, form, false
}

// tokenQuery reads the form of the introspection and revocation endpoints.
func tokenQuery(req *http.Request) resolvers.TokenQuery {
	creds, form, malformed := clientForm(req)
	return resolvers.TokenQuery{Client: creds, Token: form.Get("token"), TokenTypeHint: form.Get("token_type_hint"),
		Malformed: malformed}
}

// clientAddr is the address a request counts against: the one the client-address middleware
// named with the trusted proxies in mind, else the TCP peer.
func clientAddr(req *http.Request) string {
	if ip, ok := ratelimit.ClientIPFrom(req.Context()); ok {
		return ip
	}
	return ratelimit.ClientIP(nil)(req)
}

// storableValues reports whether every name and value of a form or query is text
// PostgreSQL can store.
func storableValues(values url.Values) bool {
	for k, vs := range values {
		if !scalar.Storable(k) {
			return false
		}
		for _, v := range vs {
			if !scalar.Storable(v) {
				return false
			}
		}
	}
	return true
}

// writeOAuth2Error writes {"error", "error_description"?} with the error's headers and
// authlib's no-store headers; the description is left out when empty, as authlib does (RFC
// 6749 §5.2 makes it optional).
func writeOAuth2Error(w http.ResponseWriter, e *resolvers.OAuth2Error) {
	for k, vs := range e.Header {
		w.Header()[k] = slices.Clone(vs)
	}
	body := struct {
		Error       string `json:"error"`
		Description string `json:"error_description,omitempty"`
	}{e.Code, e.Description}
	writeOAuthJSON(w, e.Status, body)
}

// writeOAuthJSON writes an OAuth answer; tokens must never be cached (RFC 6749 §5.1).
func writeOAuthJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
