package rest

import (
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"net/http"
)

// Till's own pages (sign-in, OAuth2 consent) are rendered on the server with html/template,
// which escapes every value for its context. Each page's only style sheet is inline and
// allowed by its hash, so a page loads nothing it does not name, runs no script and may not
// be framed by another site.

// styleSource is the Content-Security-Policy source that allows exactly the inline style
// sheet css.
func styleSource(css string) string {
	sum := sha256.Sum256([]byte(css))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// pagePolicy is a page's Content-Security-Policy: nothing by default, its style sheet, what
// extra adds (form-action, img-src), no frame around it and no base.
func pagePolicy(css, extra string) string {
	return "default-src 'none'; style-src " + styleSource(css) + "; " + extra + "; frame-ancestors 'none'; base-uri 'none'"
}

// writeHTMLPage renders t with data under policy. The referrer policy is same-origin, not
// no-referrer: a browser told to send no referrer also names the origin of the page's own
// form posts "null", which the origin check must refuse; with same-origin, Till's forms name
// their origin while other sites never see the page's address (a magic link's token, an
// authorization request's state).
func writeHTMLPage(w http.ResponseWriter, status int, policy string, t *template.Template, data any) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", policy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = t.Execute(w, data)
}
