package auth_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"till/internal/auth"
)

// Upstream responses, verbatim from contract §1.5 and §1.6 with realm "till".
const (
	invalidTokenBody = `{"error":"invalid_token","error_description":"The access token provided is expired, revoked, malformed, or invalid for other reasons."}`
	invalidTokenAuth = `Bearer realm="till", error="invalid_token", error_description="The access token provided is expired, revoked, malformed, or invalid for other reasons."`
	unauthorizedBody = `{"error":"Unauthorized","detail":"Unauthorized"}`
	internalBody     = `{"error":"InternalServerError","detail":"Internal Server Error"}`

	insufficientScopeBody = `{"error":"insufficient_scope","error_description":"The request requires higher privileges than provided by the access token."}`
)

func TestWriters(t *testing.T) {
	tests := []struct {
		name        string
		write       func(http.ResponseWriter)
		wantStatus  int
		wantBody    string
		wantHeaders http.Header
	}{
		{
			name:       "invalid token is a 401 with the RFC 6750 challenge and no-store",
			write:      auth.WriteInvalidToken,
			wantStatus: http.StatusUnauthorized,
			wantBody:   invalidTokenBody,
			wantHeaders: http.Header{
				"Content-Type":     {"application/json"},
				"Content-Length":   {strconv.Itoa(len(invalidTokenBody))},
				"Cache-Control":    {"no-store"},
				"Pragma":           {"no-cache"},
				"Www-Authenticate": {invalidTokenAuth},
			},
		},
		{
			name:       "unauthorized is a 401 domain error with a bare realm challenge",
			write:      auth.WriteUnauthorized,
			wantStatus: http.StatusUnauthorized,
			wantBody:   unauthorizedBody,
			wantHeaders: http.Header{
				"Content-Type":     {"application/json"},
				"Content-Length":   {strconv.Itoa(len(unauthorizedBody))},
				"Www-Authenticate": {`Bearer realm="till"`},
			},
		},
		{
			name: "insufficient scope is a 403 naming the required scopes in order",
			write: func(w http.ResponseWriter) {
				auth.WriteInsufficientScope(w, []auth.Scope{auth.ScopeLicenseKeysRead, auth.ScopeLicenseKeysWrite})
			},
			wantStatus: http.StatusForbidden,
			wantBody:   insufficientScopeBody,
			wantHeaders: http.Header{
				"Content-Type":   {"application/json"},
				"Content-Length": {strconv.Itoa(len(insufficientScopeBody))},
				"Cache-Control":  {"no-store"},
				"Pragma":         {"no-cache"},
				"Www-Authenticate": {`Bearer realm="till", scope="license_keys:read license_keys:write", ` +
					`error="insufficient_scope", error_description="The request requires higher privileges than provided by the access token."`},
			},
		},
		{
			name: "insufficient scope with a single scope has no trailing space",
			write: func(w http.ResponseWriter) {
				auth.WriteInsufficientScope(w, []auth.Scope{auth.ScopeEventsWrite})
			},
			wantStatus: http.StatusForbidden,
			wantBody:   insufficientScopeBody,
			wantHeaders: http.Header{
				"Content-Type":   {"application/json"},
				"Content-Length": {strconv.Itoa(len(insufficientScopeBody))},
				"Cache-Control":  {"no-store"},
				"Pragma":         {"no-cache"},
				"Www-Authenticate": {`Bearer realm="till", scope="events:write", ` +
					`error="insufficient_scope", error_description="The request requires higher privileges than provided by the access token."`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			tt.write(rec)
			assertResponse(t, rec, tt.wantStatus, tt.wantBody, tt.wantHeaders)
		})
	}
}

// assertResponse checks status, exact body bytes and the exact header set.
func assertResponse(tb testing.TB, rec *httptest.ResponseRecorder, status int, body string, headers http.Header) {
	tb.Helper()
	if rec.Code != status {
		tb.Errorf("status = %d, want %d", rec.Code, status)
	}
	if got := rec.Body.String(); got != body {
		tb.Errorf("body = %s\nwant   %s", got, body)
	}
	if headers == nil {
		return
	}
	if diff := cmp.Diff(headers, rec.Header()); diff != "" {
		tb.Errorf("headers (-want +got):\n%s", diff)
	}
}
