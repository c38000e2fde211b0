package resolvers_test

import (
	"sort"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"till/resolvers"
)

// tenancyCoverage records the root fields the tenancy tests called with another
// organization's id, so a whole run can tell which id-taking fields none of them tried.
var tenancyCoverage = struct {
	sync.Mutex
	fields map[string]bool
}{fields: map[string]bool{}}

// coverTenancy marks the root fields of a document a tenancy case ran.
func coverTenancy(doc string) {
	q, err := parser.ParseQuery(&ast.Source{Input: doc})
	if err != nil {
		return
	}
	tenancyCoverage.Lock()
	defer tenancyCoverage.Unlock()
	for _, op := range q.Operations {
		for _, sel := range op.SelectionSet {
			if f, ok := sel.(*ast.Field); ok {
				tenancyCoverage.fields[f.Name] = true
			}
		}
	}
}

// uncoveredTenancyFields lists, sorted, the root fields that name an object by a required id
// (an id argument, or an input with one) and that no tenancy case called. Public fields are
// left out: they act for no organization.
func uncoveredTenancyFields() []string {
	schema := resolvers.New(resolvers.Deps{}).Schema().Schema()
	tenancyCoverage.Lock()
	defer tenancyCoverage.Unlock()
	var missing []string
	for _, root := range []*ast.Definition{schema.Query, schema.Mutation} {
		for _, f := range root.Fields {
			if takesID(schema, f) && f.Directives.ForName("public") == nil && !tenancyCoverage.fields[f.Name] {
				missing = append(missing, f.Name)
			}
		}
	}
	sort.Strings(missing)
	return missing
}

// takesID reports whether a field names its object by a required id.
func takesID(schema *ast.Schema, f *ast.FieldDefinition) bool {
	if a := f.Arguments.ForName("id"); a != nil && a.Type.NonNull {
		return true
	}
	if in := f.Arguments.ForName("input"); in != nil {
		if def := schema.Types[in.Type.Name()]; def != nil {
			if id := def.Fields.ForName("id"); id != nil && id.Type.NonNull {
				return true
			}
		}
	}
	return false
}
