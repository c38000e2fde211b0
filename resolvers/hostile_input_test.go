package resolvers_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vektah/gqlparser/v2/ast"

	"till/resolvers"
	"till/resolvers/resolverstest"
)

// probeValues builds GraphQL variable values for a type: every String (and the string
// parts of JSON and Metadata) set to hostile when hostile is not "", every other leaf to
// a well-formed value, so that a refusal can only come from the hostile strings.
type probeValues struct {
	schema  *ast.Schema
	hostile string
}

const probeUUID = "3f1c2a5e-8b7d-4c19-9e2f-0a1b2c3d4e5f"

func (p probeValues) value(t *ast.Type, depth int) any {
	if t.Elem != nil {
		return []any{p.value(t.Elem, depth)}
	}
	text := "x"
	if p.hostile != "" {
		text = p.hostile
	}
	switch t.NamedType {
	case "String", "ID":
		return text
	case "UUID":
		return probeUUID
	case "Int", "Int64":
		return 1
	case "Float":
		return 1.5
	case "Boolean":
		return true
	case "DateTime":
		return "2020-01-01T00:00:00Z"
	case "JSON":
		return map[string]any{text: []any{text, map[string]any{"k": text}}}
	case "Metadata":
		return map[string]any{text: text}
	}
	def := p.schema.Types[t.NamedType]
	switch def.Kind {
	case ast.Enum:
		return def.EnumValues[0].Name
	case ast.InputObject:
		out := map[string]any{}
		for _, f := range def.Fields {
			if depth > 4 && !f.Type.NonNull {
				continue
			}
			out[f.Name] = p.value(f.Type, depth+1)
		}
		return out
	}
	return text
}

// mentionsText reports whether a value of t can hold a string somewhere.
func mentionsText(schema *ast.Schema, t *ast.Type, seen map[string]bool) bool {
	if t.Elem != nil {
		return mentionsText(schema, t.Elem, seen)
	}
	switch t.NamedType {
	case "String", "ID", "JSON", "Metadata":
		return true
	}
	def := schema.Types[t.NamedType]
	if def.Kind != ast.InputObject || seen[def.Name] {
		return false
	}
	seen[def.Name] = true
	for _, f := range def.Fields {
		if mentionsText(schema, f.Type, seen) {
			return true
		}
	}
	return false
}

// probeOperation is an operation calling field with every argument as a variable.
func probeOperation(schema *ast.Schema, kind string, field *ast.FieldDefinition) string {
	var decl, args []string
	for _, a := range field.Arguments {
		decl = append(decl, "$"+a.Name+": "+a.Type.String())
		args = append(args, a.Name+": $"+a.Name)
	}
	op := kind
	if len(decl) > 0 {
		op += "(" + strings.Join(decl, ", ") + ")"
	}
	call := field.Name
	if len(args) > 0 {
		call += "(" + strings.Join(args, ", ") + ")"
	}
	if def := schema.Types[field.Type.Name()]; def.Kind != ast.Scalar && def.Kind != ast.Enum {
		call += " { __typename }"
	}
	return op + " { " + call + " }"
}

// TestHostileStringsAreRefusedAtDecoding sends a NUL (which PostgreSQL text refuses) in
// every string-bearing argument of every root field (all its strings at once, every other
// required argument well-formed), as every kind of caller: none may reach the database and
// come back as an internal error. (JSON variables cannot carry bytes that are not UTF-8;
// TestHostileValuesInGraphQLAreRefused sends them in a document.)
func TestHostileStringsAreRefusedAtDecoding(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	c := s.NewCustomer(t, org.ID, "ext-1")
	session := s.NewCustomerSession(t, org.ID, c.ID)
	schema := resolvers.New(resolvers.Deps{}).Schema().Schema()
	principals := []struct{ name, token string }{{"anonymous", ""}, {"an organization", org.Token}, {"a customer", session}}
	roots := []struct {
		kind string
		def  *ast.Definition
	}{{"query", schema.Query}, {"mutation", schema.Mutation}}
	for _, root := range roots {
		for _, field := range root.def.Fields {
			if strings.HasPrefix(field.Name, "__") {
				continue
			}
			op := probeOperation(schema, root.kind, field)
			for _, arg := range field.Arguments {
				if !mentionsText(schema, arg.Type, map[string]bool{}) {
					continue
				}
				for _, hostile := range []string{"a\x00b"} {
					vars := map[string]any{}
					for _, other := range field.Arguments {
						if other.Type.NonNull || other == arg {
							p := probeValues{schema: schema}
							if other == arg {
								p.hostile = hostile
							}
							vars[other.Name] = p.value(other.Type, 0)
						}
					}
					for _, who := range principals {
						name := fmt.Sprintf("%s %s with a NUL in %s as %s", root.kind, field.Name, arg.Name, who.name)
						t.Run(name, func(t *testing.T) {
							res := s.Do(t, who.token, op, vars)
							if res.Status >= http.StatusInternalServerError {
								t.Fatalf("HTTP %d: %s", res.Status, res.Body)
							}
							for _, e := range res.Errors {
								if e.Extensions.Code == "INTERNAL" {
									t.Fatalf("internal error: %s\noperation %s\nvariables %v", res.Body, op, vars)
								}
							}
						})
					}
				}
			}
		}
	}
}

