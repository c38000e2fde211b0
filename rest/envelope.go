package rest

import (
	"bytes"
	"net/http"
	"strings"

	"till/rest/fastapi"
)

// Upstream's error bodies, byte for byte where clients can see it: compact
// JSON, keys in Python's order, non-ASCII unescaped.

const (
	invalidTokenDescription      = "The access token provided is expired, revoked, malformed, or invalid for other reasons."
	insufficientScopeDescription = "The request requires higher privileges than provided by the access token."
)

// writeJSON sends a JSON body with the given status.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeDetail is Starlette's HTTPException body: {"detail": "..."}.
func writeDetail(w http.ResponseWriter, status int, detail string) {
	var buf bytes.Buffer
	buf.WriteString(`{"detail":`)
	fastapi.WriteJSON(&buf, detail)
	buf.WriteByte('}')
	writeJSON(w, status, buf.Bytes())
}

// writeError is a PolarError body: {"error": name, "detail": message}.
func writeError(w http.ResponseWriter, status int, name, detail string) {
	var buf bytes.Buffer
	buf.WriteString(`{"error":`)
	fastapi.WriteJSON(&buf, name)
	buf.WriteString(`,"detail":`)
	fastapi.WriteJSON(&buf, detail)
	buf.WriteByte('}')
	writeJSON(w, status, buf.Bytes())
}

// writeValidation is a 422 with FastAPI items under Polar's error name.
func writeValidation(w http.ResponseWriter, status int, name string, items []fastapi.ValidationError) {
	var buf bytes.Buffer
	buf.WriteString(`{"error":`)
	fastapi.WriteJSON(&buf, name)
	buf.WriteString(`,"detail":[`)
	for i, item := range items {
		if i > 0 {
			buf.WriteByte(',')
		}
		b, _ := item.MarshalJSON()
		buf.Write(b)
	}
	buf.WriteString("]}")
	writeJSON(w, status, buf.Bytes())
}

// writeInternal hides an unexpected failure behind a generic 500.
func writeInternal(w http.ResponseWriter) {
	writeError(w, http.StatusInternalServerError, "InternalServerError", "Internal Server Error")
}

// writeOAuthError is authlib's bearer-token error: an OAuth2 body, a
// WWW-Authenticate challenge repeating it, and no caching.
func writeOAuthError(w http.ResponseWriter, status int, realm, code, description string, scopes []string) {
	challenge := `Bearer realm="` + realm + `"`
	if len(scopes) > 0 {
		challenge += `, scope="` + strings.Join(scopes, " ") + `"`
	}
	challenge += `, error="` + code + `", error_description="` + description + `"`
	h := w.Header()
	h.Set("WWW-Authenticate", challenge)
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	var buf bytes.Buffer
	buf.WriteString(`{"error":`)
	fastapi.WriteJSON(&buf, code)
	buf.WriteString(`,"error_description":`)
	fastapi.WriteJSON(&buf, description)
	buf.WriteByte('}')
	writeJSON(w, status, buf.Bytes())
}
