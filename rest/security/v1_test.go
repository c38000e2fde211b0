package security_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"till/internal/auth"
	"till/rest"
	"till/rest/resttest"
)

// pathParam matches a chi path parameter.
var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// routeGuard is what a route promises each principal: a hand-written route's declared
// Guard, or the guard directives of the root fields its persisted operation calls.
type routeGuard struct {
	declared *rest.Guard
	fields   ast.DirectiveList
	text     string
}

func (g routeGuard) expect(p principal) outcome {
	if g.declared != nil {
		return expectRoute(*g.declared, p)
	}
	return expectField(g.fields, p)
}

// guardOfRoute reads a route's guard; ok is false when it declares none.
func guardOfRoute(t *testing.T, schema *ast.Schema, docs rest.Documents, r rest.Route) (routeGuard, bool) {
	t.Helper()
	if r.Handler != nil {
		if r.Guard.Public == "" && len(r.Guard.Kinds) == 0 && !r.Guard.Delegated {
			return routeGuard{}, false
		}
		g := r.Guard
		return routeGuard{declared: &g, text: fmt.Sprintf("%+v", g)}, true
	}
	doc, errs := gqlparser.LoadQuery(schema, docs[r.Operation])
	if errs != nil {
		t.Fatalf("%s %s: operation %s: %v", r.Method, r.Path, r.Operation, errs)
	}
	var g routeGuard
	var names []string
	for _, op := range doc.Operations {
		for _, sel := range op.SelectionSet {
			if f, ok := sel.(*ast.Field); ok && f.Definition != nil {
				names = append(names, f.Name)
				if len(guardsOf(f.Definition)) == 0 {
					return routeGuard{}, false
				}
			}
		}
		g.fields = append(g.fields, selectedGuards(op.SelectionSet, doc.Fragments, 0)...)
	}
	g.text = strings.Join(names, ", ") + ": " + directivesText(g.fields)
	return g, len(g.fields) > 0
}

// selectedGuards collects the guard directives of every field an operation selects, in
// document order: nested fields may narrow the root's guard (the portal's billing data).
func selectedGuards(set ast.SelectionSet, frags ast.FragmentDefinitionList, depth int) ast.DirectiveList {
	var out ast.DirectiveList
	if depth > 16 {
		return out
	}
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Definition != nil {
				out = append(out, guardsOf(s.Definition)...)
			}
			out = append(out, selectedGuards(s.SelectionSet, frags, depth+1)...)
		case *ast.InlineFragment:
			out = append(out, selectedGuards(s.SelectionSet, frags, depth+1)...)
		case *ast.FragmentSpread:
			if f := frags.ForName(s.Name); f != nil {
				out = append(out, selectedGuards(f.SelectionSet, frags, depth+1)...)
			}
		}
	}
	return out
}

// v1Answer classifies a /v1 response by upstream's refusal shapes.
func v1Answer(rec *httptest.ResponseRecorder) (outcome, string) {
	name := resttest.ErrorName(rec.Body.Bytes())
	switch {
	case rec.Code >= 500:
		return "", fmt.Sprintf("HTTP %d: %s", rec.Code, rec.Body)
	case rec.Code == http.StatusUnauthorized && name == "invalid_token":
		return invalidToken, ""
	case rec.Code == http.StatusUnauthorized && name == "Unauthorized":
		return unauthenticated, ""
	case rec.Code == http.StatusForbidden && (name == "insufficient_scope" || name == "NotPermitted"):
		return forbidden, ""
	}
	return admitted, ""
}

// requestFor builds a call of the route with placeholder path parameters and an empty
// body: the guard decides before anything is validated, as upstream authenticates first.
func requestFor(r rest.Route, token string) *http.Request {
	path := pathParam.ReplaceAllString(r.Path, "0f8d6a51-3c1e-4b7a-9d2e-5a6b7c8d9e0f")
	body := ""
	if r.Body != nil {
		body = "{}"
	}
	req := resttest.NewRequest(r.Method, path, body)
	if r.Handler != nil && r.Method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// TestEveryRouteDeclaresAGuard: each /v1 route has a guard the suite can read, either its
// own or its operation's directives.
func TestEveryRouteDeclaresAGuard(t *testing.T) {
	w := newWorld(t)
	docs := mustDocuments(t)
	for _, r := range w.routes {
		if _, ok := guardOfRoute(t, w.Resolver.Schema().Schema(), docs, r); !ok {
			t.Errorf("%s %s declares no guard", r.Method, r.Path)
		}
	}
}

// TestV1GuardMatrix calls every /v1 route as every principal, checks the answer against the
// route's guard and every answer against the published contract.
func TestV1GuardMatrix(t *testing.T) {
	w := newWorld(t)
	schema := w.Resolver.Schema().Schema()
	docs := mustDocuments(t)
	for _, r := range w.routes {
		g, ok := guardOfRoute(t, schema, docs, r)
		if !ok {
			t.Errorf("%s %s declares no guard", r.Method, r.Path)
			continue
		}
		t.Run(r.Method+" "+r.Path, func(t *testing.T) {
			for _, p := range w.principals {
				req := requestFor(r, p.token)
				switch {
				case p.browserOf != uuid.Nil && r.Guard.Browser:
					w.signIn(t, req, p.browserOf)
				case p.browserOf != uuid.Nil:
					p = principal{name: p.name, kind: auth.KindAnonymous}
				}
				rec := w.serve(t, r, req)
				got, fault := v1Answer(rec)
				if fault != "" {
					t.Errorf("as %s: %s", p.name, fault)
					continue
				}
				if want := g.expect(p); got != want {
					t.Errorf("as %s: %s (%d %s), want %s (guard %s)", p.name, got, rec.Code, rec.Body, want, g.text)
				}
			}
		})
	}
}

// serve answers req through the world. /v1 answers are held to the published contract; the
// sign-in endpoints beside /v1 are Till's own and have none.
func (w *world) serve(t *testing.T, r rest.Route, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	if strings.HasPrefix(r.Path, "/v1/") {
		return resttest.Serve(t, w.h, req)
	}
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	return rec
}

func mustDocuments(t *testing.T) rest.Documents {
	t.Helper()
	docs, err := rest.LoadDocuments(rest.Operations())
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// directivesText prints guard directives as the schema writes them.
func directivesText(dirs ast.DirectiveList) string {
	var parts []string
	for _, d := range dirs {
		s := "@" + d.Name
		if len(d.Arguments) > 0 {
			var args []string
			for _, a := range d.Arguments {
				args = append(args, a.Name+": "+a.Value.String())
			}
			s += "(" + strings.Join(args, ", ") + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}
