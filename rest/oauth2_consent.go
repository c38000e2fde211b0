package rest

import (
	"encoding/json"
	"net/http"
	"net/url"

	"till/internal/auth"
	"till/resolvers"
)

// consentFormLimit bounds the consent form's body: the request's parameters, the answer and
// the token fit in far less, and nothing larger is read.
const consentFormLimit = 64 << 10

// oauth2Consent serves POST /v1/oauth2/consent, where the consent page posts the user's
// answer: upstream's form of action=allow|deny, organizations and the authorization
// request's parameters, which may also come in the query string as upstream's dashboard
// sends them (the query wins, as authlib reads it first). The answer is a redirect to the
// client, or the refusal shown to the user as a page or as JSON.
func oauth2Consent(r *resolvers.Resolver) http.Handler {
	return withBrowserSession(r, func(w http.ResponseWriter, req *http.Request) {
		req.Body = http.MaxBytesReader(w, req.Body, consentFormLimit)
		params, malformed := consentParams(req)
		out := r.SubmitOAuth2Consent(req.Context(), resolvers.ConsentSubmission{
			Request: authorizeRequest(params, malformed), Action: params.Get("action"),
			Organizations: params["organizations"], Token: params.Get(resolvers.ConsentTokenField), Malformed: malformed,
			CrossSite: !r.Browser().TrustedOrigin(req)})
		html := wantsHTML(req)
		switch {
		case out.Redirect != "":
			oauthRedirect(w, out.Redirect)
		case out.OAuth2Error != nil:
			writeShownOAuth2Error(w, out.OAuth2Error, html)
		case out.Error.Code == resolvers.CodeUnauthorized && !html:
			auth.WriteUnauthorized(w)
		case html:
			writeErrorPage(w, out.Error.Status(), out.Error.Code, out.Error.Error())
		case len(out.Error.Errors) > 0:
			body, _ := json.Marshal(struct {
				Error  string                 `json:"error"`
				Detail []resolvers.FieldError `json:"detail"`
			}{out.Error.Code, out.Error.Errors})
			writeJSON(w, out.Error.Status(), body)
		default:
			writeError(w, out.Error.Status(), out.Error.Code, out.Error.Error())
		}
	})
}

// consentParams merges the query string and the form, the query first; malformed says the
// body could not be read (too large, badly encoded) or holds text PostgreSQL cannot store.
func consentParams(req *http.Request) (url.Values, bool) {
	if err := req.ParseForm(); err != nil {
		return url.Values{}, true
	}
	params := req.URL.Query()
	for k, vs := range req.PostForm {
		params[k] = append(params[k], vs...)
	}
	if !storableValues(params) {
		return url.Values{}, true
	}
	return params, false
}

// withBrowserSession serves a request that brings no bearer token as the user of its browser
// session cookie, if any. The rest of /v1 reads no cookie, as upstream's public API; the
// consent page and its form are the user acting in person, in the browser they signed in
// with. The form's own token and origin check guard what the cookie would otherwise let
// another site's page post (SubmitOAuth2Consent).
func withBrowserSession(r *resolvers.Resolver, serve http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if _, bearer := auth.BearerToken(req.Header.Get("Authorization")); !bearer {
			p, ok, err := r.BrowserSession(req)
			if err != nil {
				r.Logger().ErrorContext(req.Context(), "oauth2: resolving a browser session failed", "error", err)
				writeShownOAuth2Error(w, &resolvers.OAuth2Error{Code: "server_error", Status: http.StatusInternalServerError},
					wantsHTML(req))
				return
			}
			if ok {
				req = req.WithContext(resolvers.ActingAs(req.Context(), p))
			}
		}
		serve(w, req)
	})
}
