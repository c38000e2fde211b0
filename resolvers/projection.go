package resolvers

import (
	"context"
	"reflect"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"till/graph"
	"till/storage"
)

// itemColumns is what a paginated field being resolved needs of its items' records, for
// storage.Window.Columns: when every field selected under `items` is a plain field of the
// record type T (graph.PlainFields), the columns of those fields; nil (every column) when
// anything else is selected, since a resolver, a relation or a guard may read any field of
// the record. Such items are written by the executor's plain writers, which read exactly
// those fields.
func itemColumns[T any](ctx context.Context) []string {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil || fc.Field.Definition == nil || !graphql.HasOperationContext(ctx) {
		return nil
	}
	oc := graphql.GetOperationContext(ctx)
	record := reflect.TypeFor[T]()
	cols := []string{}
	page := fc.Field.Definition.Type.Name()
	if !conditionsOnly(oc, fc.Field.Selections, page) {
		return nil
	}
	for _, items := range graphql.CollectFields(oc, fc.Field.Selections, []string{page}) {
		if items.Name != "items" {
			continue
		}
		typ := items.Definition.Type.Name()
		plain, ok := graph.PlainFields[typ]
		if !ok || plain.GoType != record.String() || !conditionsOnly(oc, items.Selections, typ) {
			return nil
		}
		for _, f := range graphql.CollectFields(oc, items.Selections, []string{typ}) {
			if f.Name == "__typename" {
				continue
			}
			goField, ok := plain.Fields[f.Name]
			if !ok {
				return nil
			}
			col, ok := storage.ColumnOf(record, goField)
			if !ok {
				return nil
			}
			if !slices.Contains(cols, col) {
				cols = append(cols, col)
			}
		}
	}
	return cols
}

// conditionsOnly reports whether every fragment in sel (spread or inline, at any depth of
// fragments) is on typ itself or has no type condition. CollectFields is asked with typ
// alone, so a fragment on an interface of typ would be dropped from what it collects.
func conditionsOnly(oc *graphql.OperationContext, sel ast.SelectionSet, typ string) bool {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.InlineFragment:
			if s.TypeCondition != "" && s.TypeCondition != typ || !conditionsOnly(oc, s.SelectionSet, typ) {
				return false
			}
		case *ast.FragmentSpread:
			f := oc.Doc.Fragments.ForName(s.Name)
			if f == nil || f.TypeCondition != typ || !conditionsOnly(oc, f.SelectionSet, typ) {
				return false
			}
		}
	}
	return true
}
