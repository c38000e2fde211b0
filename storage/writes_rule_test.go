package storage_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// stringKeyedMaps are the exported string-keyed map types storage may declare, and why
// their keys are not column names.
var stringKeyedMaps = map[string]string{
	"JSONMap":    "a jsonb value: its keys are the document's",
	"Prefetched": "what a read returns: relation names to their JSON",
}

// TestStorageTakesNoColumnNamesFromCallers keeps the column names of every write inside
// storage: a use case changes rows through the fields of an update or write struct (see
// Omittable), never by naming columns. A string-keyed map accepted from callers is how
// column names would leak out again (the former Patch type was one), so none may be
// declared, taken as an argument or carried by an update or write struct.
func TestStorageTakesNoColumnNamesFromCallers(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatal("no source files of storage found")
	}
	t.Run("storage declares no exported string-keyed map type but the allowed ones", func(t *testing.T) {
		eachDecl(files, func(n ast.Node) {
			if ts, ok := n.(*ast.TypeSpec); ok && ts.Name.IsExported() && isStringKeyedMap(ts.Type) {
				if _, allowed := stringKeyedMaps[ts.Name.Name]; !allowed {
					t.Errorf("%s: %s is a string-keyed map: callers could name columns with it", fset.Position(ts.Pos()), ts.Name.Name)
				}
			}
		})
	})
	t.Run("no exported function of storage takes a string-keyed map", func(t *testing.T) {
		eachDecl(files, func(n ast.Node) {
			fd, ok := n.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() {
				return
			}
			for _, p := range fd.Type.Params.List {
				if isStringKeyedMap(p.Type) {
					t.Errorf("%s: %s takes a string-keyed map", fset.Position(p.Pos()), fd.Name.Name)
				}
			}
		})
	})
	t.Run("no update or write struct carries a string-keyed map", func(t *testing.T) {
		eachDecl(files, func(n ast.Node) {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !(strings.HasSuffix(ts.Name.Name, "Update") || strings.HasSuffix(ts.Name.Name, "Write")) {
				return
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return
			}
			for _, f := range st.Fields.List {
				if isStringKeyedMap(f.Type) {
					t.Errorf("%s: a field of %s is a string-keyed map", fset.Position(f.Pos()), ts.Name.Name)
				}
			}
		})
	})
}

// eachDecl calls fn on every top-level declaration of files and the type specs inside them.
func eachDecl(files []*ast.File, fn func(ast.Node)) {
	for _, f := range files {
		for _, d := range f.Decls {
			fn(d)
			if gd, ok := d.(*ast.GenDecl); ok {
				for _, s := range gd.Specs {
					fn(s)
				}
			}
		}
	}
}

// isStringKeyedMap reports a map type literal keyed by string, however deep in pointers,
// slices or type arguments (Omittable[map[string]any] included), but not inside the fields
// of a struct type: a filter's metadata map is a struct's own business.
func isStringKeyedMap(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if _, ok := n.(*ast.StructType); ok {
			return false
		}
		if m, ok := n.(*ast.MapType); ok {
			if id, ok := m.Key.(*ast.Ident); ok && id.Name == "string" {
				found = true
			}
		}
		return !found
	})
	return found
}
