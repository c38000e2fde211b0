package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"till/internal/auth"
	"till/internal/ratelimit"
	"till/resolvers"
	"till/rest/fastapi"
)

// Signing in to Till in a browser: JSON endpoints for a dashboard under /auth, and the
// server-rendered sign-in page under /login for everyone else (the OAuth2 consent page sends
// people who are not signed in there). Upstream's public API has no sign-in, so none of
// this is under /v1, and none of it reads a bearer token: what authenticates a caller is
// the email and the code or link mailed to it, or the session cookie and its CSRF token.
var (
	signInGuard = Guard{Public: "an email address, then the code or link mailed to it; rate-limited per email and per address",
		Kinds: allKinds}
	oidcGuard = Guard{Public: "an identity provider's answer, bound to the flow this browser started by a sealed cookie; the provider's own sign-in limits apply",
		Kinds: allKinds}
	sessionGuard = Guard{Public: "the browser session cookie and, to change anything, its CSRF token", Kinds: allKinds}
)

// signInBodyLimit bounds what a sign-in request may send: an email, a code, a return path.
const signInBodyLimit = 16 << 10

// signInRoutes are the sign-in endpoints; the security suite enumerates them with the
// rest of the table.
func signInRoutes(r *resolvers.Resolver) []Route {
	provider := []fastapi.Param{PathString("provider", "provider")}
	return []Route{
		{Method: http.MethodPost, Path: "/auth/login-code/request", Handler: requestCodeJSON(r), Guard: signInGuard},
		{Method: http.MethodPost, Path: "/auth/login-code/authenticate", Handler: authenticateJSON(r), Guard: signInGuard},
		{Method: http.MethodPost, Path: "/auth/logout", Handler: signOutJSON(r), Guard: sessionGuard},
		{Method: http.MethodGet, Path: "/login", Handler: loginPage(r), Guard: sessionGuard},
		{Method: http.MethodPost, Path: "/login", Handler: loginEmailForm(r), Guard: signInGuard},
		{Method: http.MethodPost, Path: "/login/code", Handler: loginCodeForm(r), Guard: signInGuard},
		{Method: http.MethodGet, Path: "/login/link", Handler: loginLinkPage(), Guard: signInGuard},
		{Method: http.MethodPost, Path: "/login/link", Handler: loginLinkForm(r), Guard: signInGuard},
		{Method: http.MethodPost, Path: "/logout", Handler: signOutForm(r), Guard: sessionGuard},
		{Method: http.MethodGet, Path: "/auth/oidc/{provider}", Params: provider, Handler: oidcStart(r), Guard: oidcGuard},
		{Method: http.MethodGet, Path: "/auth/oidc/{provider}/callback", Params: provider, Handler: oidcCallback(r), Guard: oidcGuard},
	}
}

// signInRequest is the body of the JSON endpoints.
type signInRequest struct {
	Email    string `json:"email"`
	Code     string `json:"code"`
	ReturnTo string `json:"return_to"`
}

// signedInBody is what a JSON sign-in answers beside the cookie it sets.
type signedInBody struct {
	User struct {
		ID    string `json:"id"`
		Email string `json:"email"`
	} `json:"user"`
	CSRFToken string    `json:"csrf_token"`
	ExpiresAt time.Time `json:"expires_at"`
}

// requestCodeJSON serves POST /auth/login-code/request: {"email", "return_to"} mails a code
// and a link, answering 202 whether or not the email belongs to a user.
func requestCodeJSON(r *resolvers.Resolver) http.Handler {
	return jsonSignIn(r, func(w http.ResponseWriter, req *http.Request, in signInRequest) error {
		if err := r.RequestSignInCode(req.Context(), in.Email, in.ReturnTo); err != nil {
			return err
		}
		writeSignInJSON(w, http.StatusAccepted, map[string]string{"detail": fmt.Sprintf(
			"A sign-in code and link were mailed to the address; they work once, for %d minutes.",
			int(resolvers.SignInCodeLifetime/time.Minute))})
		return nil
	})
}

