package gqlexec

import (
	"context"
	"sync"
	"unsafe"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// FieldsMemo keeps what graphql.CollectFields finds for a selection set and a type across
// requests. gqlgen keeps it for one request only, yet a dashboard sends the same documents
// again and again, and the handler's query cache hands each the same parsed document: the
// fields of an object are then the same every time unless a directive (@skip, @include,
// @defer) makes them depend on the variables. Collecting them was a tenth of the server's
// CPU on an order page.
//
// An entry holds its selection set, so the document it belongs to stays alive while the
// entry does and no other selection set can take its address. The memo holds at most limit
// entries and starts over when full.
type FieldsMemo struct {
	limit int

	mu      sync.RWMutex
	entries map[fieldsKey]fieldsEntry
}

// fieldsKey names a selection set and a type by where they are stored: the selection set's
// elements (documents are never changed once parsed) and the generated executor's list of
// the type's names (a package-level variable per type).
type fieldsKey struct {
	sel        *ast.Selection
	n          int
	satisfies  *string
	nSatisfies int
}

type fieldsEntry struct {
	sel    ast.SelectionSet
	fields []graphql.CollectedField // nil when the fields depend on the variables
}

// NewFieldsMemo returns an empty memo of at most limit entries.
func NewFieldsMemo(limit int) *FieldsMemo {
	return &FieldsMemo{limit: limit, entries: map[fieldsKey]fieldsEntry{}}
}

type fieldsMemoKey struct{}

// ExtensionName implements graphql.HandlerExtension: a handler or executor that uses m
// hands it to each operation's CollectFields.
func (*FieldsMemo) ExtensionName() string { return "FieldsMemo" }

// Validate implements graphql.HandlerExtension.
func (*FieldsMemo) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation implements graphql.OperationInterceptor.
func (m *FieldsMemo) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	return next(context.WithValue(ctx, fieldsMemoKey{}, m))
}

// CollectFields is graphql.CollectFields, answered from the memo ctx carries when sel's
// fields do not depend on the variables. The generated executor calls it (see the rewrite
// command); callers must not change the slice it returns, which other requests share.
func CollectFields(ctx context.Context, oc *graphql.OperationContext, sel ast.SelectionSet, satisfies []string) []graphql.CollectedField {
	m, _ := ctx.Value(fieldsMemoKey{}).(*FieldsMemo)
	if m == nil || len(sel) == 0 || len(satisfies) == 0 {
		return graphql.CollectFields(oc, sel, satisfies)
	}
	key := fieldsKey{sel: unsafe.SliceData(sel), n: len(sel), satisfies: unsafe.SliceData(satisfies), nSatisfies: len(satisfies)}
	m.mu.RLock()
	e, found := m.entries[key]
	m.mu.RUnlock()
	if found {
		if e.fields == nil {
			return graphql.CollectFields(oc, sel, satisfies)
		}
		return e.fields
	}
	var fields []graphql.CollectedField
	if static(oc, sel) {
		fields = graphql.CollectFields(oc, sel, satisfies)
	}
	m.mu.Lock()
	if len(m.entries) >= m.limit {
		clear(m.entries)
	}
	m.entries[key] = fieldsEntry{sel: sel, fields: fields}
	m.mu.Unlock()
	if fields == nil {
		return graphql.CollectFields(oc, sel, satisfies)
	}
	return fields
}

// static reports whether collecting sel's fields reads nothing but the document: no field
// or fragment that collecting it reaches carries a directive, and every fragment spread
// names a fragment of the document.
func static(oc *graphql.OperationContext, sel ast.SelectionSet) bool {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if len(s.Directives) > 0 {
				return false
			}
		case *ast.InlineFragment:
			if len(s.Directives) > 0 || !static(oc, s.SelectionSet) {
				return false
			}
		case *ast.FragmentSpread:
			f := oc.Doc.Fragments.ForName(s.Name)
			if len(s.Directives) > 0 || f == nil || len(f.Directives) > 0 || !static(oc, f.SelectionSet) {
				return false
			}
		default:
			return false
		}
	}
	return true
}
