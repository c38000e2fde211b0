package resttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// oauthErrorCodes are the RFC 6749/7009/7662 error codes the OAuth2 endpoints answer with.
var oauthErrorCodes = []string{"invalid_request", "invalid_client", "invalid_grant", "unauthorized_client",
	"unsupported_grant_type", "invalid_scope", "unsupported_response_type", "unsupported_token_type", "server_error",
	"invalid_client_metadata"}

// checkOAuth judges the answers of the OAuth2 endpoints where upstream's authlib bodies differ
// from the published document (contract §3.1): RFC 6749 error bodies, the redirects of
// /authorize, 401 {"detail"} for prompt=login, {"active": false} alone and token_type "Bearer"
// in introspection, and the hidden POST /userinfo. handled is false for every other answer,
// which the document then judges.
func checkOAuth(doc *openapi3.T, req *http.Request, status int, header http.Header, body []byte) (handled bool, err error) {
	path := strings.TrimPrefix(req.URL.Path, "/api")
	if !strings.HasPrefix(path, "/v1/oauth2/") {
		return false, nil
	}
	if path == "/v1/oauth2/userinfo" && req.Method == http.MethodPost {
		get := req.Clone(req.Context())
		get.Method = http.MethodGet
		return true, Check(doc, get, status, header, body)
	}
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	switch {
	case status == http.StatusFound && (path == "/v1/oauth2/authorize" || path == "/v1/oauth2/consent"):
		if header.Get("Location") == "" || len(body) > 0 {
			return true, fmt.Errorf("redirect without Location or with a body")
		}
		return true, nil
	case status == http.StatusUnauthorized && path == "/v1/oauth2/authorize" && len(m) == 1 && m["detail"] == "Unauthorized":
		return true, nil
	case path == "/v1/oauth2/consent":
		return checkConsent(doc, status, header, body)
	case status == http.StatusBadRequest || status == http.StatusUnauthorized:
		code, _ := m["error"].(string)
		if !slices.Contains(oauthErrorCodes, code) {
			return false, nil
		}
		if _, hasDesc := m["error_description"]; len(m) > 2 || (len(m) == 2 && !hasDesc) {
			return true, fmt.Errorf("OAuth error body with extra keys")
		}
		if header.Get("Cache-Control") != "no-store" || header.Get("Pragma") != "no-cache" {
			return true, fmt.Errorf("OAuth error without Cache-Control: no-store and Pragma: no-cache")
		}
		return true, nil
	case status == http.StatusCreated && path == "/v1/oauth2/register" && req.Method == http.MethodPost:
		// authlib answers a registration 201 (RFC 7591 §3.2.1) where the document says 200.
		if _, hasID := m["client_id"].(string); !hasID || m["client_id_issued_at"] == nil || m["redirect_uris"] == nil {
			return true, fmt.Errorf("client information without client_id, client_id_issued_at or redirect_uris")
		}
		return true, nil
	case status == http.StatusOK && path == "/v1/oauth2/introspect":
		if len(m) == 1 && m["active"] == false {
			return true, nil
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		want := "active aud client_id exp iat iss organizations scope sub sub_type token_type"
		if strings.Join(keys, " ") != want || m["token_type"] != "Bearer" || m["active"] != true {
			return true, fmt.Errorf("introspection keys %v, want %s with token_type Bearer", keys, want)
		}
		return true, nil
	}
	return false, nil
}

// checkConsent judges upstream's private consent endpoint, which the document leaves out:
// its redirects are judged with the authorization endpoint's; it refuses with RFC 6749
// errors, the Unauthorized, NotPermitted and CSRFVerificationFailed envelopes, or a 422 of
// field errors.
func checkConsent(doc *openapi3.T, status int, header http.Header, body []byte) (bool, error) {
	switch status {
	case http.StatusBadRequest:
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		if code, _ := m["error"].(string); slices.Contains(oauthErrorCodes, code) && header.Get("Cache-Control") == "no-store" {
			return true, nil
		}
	case http.StatusUnauthorized:
		return true, oneOf(body, oauth("invalid_token"), envelope("Unauthorized"))
	case http.StatusForbidden:
		return true, oneOf(body, envelope("NotPermitted", "CSRFVerificationFailed"))
	case http.StatusUnprocessableEntity:
		return true, checkValidationBody(doc, body)
	}
	return true, fmt.Errorf("status %d with body %s is not an answer of the consent endpoint", status, body)
}

// pagePaths are the OAuth2 endpoints that answer a browser with a page.
var pagePaths = []string{"/v1/oauth2/authorize", "/v1/oauth2/consent"}

// checkPage judges an HTML answer: only the OAuth2 browser endpoints send one, only to a
// request that asked for HTML, and always under a policy that loads nothing from elsewhere,
// runs no script and may not be framed. handled is false for answers that are not HTML.
func checkPage(req *http.Request, status int, header http.Header) (handled bool, err error) {
	if !strings.HasPrefix(header.Get("Content-Type"), "text/html") {
		return false, nil
	}
	csp := header.Get("Content-Security-Policy")
	switch {
	case !slices.Contains(pagePaths, strings.TrimPrefix(req.URL.Path, "/api")):
		return true, fmt.Errorf("an HTML answer from an endpoint that serves JSON")
	case !strings.Contains(req.Header.Get("Accept"), "text/html"):
		return true, fmt.Errorf("an HTML answer to a request that did not ask for one")
	case status != http.StatusOK && status < 400:
		return true, fmt.Errorf("an HTML answer with status %d", status)
	case !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") ||
		strings.Contains(csp, "script-src") || header.Get("X-Frame-Options") != "DENY":
		return true, fmt.Errorf("a page without a strict Content-Security-Policy and X-Frame-Options: %q", csp)
	}
	return true, nil
}
