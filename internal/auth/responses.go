package auth

import (
	"net/http"
	"strconv"
	"strings"
)

// Realm is the WWW-Authenticate realm; upstream's is "polar".
const Realm = "till"

// Error texts of the bearer-token errors, verbatim from upstream (authlib's
// RFC 6750 errors as Polar raises them).
const (
	invalidTokenDescription      = "The access token provided is expired, revoked, malformed, or invalid for other reasons."
	insufficientScopeDescription = "The request requires higher privileges than provided by the access token."
)

// InvalidTokenDescription is the message of a refused token, for protocols that answer it
// in their own shape (GraphQL's errors array).
const InvalidTokenDescription = invalidTokenDescription

// InvalidTokenChallenge is the WWW-Authenticate header sent with a refused token, whatever
// the body.
const InvalidTokenChallenge = `Bearer realm="` + Realm + `", error="invalid_token", error_description="` + invalidTokenDescription + `"`

// Response bodies, kept as bytes so key order and spacing cannot drift from
// the contract (`error` first, then `error_description` or `detail`).
const (
	invalidTokenBody      = `{"error":"invalid_token","error_description":"` + invalidTokenDescription + `"}`
	insufficientScopeBody = `{"error":"insufficient_scope","error_description":"` + insufficientScopeDescription + `"}`
	unauthorizedBody      = `{"error":"Unauthorized","detail":"Unauthorized"}`
	internalErrorBody     = `{"error":"InternalServerError","detail":"Internal Server Error"}`
	csrfRefusedBody       = `{"error":"CSRFVerificationFailed","detail":"` + CSRFRefusal + `"}`
)

// WriteInvalidToken writes upstream's 401 invalid_token response (contract
// §1.6 step 2): the middleware sends it for unknown, malformed, expired or
// revoked tokens on every route, and OAuth2 endpoints reuse it.
func WriteInvalidToken(w http.ResponseWriter) {
	writeOAuthError(w, http.StatusUnauthorized, InvalidTokenChallenge, invalidTokenBody)
}

// WriteInsufficientScope writes upstream's 403 insufficient_scope response
// (contract §1.6 step 5) for a token that holds none of the route's scopes.
// required is listed space-separated in the header's scope attribute, in the
// order given.
func WriteInsufficientScope(w http.ResponseWriter, required []Scope) {
	names := make([]string, len(required))
	for i, s := range required {
		names[i] = string(s)
	}
	writeOAuthError(w, http.StatusForbidden,
		`Bearer realm="`+Realm+`", scope="`+strings.Join(names, " ")+
			`", error="insufficient_scope", error_description="`+insufficientScopeDescription+`"`,
		insufficientScopeBody)
}

// WriteUnauthorized writes upstream's 401 Unauthorized domain error (contract
// §1.5, §1.6 step 4), for an anonymous principal on an authenticated route.
// Like upstream it sets no Cache-Control; the global cache middleware adds
// "private, no-store".
func WriteUnauthorized(w http.ResponseWriter) {
	h := w.Header()
	h.Set("WWW-Authenticate", `Bearer realm="`+Realm+`"`)
	writeJSON(w, http.StatusUnauthorized, unauthorizedBody)
}

// writeInternalError answers a failure that is not the client's fault without
// revealing anything about it.
func writeInternalError(w http.ResponseWriter) {
	writeJSON(w, http.StatusInternalServerError, internalErrorBody)
}

// writeOAuthError adds the headers authlib puts on every OAuth2 error.
func writeOAuthError(w http.ResponseWriter, status int, challenge, body string) {
	h := w.Header()
	h.Set("WWW-Authenticate", challenge)
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	writeJSON(w, status, body)
}

// writeJSON writes a fixed JSON body with upstream's bare content type.
func writeJSON(w http.ResponseWriter, status int, body string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}
