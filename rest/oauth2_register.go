package rest

import (
	"bytes"
	"context"
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

// oauth2RegisterClient serves POST /v1/oauth2/register: 201 with the client information.
func oauth2RegisterClient(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		in, ok := clientMetadataRequest(w, req, r, registerClientBody)
		if !ok {
			return
		}
		c, err := r.RegisterOAuth2Client(req.Context(), metadataOf(in))
		if err != nil {
			writeRegistrationFailure(w, req, r, registerClientBody, err)
			return
		}
		writeClientConfiguration(w, r, http.StatusCreated, c)
	})
}

// oauth2ReadClient serves GET /v1/oauth2/register/{client_id}.
func oauth2ReadClient(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id, ok := clientIDParam(w, req)
		if !ok {
			return
		}
		c, err := r.RegisteredOAuth2Client(req.Context(), id)
		if err != nil {
			writeRegistrationFailure(w, req, r, nil, err)
			return
		}
		writeClientConfiguration(w, r, http.StatusOK, c)
	})
}

// oauth2ReplaceClient serves PUT /v1/oauth2/register/{client_id}.
func oauth2ReplaceClient(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id, ok := clientIDParam(w, req)
		if !ok {
			return
		}
		in, ok := clientMetadataRequest(w, req, r, updateClientBody)
		if !ok {
			return
		}
		bodyClientID, _ := in["clientId"].(string)
		c, err := r.ReplaceOAuth2Client(req.Context(), id, bodyClientID, metadataOf(in))
		if err != nil {
			writeRegistrationFailure(w, req, r, updateClientBody, err)
			return
		}
		writeClientConfiguration(w, r, http.StatusOK, c)
	})
}

