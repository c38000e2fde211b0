package rest

import (
	"errors"
	"html/template"
	"net/http"
	"strconv"

	"till/internal/oidclogin"
	"till/internal/ratelimit"
	"till/resolvers"
)

// signInStyle is the pages' only style sheet, allowed by its hash: the pages load nothing,
// run no script and post only to Till.
const signInStyle = `body{font-family:system-ui,sans-serif;max-width:26rem;margin:4rem auto;padding:0 1rem;color:#1d1d1f}
label,input,button{display:block;width:100%;box-sizing:border-box;font-size:1rem}
input{padding:.5rem;margin:.25rem 0 1rem}button{padding:.6rem;cursor:pointer}
.error{color:#b00020}.muted{color:#666;font-size:.9rem}`

// signInCSP forbids everything the pages do not do: no script, no frame around them, no
// base, forms only to Till, and the one style sheet above.
var signInCSP = pagePolicy(signInStyle, "form-action 'self'")

// signInPage is every state of the sign-in page: the email form, the code form, the magic
// link's button, and who is signed in.
var signInPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="same-origin">
<style>` + signInStyle + `</style></head>
<body><h1>{{.Title}}</h1>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
{{if eq .Step "email"}}
<form method="post" action="/login">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="email" required autofocus value="{{.Email}}">
<input type="hidden" name="return_to" value="{{.ReturnTo}}"><button type="submit">Send me a code</button></form>
<p class="muted">Till mails you a code and a link. No account yet? Signing in creates it.</p>
{{range .Providers}}<p><a href="/auth/oidc/{{.Name}}?return_to={{$.ReturnTo}}">Sign in with {{.DisplayName}}</a></p>{{end}}
{{else if eq .Step "code"}}
<p>A code and a link are on their way to <strong>{{.Email}}</strong>. Type the code here, or open the link.</p>
<form method="post" action="/login/code">
<label for="code">Code</label><input id="code" name="code" autocomplete="one-time-code" required autofocus spellcheck="false">
<input type="hidden" name="email" value="{{.Email}}"><input type="hidden" name="return_to" value="{{.ReturnTo}}">
<button type="submit">Sign in</button></form>
<p class="muted"><a href="/login?return_to={{.ReturnTo}}">Use another email</a></p>
{{else if eq .Step "link"}}
<p>Press the button to finish signing in.</p>
<form method="post" action="/login/link"><input type="hidden" name="token" value="{{.Token}}">
<button type="submit">Sign in</button></form>
{{else if eq .Step "signed-in"}}
<p>You are signed in as <strong>{{.Email}}</strong>.</p>
{{if ne .ReturnTo "/login"}}<p><a href="{{.ReturnTo}}">Continue</a></p>{{end}}
<form method="post" action="/logout"><input type="hidden" name="csrf_token" value="{{.CSRFToken}}">
<button type="submit">Sign out</button></form>
{{end}}
</body></html>`))

// pageState is what one rendering of the sign-in page shows.
type pageState struct {
	Title, Step, Error     string
	Email, ReturnTo, Token string
	CSRFToken              string
	// Providers are the identity providers offered beside the email form.
	Providers  []oidclogin.ProviderConfig
	status     int
	retryAfter string
}

// writePage renders the sign-in page with the headers every state carries (writeHTMLPage).
func writePage(w http.ResponseWriter, s pageState) {
	if s.retryAfter != "" {
		w.Header().Set("Retry-After", s.retryAfter)
	}
	if s.Title == "" {
		s.Title = "Sign in to Till"
	}
	if s.status == 0 {
		s.status = http.StatusOK
	}
	writeHTMLPage(w, s.status, signInCSP, signInPage, s)
}

// loginPage serves GET /login: who is signed in, or the email form. return_to, a path of
// Till's own origin, is where signing in leads. prompt=login asks for the email form even
// over a live session: the OAuth2 authorization endpoint sends it for OpenID Connect's
// prompt=login, which wants the user to prove who they are again.
func loginPage(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		returnTo := resolvers.SafeReturnTo(req.URL.Query().Get("return_to"))
		if req.URL.Query().Get("prompt") == "login" {
			writePage(w, pageState{Step: "email", ReturnTo: returnTo})
			return
		}
		p, ok, err := r.BrowserSession(req)
		if err != nil {
			pageError(w, req, r, pageState{Step: "email", ReturnTo: returnTo}, err)
			return
		}
		if !ok {
			writePage(w, pageState{Step: "email", ReturnTo: returnTo, Providers: r.OIDCProviders()})
			return
		}
		email, err := r.UserEmail(req.Context(), p.UserID)
		if err != nil {
			pageError(w, req, r, pageState{Step: "email", ReturnTo: returnTo}, err)
			return
		}
		writePage(w, pageState{Title: "Signed in", Step: "signed-in", Email: email, ReturnTo: returnTo,
			CSRFToken: r.CSRFToken(p)})
	})
}

// loginEmailForm serves POST /login: mails a code to the email and shows the code form.
func loginEmailForm(r *resolvers.Resolver) http.Handler {
	return pageForm(r, func(w http.ResponseWriter, req *http.Request) {
		email, returnTo := req.PostForm.Get("email"), resolvers.SafeReturnTo(req.PostForm.Get("return_to"))
		if err := r.RequestSignInCode(req.Context(), email, returnTo); err != nil {
			pageError(w, req, r, pageState{Step: "email", Email: email, ReturnTo: returnTo}, err)
			return
		}
		writePage(w, pageState{Title: "Check your mail", Step: "code", Email: email, ReturnTo: returnTo})
	})
}

// loginCodeForm serves POST /login/code: signs in with the code and goes to return_to.
func loginCodeForm(r *resolvers.Resolver) http.Handler {
	return pageForm(r, func(w http.ResponseWriter, req *http.Request) {
		email, returnTo := req.PostForm.Get("email"), resolvers.SafeReturnTo(req.PostForm.Get("return_to"))
		out, err := r.SignInWithCode(req.Context(), email, req.PostForm.Get("code"), clientOf(req))
		if err != nil {
			pageError(w, req, r, pageState{Title: "Check your mail", Step: "code", Email: email, ReturnTo: returnTo}, err)
			return
		}
		signedIn(w, req, r, out, returnTo)
	})
}

// loginLinkPage serves GET /login/link?token=: only a button that posts the token, so that
// mail scanners that fetch every link in a mail do not use it up.
func loginLinkPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		writePage(w, pageState{Step: "link", Token: req.URL.Query().Get("token")})
	})
}

// loginLinkForm serves POST /login/link: signs in with the link's token and goes where
// the code's request said.
func loginLinkForm(r *resolvers.Resolver) http.Handler {
	return pageForm(r, func(w http.ResponseWriter, req *http.Request) {
		out, err := r.SignInWithLink(req.Context(), req.PostForm.Get("token"), clientOf(req))
		if err != nil {
			pageError(w, req, r, pageState{Step: "email", ReturnTo: resolvers.DefaultReturnTo}, err)
			return
		}
		signedIn(w, req, r, out, out.ReturnTo)
	})
}

// signOutForm serves POST /logout from the signed-in page, whose form carries the CSRF
// token, and leads back to the sign-in page.
func signOutForm(r *resolvers.Resolver) http.Handler {
	return pageForm(r, func(w http.ResponseWriter, req *http.Request) {
		if err := r.SignOutBrowser(req, req.PostForm.Get("csrf_token")); err != nil {
			pageError(w, req, r, pageState{Step: "email", ReturnTo: resolvers.DefaultReturnTo}, err)
			return
		}
		r.Browser().ClearSession(w, req)
		http.Redirect(w, req, resolvers.DefaultReturnTo, http.StatusSeeOther)
	})
}

// signedIn sets the new session's cookie and sends the browser on to returnTo.
func signedIn(w http.ResponseWriter, req *http.Request, r *resolvers.Resolver, out *resolvers.SignedIn, returnTo string) {
	r.Browser().SetSession(w, req, out.Token, out.Session.ExpiresAt)
	http.Redirect(w, req, resolvers.SafeReturnTo(returnTo), http.StatusSeeOther)
}

// pageForm reads a sign-in form posted from a page Till trusts (a page of another site
// that posts the form is refused, so nobody is signed in to an account of someone else's
// choosing) and runs serve with it.
func pageForm(r *resolvers.Resolver, serve http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !r.Browser().TrustedOrigin(req) {
			writePage(w, pageState{Step: "email", ReturnTo: resolvers.DefaultReturnTo, status: http.StatusForbidden,
				Error: "This form was sent from another site; sign in from this page instead."})
			return
		}
		req.Body = http.MaxBytesReader(w, req.Body, signInBodyLimit)
		if err := req.ParseForm(); err != nil {
			writePage(w, pageState{Step: "email", ReturnTo: resolvers.DefaultReturnTo, status: http.StatusBadRequest,
				Error: "The form could not be read."})
			return
		}
		serve(w, req)
	})
}

// pageError shows s again with the use case's refusal; a server fault is logged and shown
// as one.
func pageError(w http.ResponseWriter, req *http.Request, r *resolvers.Resolver, s pageState, err error) {
	var te *resolvers.Error
	if !errors.As(err, &te) {
		r.Logger().ErrorContext(req.Context(), "sign-in page failed", "error", err)
		s.status, s.Error = http.StatusInternalServerError, "Something went wrong on our side. Try again in a moment."
		writePage(w, s)
		return
	}
	s.status, s.Error = te.Status(), te.Error()
	if te.Code == resolvers.CodeRateLimited {
		s.retryAfter = strconv.Itoa(ratelimit.RetryAfterSeconds(te.RetryAfter))
	}
	writePage(w, s)
}
