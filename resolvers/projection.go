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

// itemPlan is what a paginated field being resolved needs of its items' records, for
// storage.Window: when every field selected under `items` is a plain field of the record
// type T (graph.PlainFields; a getter method's columns are declared by the record,
// storage.ColumnsOfGetter), the columns of those fields; nil (every column) when anything
// else is selected, since a resolver, a relation or a guard may read any field of the
// record. Such items are written by the executor's plain writers, which read exactly those
// fields. When, besides, `items` is selected once, T can carry its JSON
// (storage.Rendered) and PostgreSQL can write each field as its marshaller does, render
// lists the keys for PostgreSQL to write each item's JSON with.
func itemPlan[T any](ctx context.Context) (cols []string, render []storage.RenderField) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil || fc.Field.Definition == nil || !graphql.HasOperationContext(ctx) {
		return nil, nil
	}
	oc := graphql.GetOperationContext(ctx)
	record := reflect.TypeFor[T]()
	_, renders := any(*new(T)).(interface{ RenderedJSON() []byte })
	cols = []string{}
	page := fc.Field.Definition.Type.Name()
	if !conditionsOnly(oc, fc.Field.Selections, page) {
		return nil, nil
	}
	itemFields := 0
	for _, items := range graphql.CollectFields(oc, fc.Field.Selections, []string{page}) {
		if items.Name != "items" {
			continue
		}
		itemFields++
		typ := items.Definition.Type.Name()
		plain, ok := graph.PlainFields[typ]
		if !ok || plain.GoType != record.String() || !conditionsOnly(oc, items.Selections, typ) {
			return nil, nil
		}
		for _, f := range graphql.CollectFields(oc, items.Selections, []string{typ}) {
			if f.Name == "__typename" {
				render = append(render, storage.RenderField{Key: f.Alias, Literal: typ})
				continue
			}
			if method, ok := plain.Getters[f.Name]; ok {
				read, ok := storage.ColumnsOfGetter(record, method)
				if !ok {
					return nil, nil
				}
				for _, col := range read {
					if !slices.Contains(cols, col) {
						cols = append(cols, col)
					}
				}
				renders = false // PostgreSQL knows no getter
				continue
			}
			goField, ok := plain.Fields[f.Name]
			if !ok {
				return nil, nil
			}
			col, ok := storage.ColumnOf(record, goField)
			if !ok {
				return nil, nil
			}
			if !slices.Contains(cols, col) {
				cols = append(cols, col)
			}
			kind := plain.Kinds[f.Name]
			if kind == "" {
				renders = false
			}
			render = append(render, storage.RenderField{Key: f.Alias, Column: col, Kind: kind})
		}
	}
	if !renders || itemFields != 1 {
		return cols, nil
	}
	return cols, render
}

// selectionWindow narrows a root list's window w to what its items' selection needs
// (itemPlan). A root list is resolved once per place in the document, so the plan is not
// shared as windowsOf shares it between the parents of a level.
func selectionWindow[T any](ctx context.Context, w storage.Window) storage.Window {
	w.Columns, w.Render = itemPlan[*T](ctx)
	return w
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
