package rest

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/go-chi/chi/v5"

	"till/internal/auth"
	"till/internal/scalar"
	"till/resolvers"
	"till/rest/fastapi"
)

// Client registration (RFC 7591) and configuration (RFC 7592) at /v1/oauth2/register. They
// are hand-written because upstream serves them through authlib, whose answers are not
// Polar's: 201 on registration, RFC 6749 error bodies for an unknown client (401
// invalid_client), a mismatched client_id (400 invalid_request) and an unsupported scope
// (400 invalid_client_metadata). Shape errors of the body are FastAPI 422s as everywhere.

// registerClientBody and updateClientBody are the contract's OAuth2ClientConfiguration and
// OAuth2ClientConfigurationUpdate. Only the JSON types are checked here; the values (URLs,
// enumerations, scopes, defaults) are the use case's rules, shared with GraphQL.
var (
	registerClientBody = &fastapi.Body{Var: "input", Schema: clientConfiguration("OAuth2ClientConfiguration")}
	updateClientBody   = &fastapi.Body{Var: "input", Schema: clientConfiguration("OAuth2ClientConfigurationUpdate",
		fastapi.Field{Name: "client_id", Schema: fastapi.String{}, Required: true})}
)

func clientConfiguration(name string, extra ...fastapi.Field) fastapi.Object {
	texts := fastapi.List{Items: fastapi.String{}}
	uri := fastapi.Nullable{Schema: fastapi.String{}}
	return fastapi.Object{Name: name, Fields: append([]fastapi.Field{
		{Name: "redirect_uris", Schema: texts, Required: true},
		{Name: "token_endpoint_auth_method", Schema: fastapi.String{}},
		{Name: "grant_types", Schema: texts},
		{Name: "response_types", Schema: texts},
		{Name: "scope", Schema: fastapi.String{}},
		{Name: "client_name", Schema: fastapi.String{}, Required: true},
		{Name: "client_uri", Schema: uri},
		{Name: "logo_uri", Schema: uri},
		{Name: "tos_uri", Schema: uri},
		{Name: "policy_uri", Schema: uri},
		{Name: "default_sub_type", Schema: fastapi.String{}},
	}, extra...)}
}

// oauth2RegisterRoutes are the four registration operations, in upstream's order.
func oauth2RegisterRoutes(r *resolvers.Resolver) []Route {
	const configure = "/v1/oauth2/register/{client_id}"
	id := []fastapi.Param{PathString("client_id", "clientId")}
	users := []auth.Kind{auth.KindUser}
	write := Guard{Kinds: users, Scopes: []auth.Scope{auth.ScopeOrganizationsWrite}}
	read := Guard{Kinds: users, Scopes: []auth.Scope{auth.ScopeOrganizationsRead, auth.ScopeOrganizationsWrite}}
	return []Route{
		{Method: http.MethodPost, Path: "/v1/oauth2/register", Handler: oauth2RegisterClient(r), Guard: write},
		{Method: http.MethodGet, Path: configure, Params: id, Handler: oauth2ReadClient(r), Guard: read},
		{Method: http.MethodPut, Path: configure, Params: id, Handler: oauth2ReplaceClient(r), Guard: write},
		{Method: http.MethodDelete, Path: configure, Params: id, Handler: oauth2DeleteClient(r), Guard: write},
	}
}

// oauth2RegisterClient serves POST /v1/oauth2/register.
func oauth2RegisterClient(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		creq, shapeErrs, ok := clientDocument(w, req, registerClientBody)
		if !ok {
			return
		}
		writeClientOutcome(w, registerClientBody, shapeErrs, r.RegisterOAuth2Client(req.Context(), creq))
	})
}

// oauth2ReadClient serves GET /v1/oauth2/register/{client_id}.
func oauth2ReadClient(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id, ok := clientIDParam(w, req)
		if !ok {
			return
		}
		writeClientOutcome(w, nil, nil, r.RegisteredOAuth2Client(req.Context(), resolvers.OAuth2ClientRequest{ClientID: id}))
	})
}

// oauth2ReplaceClient serves PUT /v1/oauth2/register/{client_id}.
func oauth2ReplaceClient(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id, ok := clientIDParam(w, req)
		if !ok {
			return
		}
		creq, shapeErrs, ok := clientDocument(w, req, updateClientBody)
		if !ok {
			return
		}
		creq.ClientID = id
		writeClientOutcome(w, updateClientBody, shapeErrs, r.ReplaceOAuth2Client(req.Context(), creq))
	})
}

// oauth2DeleteClient serves DELETE /v1/oauth2/register/{client_id}.
func oauth2DeleteClient(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id, ok := clientIDParam(w, req)
		if !ok {
			return
		}
		writeClientOutcome(w, nil, nil, r.DeregisterOAuth2Client(req.Context(), resolvers.OAuth2ClientRequest{ClientID: id}))
	})
}

// clientIDParam is the {client_id} segment; Starlette's path parameters need one character,
// so an empty one has answered 404 when ok is false; one holding U+0000 has answered 422.
func clientIDParam(w http.ResponseWriter, req *http.Request) (string, bool) {
	id := fastapi.PathValue(chi.URLParam(req, "client_id"), req.URL.RawPath != "")
	switch {
	case id == "":
		writeDetail(w, http.StatusNotFound, "Not Found")
		return "", false
	case !scalar.Storable(id):
		writeValidation(w, http.StatusUnprocessableEntity, resolvers.CodeRequestValidation,
			[]fastapi.ValidationError{fastapi.NULError([]any{"path", "client_id"}, id)})
		return "", false
	}
	return id, true
}

