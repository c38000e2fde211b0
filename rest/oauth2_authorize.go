package rest

import (
	"maps"
	"net/http"
	"net/url"

	"till/resolvers"
)

// signInPath is the server-rendered sign-in page; it sends the browser back to its same-origin
// return_to once the user has signed in.
const signInPath = "/login"

// oauth2Authorize serves GET /v1/oauth2/authorize: the consent-screen data, a redirect back
// to the client, or an error shown to the user, as the use case decides. A browser asking
// for HTML gets the consent page instead of the data, or the sign-in page first.
func oauth2Authorize(r *resolvers.Resolver) http.Handler {
	return withBrowserSession(r, func(w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		out := r.OAuth2Authorize(req.Context(), authorizeRequest(q, !storableValues(q)))
		html := wantsHTML(req)
		w.Header().Add("Vary", "Accept")
		switch {
		case out.NotPermitted:
			writeError(w, http.StatusForbidden, resolvers.CodeNotPermitted, "Not permitted")
		case out.LoginRequired && html:
			signIn(w, q, true)
		case out.LoginRequired:
			writeDetail(w, http.StatusUnauthorized, "Unauthorized")
		case out.Redirect != "":
			oauthRedirect(w, out.Redirect)
		case out.Error != nil:
			writeShownOAuth2Error(w, out.Error, html)
		case html && out.Form == nil:
			signIn(w, q, false)
		case html:
			writeConsentPage(w, out.Consent, out.Form)
		default:
			writeOAuthJSON(w, http.StatusOK, out.Consent)
		}
	})
}

// authorizeRequest reads an authorization request's parameters.
func authorizeRequest(q url.Values, malformed bool) resolvers.AuthorizeRequest {
	return resolvers.AuthorizeRequest{Malformed: malformed,
		ResponseType: q.Get("response_type"), ClientID: q.Get("client_id"), RedirectURI: q.Get("redirect_uri"),
		Scope: q.Get("scope"), State: q.Get("state"), Nonce: q.Get("nonce"), CodeChallenge: q.Get("code_challenge"),
		CodeChallengeMethod: q.Get("code_challenge_method"), Prompt: q.Get("prompt"), SubType: q.Get("sub_type")}
}

// signIn sends the browser to the sign-in page, which brings it back to this authorization
// request, a path on this origin. For prompt=login (again) the page is told to ask for the
// user's credentials even over a live session, and the request comes back as prompt=consent,
// as upstream's dashboard does: the user is asked once, then sees the consent page rather
// than being sent to sign in again and again.
func signIn(w http.ResponseWriter, q url.Values, again bool) {
	target := url.Values{}
	if again {
		q = maps.Clone(q)
		q.Set("prompt", "consent")
		target.Set("prompt", "login")
	}
	target.Set("return_to", "/v1/oauth2/authorize?"+q.Encode())
	h := w.Header()
	h.Set("Location", signInPath+"?"+target.Encode())
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusFound)
}

// writeShownOAuth2Error shows an OAuth error to the user: a page to a browser, RFC 6749 JSON
// to an API client.
func writeShownOAuth2Error(w http.ResponseWriter, e *resolvers.OAuth2Error, html bool) {
	if html {
		writeErrorPage(w, e.Status, e.Code, e.Description)
		return
	}
	writeOAuth2Error(w, e)
}

// oauthRedirect sends the browser back to the client as authlib does: 302, Location, no body.
func oauthRedirect(w http.ResponseWriter, location string) {
	h := w.Header()
	h.Set("Location", location)
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	w.WriteHeader(http.StatusFound)
}