// authenticateJSON serves POST /auth/login-code/authenticate: {"email", "code"} signs in,
// setting the session cookie and answering the user and the session's CSRF token.
func authenticateJSON(r *resolvers.Resolver) http.Handler {
	return jsonSignIn(r, func(w http.ResponseWriter, req *http.Request, in signInRequest) error {
		out, err := r.SignInWithCode(req.Context(), in.Email, in.Code, clientOf(req))
		if err != nil {
			return err
		}
		r.Browser().SetSession(w, req, out.Token, out.Session.ExpiresAt)
		var body signedInBody
		body.User.ID, body.User.Email = out.User.ID.String(), out.User.Email
		body.CSRFToken, body.ExpiresAt = out.CSRFToken, out.Session.ExpiresAt.UTC()
		writeSignInJSON(w, http.StatusOK, body)
		return nil
	})
}

// signOutJSON serves POST /auth/logout: with the session's CSRF token in X-CSRF-Token, the
// session ends and its cookie is dropped; 204 also when there was none to end.
func signOutJSON(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if err := r.SignOutBrowser(req, req.Header.Get(auth.CSRFHeader)); err != nil {
			writeSignInError(w, req, r, err)
			return
		}
		r.Browser().ClearSession(w, req)
		w.WriteHeader(http.StatusNoContent)
	})
}

// jsonSignIn reads a JSON sign-in body (application/json only, so that another site's page
// cannot post one without a CORS preflight it would fail) from a trusted origin, and runs
// serve with it; serve's error is answered as JSON.
func jsonSignIn(r *resolvers.Resolver, serve func(http.ResponseWriter, *http.Request, signInRequest) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if media, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type")); media != "application/json" {
			writeError(w, http.StatusUnsupportedMediaType, "UnsupportedMediaType", "The body must be application/json.")
			return
		}
		if !r.Browser().TrustedOrigin(req) {
			writeError(w, http.StatusForbidden, resolvers.CodeNotPermitted, "Sign-in requests come from Till's own pages.")
			return
		}
		var in signInRequest
		raw, err := io.ReadAll(http.MaxBytesReader(w, req.Body, signInBodyLimit))
		if err != nil || json.Unmarshal(raw, &in) != nil {
			writeError(w, http.StatusBadRequest, resolvers.CodeBadRequest, "The body must be a JSON object of strings.")
			return
		}
		if err := serve(w, req, in); err != nil {
			writeSignInError(w, req, r, err)
		}
	})
}

// signInErrorBody is a refused sign-in: the error's name and message and, for a refused
// code, why (wrong_code, expired, used, too_many_attempts, no_code); cause is null for
// other refusals, present always like every field Till answers.
type signInErrorBody struct {
	Error  string  `json:"error"`
	Detail string  `json:"detail"`
	Cause  *string `json:"cause"`
}

// writeSignInError answers a use case's error as JSON: its status, name and message (a
// validation failure's first message), 429 with Retry-After over a rate limit.
func writeSignInError(w http.ResponseWriter, req *http.Request, r *resolvers.Resolver, err error) {
	var te *resolvers.Error
	if !errors.As(err, &te) {
		r.Logger().ErrorContext(req.Context(), "sign-in failed", "error", err)
		writeInternal(w)
		return
	}
	if te.Code == resolvers.CodeRateLimited {
		ratelimit.WriteTooManyRequests(w, te.RetryAfter)
		return
	}
	writeSignInJSON(w, te.Status(), signInErrorBody{Error: te.Code, Detail: te.Error(), Cause: optionalCause(te.Cause)})
}

// writeSignInJSON writes body as JSON; these answers are never cached.
func writeSignInJSON(w http.ResponseWriter, status int, body any) {
	b, err := json.Marshal(body)
	if err != nil {
		writeInternal(w)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, b)
}

// clientOf is the browser signing in, as its session will describe it.
func clientOf(req *http.Request) resolvers.SignInClient {
	return resolvers.SignInClient{UserAgent: req.UserAgent()}
}

// optionalCause is a refusal's cause, or nil for none.
func optionalCause(c string) *string {
	if c == "" {
		return nil
	}
	return &c
}
