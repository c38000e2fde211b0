package resolvers

import (
	"context"
	"errors"
	"net/http"
	"net/url"
)

// OAuth2Error is an OAuth 2.0 protocol error (RFC 6749 §4.1.2.1, §5.2), complete with its
// answer: the OAuth endpoints render it as {"error", "error_description"} with Status and
// Header, or, when Redirect is set, as a redirect to the client, because the request named a
// valid client and redirect URI that may receive it.
type OAuth2Error struct {
	// Code is the RFC 6749 error code: invalid_request, invalid_client, invalid_grant, …
	Code        string
	Description string
	// Status is the HTTP status when the error is shown: 400, 401 for invalid_client, 429 for
	// a throttled client, 500 for server_error.
	Status int
	// Header holds the response headers the error needs: a WWW-Authenticate challenge for a
	// client that authenticated with HTTP Basic, Retry-After for a throttled one.
	Header http.Header
	// Redirect, when set, is the client's redirect URI that receives the error with State.
	Redirect string
	State    string
}

// Error reads as the wire code and description.
func (e *OAuth2Error) Error() string { return e.Code + ": " + e.Description }

// RedirectURL is Redirect with error, error_description and state added.
func (e *OAuth2Error) RedirectURL(issuer string) string {
	params := url.Values{"error": {e.Code}}
	if e.Description != "" {
		params.Set("error_description", e.Description)
	}
	return withQuery(e.Redirect, params, e.State, issuer)
}

// withHeader is a copy of e that also sends the header key: value, so an error value shared
// between calls never gains a header meant for one answer.
func (e *OAuth2Error) withHeader(key, value string) *OAuth2Error {
	out := *e
	out.Header = e.Header.Clone()
	if out.Header == nil {
		out.Header = http.Header{}
	}
	out.Header.Set(key, value)
	return &out
}

func oauthError(status int, code, description string) *OAuth2Error {
	return &OAuth2Error{Code: code, Description: description, Status: status}
}

// malformedOAuth2Request answers a form or query that could not be read, or that holds text
// PostgreSQL cannot store (U+0000, bytes that are not UTF-8): authlib's bare invalid_request.
func malformedOAuth2Request() *OAuth2Error {
	return oauthError(http.StatusBadRequest, "invalid_request", "")
}

// oauth2Failure is how an OAuth endpoint answers a use case's err: an *OAuth2Error as it is,
// with a Basic challenge when the client authenticated with HTTP Basic and was refused (RFC
// 6749 §5.2 asks for one); anything else is the server's fault, logged here and answered
// server_error, which reveals nothing about it.
func (r *Resolver) oauth2Failure(ctx context.Context, endpoint string, creds ClientCredentials, err error) *OAuth2Error {
	if err == nil {
		return nil
	}
	var oe *OAuth2Error
	if !errors.As(err, &oe) {
		r.logger.ErrorContext(ctx, "oauth2 endpoint failed", "endpoint", endpoint, "error", err)
		return oauthError(http.StatusInternalServerError, "server_error", "")
	}
	if oe.Code == "invalid_client" && oe.Status == http.StatusUnauthorized && creds.Basic {
		return oe.withHeader("WWW-Authenticate", `Basic error="invalid_client"`)
	}
	return oe
}
