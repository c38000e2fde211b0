package rest_test

import (
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"till/rest"
	"till/rest/fastapi"
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

// fragmentFiles is a folder of operations sharing fragments: GetThing spreads
// ThingShape, which spreads OwnerShape; GetLabel spreads LabelShape only.
var fragmentFiles = map[string]string{
	"GetThing.graphql":        `query GetThing($id: ID!) { thing(id: $id) { ...ThingShape } }`,
	"GetLabel.graphql":        `query GetLabel($id: ID!) { thing(id: $id) { id ...LabelShape } }`,
	"fragments/thing.graphql": "fragment ThingShape on Thing { id owner { ...OwnerShape } }\nfragment OwnerShape on Owner { name }",
	"fragments/label.graphql": `fragment LabelShape on Thing { label }`,
}

func TestLoadDocumentsAppendsTheFragmentsADocumentUses(t *testing.T) {
	docs, err := rest.LoadDocuments(docFS(fragmentFiles))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 {
		t.Fatalf("LoadDocuments = %d documents, want 2 (fragments/ holds no operation)", len(docs))
	}
	for name, want := range map[string]struct{ has, hasNot []string }{
		"GetThing": {has: []string{"fragment ThingShape on Thing", "fragment OwnerShape on Owner"}, hasNot: []string{"LabelShape"}},
		"GetLabel": {has: []string{"fragment LabelShape on Thing"}, hasNot: []string{"ThingShape", "OwnerShape"}},
	} {
		src := docs[name]
		if !strings.HasPrefix(src, fragmentFiles[name+".graphql"]) {
			t.Errorf("%s does not start with its file:\n%s", name, src)
		}
		for _, s := range want.has {
			if !strings.Contains(src, s) {
				t.Errorf("%s lacks %q:\n%s", name, s, src)
			}
		}
		for _, s := range want.hasNot {
			if strings.Contains(src, s) {
				t.Errorf("%s holds the fragment it does not use, %s:\n%s", name, s, src)
			}
		}
	}
	// Each document is complete on its own: GraphQL rejects unknown and unused fragments.
	schema := gqlparser.MustLoadSchema(&ast.Source{Name: "schema.graphqls", Input: `
type Owner { name: String }
type Thing { id: ID! label: String owner: Owner }
type Query { thing(id: ID!): Thing }`})
	if err := docs.Validate(schema); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestLoadDocumentsRefusesBrokenFragments(t *testing.T) {
	with := func(changes map[string]string) map[string]string {
		files := map[string]string{}
		for name, src := range fragmentFiles {
			files[name] = src
		}
		for name, src := range changes {
			if src == "" {
				delete(files, name)
			} else {
				files[name] = src
			}
		}
		return files
	}
	tests := []struct {
		name    string
		files   map[string]string
		wantErr string
	}{
		{"an unknown fragment in a document", with(map[string]string{
			"GetThing.graphql": `query GetThing($id: ID!) { thing(id: $id) { ...ThingShape ...Missing } }`}),
			`GetThing.graphql: unknown fragment "Missing"`},
		{"an unknown fragment in a shared fragment", with(map[string]string{
			"fragments/label.graphql": `fragment LabelShape on Thing { label ...Missing }`}),
			`fragments/label.graphql: fragment LabelShape spreads unknown fragment "Missing"`},
		{"a shared fragment no operation uses", with(map[string]string{"GetLabel.graphql": ""}),
			"fragments/label.graphql: fragment LabelShape is not used by any operation"},
		{"a fragment defined in two files", with(map[string]string{
			"fragments/more.graphql": `fragment LabelShape on Thing { id }`}),
			"fragment LabelShape is already defined in fragments/label.graphql"},
		{"a document redefining a shared fragment", with(map[string]string{
			"GetLabel.graphql": `query GetLabel($id: ID!) { thing(id: $id) { ...LabelShape } } fragment LabelShape on Thing { id }`}),
			"GetLabel.graphql: fragment LabelShape is already defined in fragments/label.graphql"},
		{"an operation among the fragments", with(map[string]string{
			"fragments/label.graphql": `fragment LabelShape on Thing { label } query Q { thing(id: "1") { id } }`}),
			"fragments/label.graphql: holds an operation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rest.LoadDocuments(docFS(tt.files))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error = %v, want it to mention %q", err, tt.wantErr)
			}
		})
	}
}

// Each /v1 shape is written once, in fragments/ when two documents render it: no run of
// sixLines selection lines (blank lines, comments and lone braces aside) stands in two
// places of rest/operations.
func TestOperationsWriteEachShapeOnce(t *testing.T) {
	const sixLines = 6
	// Runs allowed to repeat, and why.
	exemptFiles := map[string]string{
		"GetMetrics.graphql": "periods are MetricsPeriod and totals MetricsTotals: a fragment on one cannot be spread in the other",
	}
	exemptPairs := map[[2]string]string{
		{"fragments/checkout_product.graphql", "fragments/product.graphql"}: "CheckoutProduct is not Product: a fragment on one cannot be spread in the other",
		{"fragments/benefit.graphql", "fragments/checkout_product.graphql"}: "BenefitPublic is not Benefit: a fragment on one cannot be spread in the other",
	}
	type place struct {
		file  string
		index int // of the run's first line among the file's significant lines
		line  int
	}
	first := map[string]place{}
	err := fs.WalkDir(rest.Operations(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(name) != ".graphql" || exemptFiles[name] != "" {
			return err
		}
		src, err := fs.ReadFile(rest.Operations(), name)
		if err != nil {
			return err
		}
		var lines []string
		var numbers []int
		for i, line := range strings.Split(string(src), "\n") {
			line = strings.Join(strings.Fields(line), " ")
			if line == "" || strings.HasPrefix(line, "#") || strings.Trim(line, "{}()[]") == "" {
				continue
			}
			lines, numbers = append(lines, line), append(numbers, i+1)
		}
		for i := 0; i+sixLines <= len(lines); i++ {
			run := strings.Join(lines[i:i+sixLines], "\n")
			prev, seen := first[run]
			if !seen {
				first[run] = place{name, i, numbers[i]}
				continue
			}
			pair := []string{prev.file, name}
			sort.Strings(pair)
			if (prev.file == name && i-prev.index < sixLines) || exemptPairs[[2]string{pair[0], pair[1]}] != "" {
				continue
			}
			t.Errorf("%s:%d repeats %s:%d; spread a fragment from fragments/ instead:\n%s",
				name, numbers[i], prev.file, prev.line, run)
			i += sixLines - 1 // one report a run
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
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
			Params: []fastapi.Param{rest.Page(), rest.PathUUID4("id", "")}, Field: "thing"}
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
			r.Params = []fastapi.Param{rest.Page(), rest.Query("id", "", fastapi.UUID4{})}
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
