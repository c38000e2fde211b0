package resolvers

import (
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"path"
	"regexp"
)

// TestPaymentPath is where TestPaymentHandler is mounted, followed by a client secret.
const TestPaymentPath = "/test-payments/3ds/"

// clientSecretShape is what a client secret can look like (pi_…_secret_…); anything else
// is no payment's, and is answered without a lookup.
var clientSecretShape = regexp.MustCompile(`^pi_[A-Za-z0-9_]{1,200}$`)

// testPaymentPage is the test processor's 3-D Secure page: no external assets, two buttons.
var testPaymentPage = template.Must(template.New("3ds").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>3-D Secure test payment</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 32rem; margin: 3rem auto">
<h1>3-D Secure test payment</h1>
<p>This page stands in for the card issuer: the test processor asks the card holder to
authenticate this payment. Choose how the holder answers.</p>
<form method="post"><input type="hidden" name="outcome" value="complete">
<button type="submit">Complete authentication</button></form>
<form method="post"><input type="hidden" name="outcome" value="fail">
<button type="submit">Fail authentication</button></form>
</body></html>`))

// TestPaymentHandler serves the test processor's 3-D Secure page at
// TestPaymentPath{client_secret}, as the processor's test mode hosts one: GET shows it, and
// POST with outcome=complete or outcome=fail answers for the holder, responding with the
// intent's status as JSON ({"status": "succeeded"} or "requires_payment_method"). The client
// secret is the credential, as on the processor's page. Under another processor, and for a
// secret no payment waits under, it is 404.
func (r *Resolver) TestPaymentHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		secret := path.Base(req.URL.Path)
		if _, ok := r.payments.(testAuthenticator); !ok || !clientSecretShape.MatchString(secret) {
			http.NotFound(w, req)
			return
		}
		switch req.Method {
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Security-Policy", "default-src 'none'; form-action 'self'")
			_ = testPaymentPage.Execute(w, nil)
			return
		case http.MethodPost:
		default:
			w.Header().Set("Allow", "GET, POST")
			http.Error(w, "Method not allowed.", http.StatusMethodNotAllowed)
			return
		}
		req.Body = http.MaxBytesReader(w, req.Body, 1<<10)
		outcome := req.PostFormValue("outcome")
		if outcome != "complete" && outcome != "fail" {
			http.Error(w, "outcome must be complete or fail.", http.StatusBadRequest)
			return
		}
		out, err := r.AuthenticateTestPayment(req.Context(), secret, outcome == "complete")
		var e *Error
		switch {
		case errors.As(err, &e):
			http.Error(w, e.Detail, e.Status())
			return
		case err != nil:
			r.logger.ErrorContext(req.Context(), "test payment authentication failed", "error", err)
			http.Error(w, "Internal server error.", http.StatusInternalServerError)
			return
		}
		status := "succeeded"
		if !out.Succeeded {
			status = "requires_payment_method"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"status": status})
	})
}
