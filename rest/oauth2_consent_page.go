package rest

import (
	"html/template"
	"mime"
	"net/http"
	"strings"

	"till/resolvers"
)

// consentPageStyle is the consent and error pages' only style sheet (pages.go).
const consentPageStyle = `body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#111}
img.logo{display:block;margin:0 auto 1rem;border-radius:.5rem}h1{font-size:1.4rem;text-align:center}
ul{padding-left:1.2rem}fieldset{border:1px solid #ddd;border-radius:.5rem;margin:1rem 0}label{display:block;margin:.3rem 0}
.actions{display:flex;gap:.5rem}.actions button{flex:1;padding:.6rem;font-size:1rem}.muted{color:#555;font-size:.9rem}`

// consentPage is the server-rendered consent page. html/template escapes every value for its
// context, and refuses links that are not http(s), so nothing the client registered can run
// in the page.
var consentPage = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Authorize {{.Name}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="same-origin">
<style>` + consentPageStyle + `</style></head>
<body><main>
{{if .Form.LogoURI}}<img class="logo" src="{{.Form.LogoURI}}" alt="" width="64" height="64">{{end}}
<h1><span id="client-name">{{.Name}}</span> asks to access your Till account</h1>
<p class="muted">Signed in as <strong id="signed-in-as">{{.Form.Email}}</strong>.
{{with .Consent.Client.ClientURI}} The application's home page is <a href="{{.}}" rel="noopener noreferrer">{{.}}</a>.{{end}}</p>
<form method="post" action="/v1/oauth2/consent">
<p>It will be able to:</p>
<ul id="scopes">{{range .Scopes}}<li data-scope="{{.Scope}}">{{.Name}}</li>{{end}}</ul>
{{if .ForOrganization}}<fieldset><legend>It will act as the organization</legend>
{{range $i, $o := .Consent.Organizations}}<label><input type="radio" name="organizations" value="{{$o.ID}}" required{{if eq $i 0}} checked{{end}}> {{$o.Slug}}</label>
{{else}}<p>You own or administer no organization it could act as.</p>{{end}}</fieldset>
{{else if .Consent.Organizations}}<fieldset><legend>Organizations it may reach</legend>
<label><input type="radio" name="organizations" value="" checked> All of my organizations</label>
{{range .Consent.Organizations}}<label><input type="radio" name="organizations" value="{{.ID}}"> Only {{.Slug}}</label>
{{end}}</fieldset>{{end}}
{{range .Form.Fields}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{end}}<input type="hidden" name="` + resolvers.ConsentTokenField + `" value="{{.Form.Token}}">
<div class="actions"><button type="submit" id="allow" name="action" value="allow"{{if .CannotAllow}} disabled{{end}}>Allow</button>
<button type="submit" id="deny" name="action" value="deny" formnovalidate>Deny</button></div>
</form>
{{if or .Consent.Client.TosURI .Consent.Client.PolicyURI}}<p class="muted">Before using this application, you can review
{{.Name}}'s {{with .Consent.Client.TosURI}}<a href="{{.}}" rel="noopener noreferrer">terms of service</a>{{end}}
{{if and .Consent.Client.TosURI .Consent.Client.PolicyURI}}and{{end}}
{{with .Consent.Client.PolicyURI}}<a href="{{.}}" rel="noopener noreferrer">privacy policy</a>{{end}}.</p>{{end}}
</main></body></html>`))

// errorPage tells the user in a browser why an authorization cannot go on.
var errorPage = template.Must(template.New("error").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Authorization failed</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="same-origin">
<style>` + consentPageStyle + `</style></head>
<body><main><h1>The application's request cannot go on</h1>
<p id="error"><code>{{.Code}}</code>{{with .Description}}: {{.}}{{end}}</p>
<p class="muted">Go back to the application and try again, or tell its makers.</p>
</main></body></html>`))

// consentPageData is what consentPage renders.
type consentPageData struct {
	Consent *resolvers.AuthorizeResponse
	Form    *resolvers.ConsentForm
	// Name is the client's name, or its id when it has none.
	Name            string
	Scopes          []scopeLine
	ForOrganization bool
	// CannotAllow disables Allow for an organization subject with no organization to choose.
	CannotAllow bool
}

type scopeLine struct{ Scope, Name string }

// writeConsentPage renders the consent page of a signed-in user.
func writeConsentPage(w http.ResponseWriter, c *resolvers.AuthorizeResponse, f *resolvers.ConsentForm) {
	d := consentPageData{Consent: c, Form: f, Name: c.Client.ClientID, ForOrganization: c.SubType == "organization"}
	if c.Client.ClientName != nil && *c.Client.ClientName != "" {
		d.Name = *c.Client.ClientName
	}
	for _, s := range c.Scopes {
		d.Scopes = append(d.Scopes, scopeLine{Scope: string(s), Name: c.ScopeDisplayNames[s]})
	}
	d.CannotAllow = d.ForOrganization && len(c.Organizations) == 0
	formAction := "'self'"
	if f.RedirectOrigin != "" {
		formAction += " " + f.RedirectOrigin
	}
	writeHTMLPage(w, http.StatusOK, pagePolicy(consentPageStyle, "img-src 'self'; form-action "+formAction), consentPage, d)
}

// writeErrorPage shows an OAuth error to the user in a browser.
func writeErrorPage(w http.ResponseWriter, status int, code, description string) {
	writeHTMLPage(w, status, pagePolicy(consentPageStyle, "form-action 'none'"), errorPage,
		struct{ Code, Description string }{code, description})
}

// wantsHTML reports whether the request prefers a page to JSON: a browser navigating to the
// endpoint names text/html in Accept; API clients send */* or application/json.
func wantsHTML(req *http.Request) bool {
	for _, part := range strings.Split(req.Header.Get("Accept"), ",") {
		typ, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err == nil && (typ == "text/html" || typ == "application/xhtml+xml") && params["q"] != "0" {
			return true
		}
	}
	return false
}