// oauth2DeleteClient serves DELETE /v1/oauth2/register/{client_id}: 204 without a body.
func oauth2DeleteClient(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id, ok := clientIDParam(w, req)
		if !ok {
			return
		}
		if err := r.DeregisterOAuth2Client(req.Context(), id); err != nil {
			writeRegistrationFailure(w, req, r, nil, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
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

// clientMetadataRequest reads a registration body in FastAPI's order: JSON syntax first,
// then the caller (401/403 win over a malformed body), then the body's shape. It has
// answered the request when ok is false.
func clientMetadataRequest(w http.ResponseWriter, req *http.Request, r *resolvers.Resolver, body *fastapi.Body) (map[string]any, bool) {
	raw, err := io.ReadAll(req.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeBodyTooLarge(w)
		} else {
			writeDetail(w, http.StatusBadRequest, "There was an error parsing the body")
		}
		return nil, false
	}
	parsed, jsonErrs, err := fastapi.ReadBody(body, nil, req.Header.Get("Content-Type"), raw)
	switch {
	case err != nil:
		writeDetail(w, http.StatusBadRequest, "There was an error parsing the body")
		return nil, false
	case len(jsonErrs) > 0:
		writeValidation(w, http.StatusUnprocessableEntity, resolvers.CodeRequestValidation, jsonErrs)
		return nil, false
	}
	if err := r.AuthorizeOAuth2ClientRegistration(req.Context(), true); err != nil {
		writeRegistrationFailure(w, req, r, body, err)
		return nil, false
	}
	v, errs := body.Validate(parsed)
	if len(errs) > 0 {
		writeValidation(w, http.StatusUnprocessableEntity, resolvers.CodeRequestValidation, errs)
		return nil, false
	}
	in, _ := v.(map[string]any)
	return in, true
}

// metadataOf reads a validated body (GraphQL field names). Absent fields stay nil so the use
// case applies its defaults; an explicit empty list stays an empty list.
func metadataOf(in map[string]any) resolvers.OAuth2ClientMetadata {
	str := func(key string) *string {
		if s, isString := in[key].(string); isString {
			return &s
		}
		return nil
	}
	list := func(key string) []string {
		items, isList := in[key].([]any)
		if !isList {
			return nil
		}
		out := make([]string, len(items))
		for i, item := range items {
			out[i], _ = item.(string)
		}
		return out
	}
	m := resolvers.OAuth2ClientMetadata{RedirectURIs: list("redirectUris"), TokenEndpointAuthMethod: str("tokenEndpointAuthMethod"),
		GrantTypes: list("grantTypes"), ResponseTypes: list("responseTypes"), Scope: str("scope"),
		ClientURI: str("clientUri"), LogoURI: str("logoUri"), TosURI: str("tosUri"), PolicyURI: str("policyUri"),
		DefaultSubType: str("defaultSubType")}
	if name := str("clientName"); name != nil {
		m.ClientName = *name
	}
	return m
}

// writeClientConfiguration writes RFC 7591 client information as upstream's authlib does:
// the metadata (informational URIs only when set, as upstream drops None), then client_id,
// the secret when it was just issued, client_id_issued_at and, for confidential clients,
// client_secret_expires_at (0: never), then registration_client_uri. Till issues no
// registration access token: a user token manages its clients.
func writeClientConfiguration(w http.ResponseWriter, r *resolvers.Resolver, status int, c *resolvers.OAuth2ClientConfiguration) {
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
	obj.Set("client_id_issued_at", c.IssuedAt.Unix())
	if c.SecretExpiresAt != nil {
		var expires int64
		if !c.SecretExpiresAt.IsZero() {
			expires = c.SecretExpiresAt.Unix()
		}
		obj.Set("client_secret_expires_at", expires)
	}
	obj.Set("registration_client_uri", r.Issuer()+"/v1/oauth2/register/"+c.ClientID)
	var buf bytes.Buffer
	fastapi.WriteJSON(&buf, obj)
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	writeJSON(w, status, buf.Bytes())
}

// writeRegistrationFailure renders a use-case error as upstream answers it on these routes.
// A client that is unknown, deleted or someone else's is authlib's 401 invalid_client
// (RFC 7592 §2); body is the route's body spec, to map field errors to their wire loc.
func writeRegistrationFailure(w http.ResponseWriter, req *http.Request, r *resolvers.Resolver, body *fastapi.Body, err error) {
	var oe *resolvers.OAuth2Error
	var te *resolvers.Error
	switch {
	case errors.As(err, &oe):
		writeOAuth2Error(w, oe)
	case !errors.As(err, &te):
		logRegistrationFailure(req.Context(), r, req, err)
		writeInternal(w)
	case te.Code == resolvers.CodeUnauthorized:
		auth.WriteUnauthorized(w)
	case te.Code == resolvers.CodeInsufficientScope:
		scopes := make([]auth.Scope, len(te.Scopes))
		for i, s := range te.Scopes {
			scopes[i] = auth.Scope(s)
		}
		auth.WriteInsufficientScope(w, scopes)
	case te.Code == resolvers.CodeNotFound:
		writeOAuth2Error(w, &resolvers.OAuth2Error{Status: http.StatusUnauthorized, Code: "invalid_client",
			Header: http.Header{"Www-Authenticate": {`Basic error="invalid_client", error_description=""`}}})
	case len(te.Errors) > 0:
		writeFieldErrors(w, req, r, body, te)
	default:
		writeError(w, te.Status(), te.Code, te.Detail)
	}
}

// writeFieldErrors answers the use case's field errors. Upstream validates the shape with
// pydantic (422) before authlib checks the scope against the supported ones, so a scope
// error alone is 400 invalid_client_metadata, and otherwise only the 422 items are sent.
func writeFieldErrors(w http.ResponseWriter, req *http.Request, r *resolvers.Resolver, body *fastapi.Body, te *resolvers.Error) {
	var others []resolvers.FieldError
	scopeFailed := false
	for _, fe := range te.Errors {
		if len(fe.Loc) == 2 && fe.Loc[0] == "input" && fe.Loc[1] == "scope" {
			scopeFailed = true
			continue
		}
		others = append(others, fe)
	}
	if len(others) == 0 && scopeFailed {
		writeOAuth2Error(w, &resolvers.OAuth2Error{Status: http.StatusBadRequest, Code: "invalid_client_metadata",
			Description: "Invalid claim 'scope'"})
		return
	}
	route := Route{Body: body}
	items, err := (&router{}).validationItems(route, others)
	if err != nil {
		logRegistrationFailure(req.Context(), r, req, err)
		writeInternal(w)
		return
	}
	writeValidation(w, te.Status(), te.Code, items)
}

func logRegistrationFailure(ctx context.Context, r *resolvers.Resolver, req *http.Request, err error) {
	r.Logger().ErrorContext(ctx, "oauth2 registration failed", "method", req.Method, "path", req.URL.Path, "error", err)
}