// TestHostileValuesInGraphQLAreRefused pins how GraphQL refuses the values PostgreSQL (or a
// later read) cannot take, in variables and in literals alike: a 422 at the argument's
// path, and nothing stored.
func TestHostileValuesInGraphQLAreRefused(t *testing.T) {
	t.Parallel()
	w := newIngestWorld(t)
	event := func(metadata any) vars {
		return vars{"in": vars{"events": []any{vars{"name": "api_call", "customerId": w.customer.ID, "metadata": metadata}}}}
	}
	tests := []struct {
		name      string
		query     string
		variables vars
		loc       []any
		msg       string
	}{
		{"a number beyond a float64 in event metadata", ingestDoc, event(vars{"tokens": json.Number("1e400")}),
			[]any{"input", "events", 0, "metadata"}, "tokens: Input should be a finite number"},
		{"a negative one", ingestDoc, event(vars{"tokens": json.Number("-1e400")}),
			[]any{"input", "events", 0, "metadata"}, "tokens: Input should be a finite number"},
		{"an integer beyond a float64", ingestDoc, event(vars{"tokens": json.Number("1" + strings.Repeat("0", 400))}),
			[]any{"input", "events", 0, "metadata"}, "tokens: Input should be a finite number"},
		{"a NUL nested in event metadata", ingestDoc, event(vars{"llm": []any{vars{"model": "a\x00"}}}),
			[]any{"input", "events", 0, "metadata"}, "llm[0].model: This value contains invalid characters"},
		{"a NUL in a metadata key", ingestDoc, event(vars{"k\x00": 1}),
			[]any{"input", "events", 0, "metadata"}, "a key: This value contains invalid characters"},
		{"a NUL in a String variable", `query($id: String!) { customerByExternalId(externalId: $id) { id } }`, vars{"id": "a\x00"},
			[]any{"externalId"}, "This value contains invalid characters"},
		{"a NUL in a String literal", `{ customerByExternalId(externalId: "a\u0000") { id } }`, nil,
			[]any{"externalId"}, "This value contains invalid characters"},
		{"a NUL in a String of an input object", `mutation($in: CustomerCreateInput!) { createCustomer(input: $in) { id } }`,
			vars{"in": vars{"email": "x@example.com", "name": "a\x00"}}, []any{"input", "name"}, "This value contains invalid characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			got := w.s.QueryError(t, w.org.Token, tt.query, tt.variables)
			want := []resolverstest.FieldError{{Type: "value_error", Loc: tt.loc, Msg: tt.msg}}
			if got.Extensions.Code != "BAD_USER_INPUT" || got.Extensions.Reason != resolvers.CodeRequestValidation {
				t.Errorf("code %s (%s), want BAD_USER_INPUT (%s): %s", got.Extensions.Code, got.Extensions.Reason, resolvers.CodeRequestValidation, got.Message)
			}
			if diff := cmp.Diff(want, got.Extensions.Fields); diff != "" {
				t.Errorf("field errors (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("a string that is not UTF-8 in a GET document is refused", func(t *testing.T) {
		q := url.Values{"query": {`{ customerByExternalId(externalId: "a` + "\xff" + `") { id } }`}}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, w.s.URL+"?"+q.Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+w.org.Token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if !strings.Contains(string(body), `"code":"BAD_USER_INPUT","fields":[{"path":["externalId"]`) ||
			!strings.Contains(string(body), `"reason":"RequestValidationError"`) {
			t.Errorf("HTTP %d: %s", res.StatusCode, body)
		}
	})
	var stored int
	w.s.Get(t, &stored, `SELECT count(*) FROM events WHERE organization_id = $1`, w.org.ID)
	if stored != 0 {
		t.Errorf("%d events stored, want none", stored)
	}
}
