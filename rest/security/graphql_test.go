package security_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"

	"till/internal/auth"
	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/rest"
)

// rootFields lists every field of the schema's root types, introspection aside.
func rootFields(schema *ast.Schema) []*ast.FieldDefinition {
	var out []*ast.FieldDefinition
	for _, root := range []*ast.Definition{schema.Query, schema.Mutation, schema.Subscription} {
		if root == nil {
			continue
		}
		for _, f := range root.Fields {
			if !strings.HasPrefix(f.Name, "__") {
				out = append(out, f)
			}
		}
	}
	return out
}

// operationFor writes a document calling one root field with placeholder values for its
// required arguments (as variables, so each is coerced exactly as a client's would be).
func operationFor(schema *ast.Schema, f *ast.FieldDefinition) (string, map[string]any) {
	kind := "query"
	if schema.Mutation != nil && schema.Mutation.Fields.ForName(f.Name) == f {
		kind = "mutation"
	}
	if schema.Subscription != nil && schema.Subscription.Fields.ForName(f.Name) == f {
		kind = "subscription"
	}
	var decls, args []string
	vars := map[string]any{}
	for i, a := range f.Arguments {
		if !a.Type.NonNull || a.DefaultValue != nil {
			continue
		}
		name := fmt.Sprintf("a%d", i)
		decls = append(decls, "$"+name+": "+a.Type.String())
		args = append(args, a.Name+": $"+name)
		vars[name] = placeholder(schema, a.Type, 0)
	}
	doc := kind
	if len(decls) > 0 {
		doc += "(" + strings.Join(decls, ", ") + ")"
	}
	doc += " { " + f.Name
	if len(args) > 0 {
		doc += "(" + strings.Join(args, ", ") + ")"
	}
	if def := schema.Types[f.Type.Name()]; def != nil && def.Kind != ast.Scalar && def.Kind != ast.Enum {
		doc += " { __typename }"
	}
	return doc + " }", vars
}

// placeholder is a well-typed value for t: required input fields filled in, lists of one.
func placeholder(schema *ast.Schema, t *ast.Type, depth int) any {
	if t.Elem != nil {
		return []any{placeholder(schema, t.Elem, depth)}
	}
	def := schema.Types[t.NamedType]
	switch {
	case def == nil:
		return nil
	case def.Kind == ast.Enum:
		return def.EnumValues[0].Name
	case def.Kind == ast.InputObject:
		obj := map[string]any{}
		if depth > 6 {
			return obj
		}
		for _, f := range def.Fields {
			if f.Type.NonNull && f.DefaultValue == nil {
				obj[f.Name] = placeholder(schema, f.Type, depth+1)
			}
		}
		if len(obj) == 0 && def.Directives.ForName("oneOf") != nil && len(def.Fields) > 0 {
			obj[def.Fields[0].Name] = placeholder(schema, def.Fields[0].Type, depth+1)
		}
		return obj
	}
	switch t.NamedType {
	case "UUID":
		return "0f8d6a51-3c1e-4b7a-9d2e-5a6b7c8d9e0f"
	case "Int", "Int64":
		return 1
	case "Float":
		return 1.5
	case "Boolean":
		return false
	case "DateTime":
		return "2026-01-01T00:00:00Z"
	case "Metadata", "JSON":
		return map[string]any{}
	}
	return "x"
}

// gqlAnswer is what the suite reads from a GraphQL response.
type gqlAnswer struct {
	status int
	body   []byte
	Errors []gqlError `json:"errors"`
}

// gqlError is one error of an answer.
type gqlError struct {
	Message    string `json:"message"`
	Path       []any  `json:"path"`
	Extensions struct {
		Code   string `json:"code"`
		Reason string `json:"reason"`
		Cause  string `json:"cause"`
	} `json:"extensions"`
}

// roleRefusal is the permission a role refusal names (NotPermitted whose cause is the
// missing permission), or "" when the answer holds none.
func (a gqlAnswer) roleRefusal() auth.Permission {
	for _, e := range a.Errors {
		if e.Extensions.Code == "FORBIDDEN" && e.Extensions.Reason == "NotPermitted" && strings.Contains(e.Extensions.Cause, ":") {
			return auth.Permission(e.Extensions.Cause)
		}
	}
	return ""
}

// faulted reports a server error: an HTTP 5xx or an INTERNAL error.
func (a gqlAnswer) faulted() bool {
	if a.status >= 500 {
		return true
	}
	for _, e := range a.Errors {
		if e.Extensions.Code == "INTERNAL" {
			return true
		}
	}
	return false
}

// outcome classifies the answer: refusals are recognised by their error codes and reasons,
// whatever else the field may have said about the placeholder arguments. A code outside
// the fixed set is a fault.
func (a gqlAnswer) outcome() (outcome, string) {
	if a.status >= 500 {
		return "", fmt.Sprintf("HTTP %d", a.status)
	}
	for _, e := range a.Errors {
		code, reason := e.Extensions.Code, e.Extensions.Reason
		switch {
		case !slices.Contains(resolvers.GraphQLCodes, resolvers.GraphQLCode(code)):
			return "", fmt.Sprintf("code %q is not one of the GraphQL codes: %s", code, e.Message)
		case a.status == http.StatusUnauthorized && code == "UNAUTHENTICATED" && reason == "invalid_token":
			return invalidToken, ""
		case len(e.Path) == 0 || code == "BAD_USER_INPUT" && reason == "RequestValidationError":
			return refusedInput, e.Message
		case code == "UNAUTHENTICATED" && reason == "Unauthorized":
			return unauthenticated, ""
		case code == "FORBIDDEN" && (reason == "insufficient_scope" || reason == "NotPermitted" || reason == "Unauthorized"):
			return forbidden, ""
		case code == "INTERNAL":
			return "", "internal error: " + e.Message
		}
	}
	return admitted, ""
}