// clientDocument reads a registration body: a body that cannot be read or is not JSON has
// answered the request when ok is false, as FastAPI answers it before anything else.
// Otherwise the document's JSON types are checked, and their errors kept for the answer: the
// use case checks the caller first, and 401/403 win over a malformed body.
func clientDocument(w http.ResponseWriter, req *http.Request, body *fastapi.Body) (creq resolvers.OAuth2ClientRequest, shapeErrs []fastapi.ValidationError, ok bool) {
	raw, err := io.ReadAll(req.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeBodyTooLarge(w)
		} else {
			writeDetail(w, http.StatusBadRequest, "There was an error parsing the body")
		}
		return creq, nil, false
	}
	parsed, jsonErrs, err := fastapi.ReadBody(body, nil, req.Header.Get("Content-Type"), raw)
	switch {
	case err != nil:
		writeDetail(w, http.StatusBadRequest, "There was an error parsing the body")
		return creq, nil, false
	case len(jsonErrs) > 0:
		writeValidation(w, http.StatusUnprocessableEntity, resolvers.CodeRequestValidation, jsonErrs)
		return creq, nil, false
	}
	v, errs := body.Validate(parsed)
	if len(errs) > 0 {
		return resolvers.OAuth2ClientRequest{MalformedBody: true}, errs, true
	}
	doc, _ := v.(map[string]any)
	return resolvers.OAuth2ClientRequest{Document: doc}, nil, true
}

// writeClientOutcome writes a registration endpoint's answer. body is the route's body spec,
// to map field errors to their wire loc, and shapeErrs the body's own shape errors, sent
// when the use case says the body is what is wrong.
func writeClientOutcome(w http.ResponseWriter, body *fastapi.Body, shapeErrs []fastapi.ValidationError, out resolvers.OAuth2ClientOutcome) {
	switch {
	case out.OAuth2Error != nil:
		writeOAuth2Error(w, out.OAuth2Error)
	case out.Error != nil:
		writeRegistrationError(w, body, out.Error)
	case out.MalformedBody:
		writeValidation(w, http.StatusUnprocessableEntity, resolvers.CodeRequestValidation, shapeErrs)
	case out.Client == nil:
		w.WriteHeader(out.Status)
	default:
		writeClientConfiguration(w, out.Status, out.Client)
	}
}

// writeClientConfiguration writes RFC 7591 client information as upstream's authlib does:
// the metadata (informational URIs only when set, as upstream drops None), then client_id,
// the secret when it was just issued, client_id_issued_at and, for confidential clients,
// client_secret_expires_at, then registration_client_uri.
func writeClientConfiguration(w http.ResponseWriter, status int, c *resolvers.OAuth2ClientConfiguration) {
	obj := fastapi.NewDict()
	obj.Set("redirect_uris", []string(c.RedirectURIs))
	obj.Set("token_endpoint_auth_method", *c.TokenEndpointAuthMethod)
	obj.Set("grant_types", []string(c.GrantTypes))
	obj.Set("response_types", []string(c.ResponseTypes))
	obj.Set("scope", *c.Scope)
	obj.Set("client_name", c.ClientName)
	for _, u := range []struct {
		key   string
		value *string
	}{{"client_uri", c.ClientURI}, {"logo_uri", c.LogoURI}, {"tos_uri", c.TosURI}, {"policy_uri", c.PolicyURI}} {
		if u.value != nil {
			obj.Set(u.key, *u.value)
		}
	}
	obj.Set("default_sub_type", *c.DefaultSubType)
	obj.Set("client_id", c.ClientID)
	if c.ClientSecret != nil {
		obj.Set("client_secret", *c.ClientSecret)
	}
	obj.Set("client_id_issued_at", c.ClientIDIssuedAt)
	if c.ClientSecretExpiresAt != nil {
		obj.Set("client_secret_expires_at", *c.ClientSecretExpiresAt)
	}
	obj.Set("registration_client_uri", c.RegistrationClientURI)
	var buf bytes.Buffer
	fastapi.WriteJSON(&buf, obj)
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	writeJSON(w, status, buf.Bytes())
}

// writeRegistrationError writes a Polar answer of the registration endpoints: the bearer
// middleware's Unauthorized and insufficient_scope bodies, field errors as a 422 at their
// wire loc, any other error as its envelope.
func writeRegistrationError(w http.ResponseWriter, body *fastapi.Body, te *resolvers.Error) {
	switch {
	case te.Code == resolvers.CodeUnauthorized:
		auth.WriteUnauthorized(w)
	case te.Code == resolvers.CodeInsufficientScope:
		scopes := make([]auth.Scope, len(te.Scopes))
		for i, s := range te.Scopes {
			scopes[i] = auth.Scope(s)
		}
		auth.WriteInsufficientScope(w, scopes)
	case len(te.Errors) > 0:
		// The items came from decoded JSON, so they encode again: a failure here cannot
		// happen, and would be answered as a server fault.
		items, err := (&router{}).validationItems(Route{Body: body}, te.Errors)
		if err != nil {
			writeInternal(w)
			return
		}
		writeValidation(w, te.Status(), te.Code, items)
	default:
		writeError(w, te.Status(), te.Code, te.Detail)
	}
}
