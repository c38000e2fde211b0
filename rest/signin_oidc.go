package rest

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"till/internal/oidclogin"
	"till/resolvers"
)

// oidcFlowCookie carries the sealed state of a sign-in while the browser is at the identity
// provider. Lax, so that the provider's redirect back (a top-level GET from its site)
// carries it; only the callback's path receives it.
const (
	oidcFlowCookie = "till_oidc_flow"
	oidcFlowPath   = "/auth/oidc/"
)

// oidcStart serves GET /auth/oidc/{provider}?return_to=: it sends the browser to the
// provider, keeping the flow in a cookie. A GET, since the sign-in page links to it and it
// changes nothing at Till: the callback only signs in the browser that started the flow.
func oidcStart(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		returnTo := resolvers.SafeReturnTo(req.URL.Query().Get("return_to"))
		authURL, flow, err := r.StartOIDCSignIn(req.Context(), chi.URLParam(req, "provider"), returnTo)
		if err != nil {
			pageError(w, req, r, pageState{Step: "email", ReturnTo: returnTo, Providers: r.OIDCProviders()}, err)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: oidcFlowCookie, Value: flow, Path: oidcFlowPath,
			MaxAge: int(oidclogin.FlowTTL.Seconds()), HttpOnly: true, Secure: r.Browser().Secure(req),
			SameSite: http.SameSiteLaxMode})
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, req, authURL, http.StatusFound)
	})
}

// oidcCallback serves GET /auth/oidc/{provider}/callback: the provider's answer signs in
// the browser whose flow cookie it matches, which then goes where the flow said.
func oidcCallback(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: oidcFlowCookie, Path: oidcFlowPath, MaxAge: -1, HttpOnly: true,
			Secure: r.Browser().Secure(req), SameSite: http.SameSiteLaxMode})
		w.Header().Set("Cache-Control", "no-store")
		failed := pageState{Step: "email", ReturnTo: resolvers.DefaultReturnTo, Providers: r.OIDCProviders()}
		cookie, err := req.Cookie(oidcFlowCookie)
		q := req.URL.Query()
		if err != nil || q.Get("error") != "" {
			pageError(w, req, r, failed, resolvers.BadRequest(oidclogin.ErrFlow.Error()))
			return
		}
		out, err := r.FinishOIDCSignIn(req.Context(), chi.URLParam(req, "provider"), cookie.Value,
			q.Get("state"), q.Get("code"), clientOf(req))
		if err != nil {
			pageError(w, req, r, failed, err)
			return
		}
		signedIn(w, req, r, out, out.ReturnTo)
	})
}
