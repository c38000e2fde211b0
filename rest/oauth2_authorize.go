package rest

import (
	"net/http"

	"till/resolvers"
)

// oauth2Authorize serves GET /v1/oauth2/authorize: the consent-screen data, a redirect back
// to the client, or an error shown to the user, as the use case decides.
func oauth2Authorize(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		out := r.OAuth2Authorize(req.Context(), resolvers.AuthorizeRequest{Malformed: !storableValues(q),
			ResponseType: q.Get("response_type"), ClientID: q.Get("client_id"), RedirectURI: q.Get("redirect_uri"),
			Scope: q.Get("scope"), State: q.Get("state"), Nonce: q.Get("nonce"), CodeChallenge: q.Get("code_challenge"),
			CodeChallengeMethod: q.Get("code_challenge_method"), Prompt: q.Get("prompt"), SubType: q.Get("sub_type")})
		switch {
		case out.NotPermitted:
			writeError(w, http.StatusForbidden, resolvers.CodeNotPermitted, "Not permitted")
		case out.LoginRequired:
			writeDetail(w, http.StatusUnauthorized, "Unauthorized")
		case out.Redirect != "":
			oauthRedirect(w, out.Redirect)
		case out.Error != nil:
			writeOAuth2Error(w, out.Error)
		default:
			writeOAuthJSON(w, http.StatusOK, out.Consent)
		}
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
