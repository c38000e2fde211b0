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
// lists the keys for PostgreSQL to write each item's JSON with. With nest, a root list's
// items may also show relations PostgreSQL writes inside them (nestedField).
func itemPlan[T any](ctx context.Context, nest bool) (cols []string, render []storage.RenderField) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil || fc.Field.Definition == nil || !graphql.HasOperationContext(ctx) {
		return nil, nil
	}
	_, renders := any(*new(T)).(interface{ RenderedJSON() []byte })
	depth := -1
	if nest {
		depth = 0
	}
	plan := itemsPlan{ctx: ctx, oc: graphql.GetOperationContext(ctx), record: reflect.TypeFor[T](), renders: renders, depth: depth}
	return plan.of(fc.Field.Selections, fc.Field.Definition.Type.Name())
}

// itemsPlan works out the columns and JSON keys of a page's items (itemPlan), for a root
// list or for a relation written inside its parent (depth counts those; -1 writes none).
// own is set when the items are the portal session's customer's own, read from its own
// lists (the portal home, renderedMe): the portal's relation guards then hold for each.
type itemsPlan struct {
	ctx     context.Context
	oc      *graphql.OperationContext
	record  reflect.Type
	renders bool
	depth   int
	own     bool
}

// of plans the items of the page selected by sel, of the page type page.
func (p itemsPlan) of(sel ast.SelectionSet, page string) (cols []string, render []storage.RenderField) {
	cols = []string{}
	if !conditionsOnly(p.oc, sel, page) {
		return nil, nil
	}
	renders := p.renders
	itemFields := 0
	for _, items := range graphql.CollectFields(p.oc, sel, []string{page}) {
		if items.Name != "items" {
			continue
		}
		itemFields++
		c, r, writes, ok := p.object(items.Definition.Type.Name(), items.Selections)
		if !ok {
			return nil, nil
		}
		for _, col := range c {
			if !slices.Contains(cols, col) {
				cols = append(cols, col)
			}
		}
		render = append(render, r...)
		renders = renders && writes
	}
	if !renders || itemFields != 1 {
		if readsRelations(render) { // a relation is read by its resolver, which may read any column
			return nil, nil
		}
		return cols, nil
	}
	return cols, render
}

// object plans the fields sel selects of an object of type typ, whose record is p.record:
// the columns they read and their JSON keys. writes tells whether PostgreSQL can write
// every key; ok is false when a field is neither plain nor a relation PostgreSQL writes.
func (p itemsPlan) object(typ string, sel ast.SelectionSet) (cols []string, render []storage.RenderField, writes, ok bool) {
	plain, known := graph.PlainFields[typ]
	if !known || plain.GoType != p.record.String() || !conditionsOnly(p.oc, sel, typ) {
		return nil, nil, false, false
	}
	writes = true
	read := func(col string) {
		if !slices.Contains(cols, col) {
			cols = append(cols, col)
		}
	}
	for _, f := range graphql.CollectFields(p.oc, sel, []string{typ}) {
		if f.Name == "__typename" {
			render = append(render, storage.RenderField{Key: f.Alias, Literal: typ})
			continue
		}
		if method, isGetter := plain.Getters[f.Name]; isGetter {
			getterCols, declared := storage.ColumnsOfGetter(p.record, method)
			if !declared {
				return nil, nil, false, false
			}
			for _, col := range getterCols {
				read(col)
			}
			if kind, ok := storage.KindOfGetter(p.record, method); ok && len(getterCols) == 1 {
				render = append(render, storage.RenderField{Key: f.Alias, Column: getterCols[0], Kind: kind})
			} else {
				writes = false // PostgreSQL cannot write this getter
			}
			continue
		}
		goField, isPlain := plain.Fields[f.Name]
		if !isPlain {
			field, key, ok := p.relatedField(typ, f)
			if !ok {
				return nil, nil, false, false
			}
			if key != "" {
				read(key)
			}
			render = append(render, field)
			continue
		}
		col, ok := storage.ColumnOf(p.record, goField)
		if !ok {
			return nil, nil, false, false
		}
		read(col)
		kind := plain.Kinds[f.Name]
		if kind == "" {
			writes = false
		}
		render = append(render, storage.RenderField{Key: f.Alias, Column: col, Kind: kind})
	}
	return cols, render, writes, true
}

// relatedField plans a field of typ that is not plain: a paginated relation written inside
// the record (nestedField), a to-one relation (oneField) or an object stored as a JSON
// column (jsonField). key is a column the field reads, if any.
func (p itemsPlan) relatedField(typ string, f graphql.CollectedField) (field storage.RenderField, key string, ok bool) {
	if field, ok = p.nestedField(typ, f); ok {
		return field, "", true
	}
	if field, key, ok = p.oneField(typ, f); ok {
		return field, key, true
	}
	return p.jsonField(f)
}

// readsRelations reports whether render writes a relation inside the record.
func readsRelations(render []storage.RenderField) bool {
	return slices.ContainsFunc(render, func(f storage.RenderField) bool { return f.Nested != nil || f.One != nil })
}

// selectionWindow narrows a root list's window w to what its items' selection needs
// (itemPlan). A root list is resolved once per place in the document, so the plan is not
// shared as windowsOf shares it between the parents of a level.
func selectionWindow[T any](ctx context.Context, w storage.Window) storage.Window {
	w.Columns, w.Render = itemPlan[*T](ctx, true)
	return w
}

// conditionsOnly reports whether every fragment in sel (spread or inline, at any depth of
// fragments) is on typ itself or has no type condition, and none is deferred. CollectFields
// is asked with typ alone, so a fragment on an interface of typ would be dropped from what
// it collects; a deferred fragment is the executor's to leave out.
func conditionsOnly(oc *graphql.OperationContext, sel ast.SelectionSet, typ string) bool {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.InlineFragment:
			if s.TypeCondition != "" && s.TypeCondition != typ || s.Directives.ForName("defer") != nil ||
				!conditionsOnly(oc, s.SelectionSet, typ) {
				return false
			}
		case *ast.FragmentSpread:
			f := oc.Doc.Fragments.ForName(s.Name)
			if f == nil || f.TypeCondition != typ || s.Directives.ForName("defer") != nil ||
				!conditionsOnly(oc, f.SelectionSet, typ) {
				return false
			}
		}
	}
	return true
}
