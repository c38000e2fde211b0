package rest_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"till/rest"
)

func docFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, src := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(src)}
	}
	return fsys
}

func TestLoadDocumentsEnforcesOneOperationPerFile(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		wantErr string
	}{
		{"a file named like its operation loads", map[string]string{
			"GetThing.graphql": `query GetThing($id: ID!) { thing(id: $id) { id } }`, "README.md": "ignored"}, ""},
		{"a misnamed operation is refused", map[string]string{
			"GetThing.graphql": `query Other { thing(id: "1") { id } }`}, `named "Other", want "GetThing"`},
		{"two operations in a file are refused", map[string]string{
			"GetThing.graphql": `query GetThing { a: thing(id: "1") { id } } query B { thing(id: "2") { id } }`}, "2 operations"},
		{"a syntax error is refused", map[string]string{
			"GetThing.graphql": `query GetThing {`}, "GetThing.graphql"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := rest.LoadDocuments(docFS(tt.files))
			if tt.wantErr == "" {
				if err != nil || len(docs) != 1 {
					t.Fatalf("LoadDocuments = %v, %v", docs, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error = %v, want it to mention %q", err, tt.wantErr)
			}
		})
	}
}

func TestDocumentsValidateAgainstTheSchema(t *testing.T) {
	schema := gqlparser.MustLoadSchema(&ast.Source{Name: "schema.graphqls", Input: `
type Thing { id: ID! }
type Query { thing(id: ID!): Thing }`})
	tests := []struct {
		name, src string
		ok        bool
	}{
		{"a document that fits the schema passes", `query GetThing($id: ID!) { thing(id: $id) { id } }`, true},
		{"an unknown field fails", `query GetThing($id: ID!) { thing(id: $id) { name } }`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := rest.LoadDocuments(docFS(map[string]string{"GetThing.graphql": tt.src}))
			if err != nil {
				t.Fatal(err)
			}
			if err := docs.Validate(schema); (err == nil) != tt.ok {
				t.Errorf("Validate = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// The persisted documents must keep matching the real schema; this is the
// CI twin of the startup check.
func TestEmbeddedDocumentsMatchTheSchema(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "schema", "*.graphqls"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schema files: %v", err)
	}
	var sources []*ast.Source
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, &ast.Source{Name: f, Input: string(b)})
	}
	schema, err := gqlparser.LoadSchema(sources...)
	if err != nil {
		t.Fatalf("load schema: %v", err)
	}
	if err := rest.Validate(schema); err != nil {
		t.Errorf("the embedded documents do not validate:\n%v", err)
	}
}

func TestNewRouterRejectsBrokenRows(t *testing.T) {
	files := map[string]string{
		"GetThing.graphql": `query GetThing($id: ID!, $page: Int) { thing: thing(id: $id) { id } }`,
	}
	row := func(mutate func(*rest.Route)) []rest.Route {
		r := rest.Route{Method: http.MethodGet, Path: "/v1/things/{id}", Operation: "GetThing",
			Params: []rest.Param{rest.Page(), rest.PathUUID4("id", "")}, Field: "thing"}
		if mutate != nil {
			mutate(&r)
		}
		return []rest.Route{r}
	}
	tests := []struct {
		name    string
		routes  []rest.Route
		wantErr string
	}{
		{"a consistent row is accepted", row(nil), ""},
		{"an unknown document", row(func(r *rest.Route) { r.Operation = "Missing" }), "no document Missing.graphql"},
		{"an undeclared variable", row(func(r *rest.Route) { r.Params = append(r.Params, rest.Limit()) }), "does not declare $limit"},
		{"a required variable fed by an optional query parameter", row(func(r *rest.Route) {
			r.Path = "/v1/things"
			r.Params = []rest.Param{rest.Page(), rest.Query("id", "", rest.UUID4{})}
		}), "required $id"},
		{"a path parameter without a Param", row(func(r *rest.Route) { r.Path = "/v1/things/{id}/{other}" }), "{other} has no Param"},
		{"a response field the operation does not select", row(func(r *rest.Route) { r.Field = "things" }), `does not select "things"`},
		{"an unsupported success status", row(func(r *rest.Route) { r.Status = http.StatusFound }), "unsupported success status 302"},
		{"a duplicate route", append(row(nil), row(nil)...), "duplicate route"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rest.NewRouter(rest.Config{Executor: &fakeExecutor{}, Routes: tt.routes, Documents: docFS(files)})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("NewRouter: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error = %v, want it to mention %q", err, tt.wantErr)
			}
		})
	}
}
