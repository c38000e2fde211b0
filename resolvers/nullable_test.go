package resolvers_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"till/resolvers"
)

// guardDirectives are the schema directives that may refuse a principal a field.
var guardDirectives = []string{"hasScope", "portal", "billing", "public", "firstParty", "relation", "teamManager"}

// otherFieldDirectives are the field directives that refuse no one.
var otherFieldDirectives = []string{"goField", "listSize", "deprecated"}

// TestEveryGuardedFieldIsNullable walks the executable schema: a field that carries a guard
// directive must be nullable, so a refusal nulls that field alone and the rest of the
// response survives, instead of the null spreading to the nearest nullable parent (for a
// root field, all of data). A new field directive must be classified here first, so a new
// guard cannot slip past.
func TestEveryGuardedFieldIsNullable(t *testing.T) {
	t.Parallel()
	schema := resolvers.New(resolvers.Deps{}).Schema().Schema()
	for name, d := range schema.Directives {
		if d.Position == nil || d.Position.Src.BuiltIn || !slices.Contains(d.Locations, ast.LocationFieldDefinition) {
			continue
		}
		if !slices.Contains(guardDirectives, name) && !slices.Contains(otherFieldDirectives, name) {
			t.Errorf("field directive @%s is neither a guard nor known to refuse no one; classify it in this test", name)
		}
	}
	guarded := 0
	for _, typ := range schema.Types {
		if strings.HasPrefix(typ.Name, "__") {
			continue
		}
		for _, f := range typ.Fields {
			guard := ""
			for _, d := range f.Directives {
				if slices.Contains(guardDirectives, d.Name) {
					guard = d.Name
				}
			}
			if guard == "" {
				continue
			}
			guarded++
			if f.Type.NonNull {
				t.Errorf("%s.%s: %s carries @%s but is non-null; drop the outer ! so a refusal nulls only this field",
					typ.Name, f.Name, f.Type, guard)
			}
		}
	}
	if guarded < 100 {
		t.Errorf("found only %d guarded fields; is the schema loaded with its directives?", guarded)
	}
}