// graphQLExpectation is what GraphQL shows of a guard's promise: a principal of a kind the
// field does not serve is FORBIDDEN there, where /v1 answers upstream's 401 Unauthorized;
// only a request without one is UNAUTHENTICATED.
func graphQLExpectation(want outcome, p principal) outcome {
	if want == unauthenticated && p.kind != auth.KindAnonymous {
		return forbidden
	}
	return want
}

func (w *world) graphql(t *testing.T, p principal, doc string, vars map[string]any) gqlAnswer {
	t.Helper()
	if strings.HasPrefix(doc, "subscription") {
		return w.subscribe(t, p, doc, vars)
	}
	body, _ := json.Marshal(map[string]any{"query": doc, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	if p.browserOf != uuid.Nil {
		w.signIn(t, req, p.browserOf)
	}
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	a := gqlAnswer{status: rec.Code, body: rec.Body.Bytes()}
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || len(a.Errors) == 0 && rec.Code != http.StatusOK {
		t.Fatalf("not a GraphQL response (%d): %s", rec.Code, rec.Body)
	}
	return a
}

// TestEveryRootFieldDeclaresOneGuard: the schema says who may call each root field, once.
func TestEveryRootFieldDeclaresOneGuard(t *testing.T) {
	w := newWorld(t)
	for _, f := range rootFields(w.Resolver.Schema().Schema()) {
		if n := len(guardsOf(f)); n != 1 {
			t.Errorf("root field %s declares %d guards (%s); each needs exactly one of @%s", f.Name, n,
				directivesText(guardsOf(f)), strings.Join(guardDirectives, ", @"))
		}
	}
}

// TestGraphQLGuardMatrix calls every root field as every principal and checks the answer
// against what the field's declared guard promises.
func TestGraphQLGuardMatrix(t *testing.T) {
	w := newWorld(t)
	schema := w.Resolver.Schema().Schema()
	for _, f := range rootFields(schema) {
		doc, vars := operationFor(schema, f)
		t.Run(f.Name, func(t *testing.T) {
			for _, p := range w.principals {
				want := graphQLExpectation(expectField(guardsOf(f), p), p)
				got, fault := w.graphql(t, p, doc, vars).outcome()
				if got == refusedInput {
					if want == admitted {
						continue
					}
					// The document or a placeholder argument, as its scalar decodes it, was
					// refused before the guard could run: the placeholders no longer fit.
					t.Errorf("%s as %s: the placeholder arguments were refused before the guard ran: %s", f.Name, p.name, fault)
					continue
				}
				if fault != "" {
					t.Errorf("%s as %s: %s", f.Name, p.name, fault)
					continue
				}
				if got != want {
					t.Errorf("%s as %s: %s, want %s (guard %s)", f.Name, p.name, got, want, directivesText(guardsOf(f)))
				}
			}
		})
	}
}

// unusedScope is a scope no guard asks for, so a token holding only it holds nothing.
func unusedScope(t *testing.T, schema *ast.Schema, routes []rest.Route) auth.Scope {
	t.Helper()
	used := map[auth.Scope]bool{}
	for _, f := range rootFields(schema) {
		for _, d := range guardsOf(f) {
			for _, s := range directiveScopes(d) {
				used[s] = true
			}
		}
	}
	for _, r := range routes {
		for _, s := range r.Guard.Scopes {
			used[s] = true
		}
	}
	for _, s := range auth.AllScopes() {
		if !used[s] && s != auth.ScopeCustomerPortalRead && s != auth.ScopeCustomerPortalWrite {
			return s
		}
	}
	t.Fatal("every scope is asked for by some guard; the matrix needs one that is not")
	return ""
}

// subscribe opens a websocket as p, starts doc and reads the first answer. A connection the
// server refuses is read as the refusal of the credential it presented (invalid_token), or
// of its absence; a subscription that is admitted stays silent, as it waits for events.
func (w *world) subscribe(t *testing.T, p principal, doc string, vars map[string]any) gqlAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	init, header := map[string]any{}, http.Header{}
	if p.token != "" {
		init["Authorization"] = "Bearer " + p.token
	}
	if p.browserOf != uuid.Nil {
		req := httptest.NewRequest(http.MethodGet, "/graphql", nil)
		w.signIn(t, req, p.browserOf)
		header = req.Header
	}
	c, err := resolverstest.DialLive(ctx, resolverstest.WebsocketURL(w.server.URL+"/graphql"), header, init)
	if err != nil {
		a := gqlAnswer{status: http.StatusUnauthorized}
		a.Errors = make([]gqlError, 1)
		a.Errors[0].Path = []any{"connection"}
		a.Errors[0].Extensions.Code, a.Errors[0].Extensions.Reason = "UNAUTHENTICATED", "Unauthorized"
		if p.token != "" || p.browserOf != uuid.Nil {
			a.Errors[0].Extensions.Reason = "invalid_token"
		}
		return a
	}
	defer c.Close()
	if err := c.Subscribe(ctx, "1", doc, vars); err != nil {
		t.Fatal(err)
	}
	quiet, stop := context.WithTimeout(ctx, 300*time.Millisecond)
	defer stop()
	m, err := c.Next(quiet)
	a := gqlAnswer{status: http.StatusOK}
	switch {
	case err != nil:
		return a // admitted: waiting for events
	case m.Type == "error":
		err = json.Unmarshal(m.Payload, &a.Errors)
	case m.Type == "next":
		err = json.Unmarshal(m.Payload, &a)
	}
	if err != nil {
		t.Fatalf("%s: %s %s", doc, m.Type, m.Payload)
	}
	return a
}
