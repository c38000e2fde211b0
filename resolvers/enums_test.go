package resolvers_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"till/resolvers"
)

// enumFiles are where the Go types of GraphQL enums live: storage for those records hold,
// the generated models for the others.
var enumFiles = []string{"../storage/enums.go", "../graph/model/models_gen.go"}

// goEnum is a named string type and its constants, by value.
type goEnum struct {
	file   string
	values map[string]string
}

// goEnums reads the named string types of files and the constants declared with them.
func goEnums(tb testing.TB, files ...string) map[string]goEnum {
	tb.Helper()
	out := map[string]goEnum{}
	for _, path := range files {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			tb.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if id, ok := s.Type.(*ast.Ident); ok && id.Name == "string" {
						if prev, dup := out[s.Name.Name]; dup {
							tb.Errorf("%s is declared in %s and %s", s.Name.Name, prev.file, path)
						}
						out[s.Name.Name] = goEnum{file: path, values: map[string]string{}}
					}
				case *ast.ValueSpec:
					typ, ok := s.Type.(*ast.Ident)
					if g.Tok != token.CONST || !ok || len(s.Values) != len(s.Names) {
						continue
					}
					for i, v := range s.Values {
						if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							val, _ := strconv.Unquote(lit.Value)
							if e, ok := out[typ.Name]; ok {
								e.values[val] = s.Names[i].Name
							}
						}
					}
				}
			}
		}
	}
	return out
}

// Every GraphQL enum is one named Go string type with one constant per value, named after
// the type and the value, so Go code spells enum values through constants that cannot drift
// from the schema; and the generated executor reads and writes each through that type,
// never as a plain string.
func TestEveryEnumIsANamedGoTypeWithTheSchemaValues(t *testing.T) {
	schema := resolvers.New(resolvers.Deps{}).Schema().Schema()
	enums := goEnums(t, enumFiles...)
	generated, err := filepath.Glob("../graph/*.generated.go")
	if err != nil || len(generated) == 0 {
		t.Fatalf("no generated executor: %v", err)
	}
	var executor strings.Builder
	for _, f := range generated {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		executor.Write(b)
	}
	checked := 0
	for _, name := range slices.Sorted(maps.Keys(schema.Types)) {
		def := schema.Types[name]
		if def.Kind != "ENUM" || strings.HasPrefix(name, "__") {
			continue
		}
		checked++
		e, ok := enums[name]
		if !ok {
			t.Errorf("enum %s has no named Go type in %v", name, enumFiles)
			continue
		}
		want := map[string]string{}
		for _, v := range def.EnumValues {
			want[v.Name] = name + pascal(v.Name)
		}
		if e.file == enumFiles[0] {
			if diff := cmp.Diff(want, e.values); diff != "" {
				t.Errorf("constants of %s (value: name) differ from the schema (-want +got):\n%s", name, diff)
			}
		} else if got := slices.Sorted(maps.Keys(e.values)); !slices.Equal(got, slices.Sorted(maps.Keys(want))) {
			t.Errorf("generated constants of %s have values %v, the schema %v", name, got, slices.Sorted(maps.Keys(want)))
		}
		for _, plain := range []string{"ec.marshalN" + name + "2string(", "ec.unmarshalN" + name + "2string("} {
			if strings.Contains(executor.String(), plain) {
				t.Errorf("the executor handles %s as a plain string (%s…): bind it to its Go type", name, plain)
			}
		}
	}
	if checked < 30 {
		t.Fatalf("checked %d enums; the schema has more", checked)
	}
}

// pascal spells a snake_case enum value as the tail of its constant's name.
func pascal(v string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(v, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}
