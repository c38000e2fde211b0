package reqinfo

import (
	"context"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// maxNameLen bounds the operation name kept for the log: clients choose it freely.
const maxNameLen = 100

// GraphQL is a gqlgen handler extension that records the operation into the request's Info.
// Use it before the extensions that may refuse an operation (depth, cost), so a refused
// operation is still named in the log.
type GraphQL struct{}

var (
	_ graphql.HandlerExtension          = GraphQL{}
	_ graphql.OperationParameterMutator = GraphQL{}
	_ graphql.OperationContextMutator   = GraphQL{}
)

// ExtensionName implements graphql.HandlerExtension.
func (GraphQL) ExtensionName() string { return "RequestInfo" }

// Validate implements graphql.HandlerExtension.
func (GraphQL) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters records the operation's name before parsing, so a document
// that does not parse or validate is still named.
func (GraphQL) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	From(ctx).SetOperation(Operation{Name: operationName(p.OperationName)})
	return nil
}

// MutateOperationContext records the type and root fields of the validated operation.
func (GraphQL) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	From(ctx).SetOperation(Operation{Name: operationName(oc.Operation.Name), Type: string(oc.Operation.Operation),
		RootFields: rootFields(oc.Operation.SelectionSet, oc.Doc.Fragments)})
	return nil
}

func operationName(name string) string {
	if name == "" {
		return "anonymous"
	}
	if len(name) > maxNameLen {
		return name[:maxNameLen]
	}
	return name
}

// rootFields lists the schema field names selected at the root, through fragments, sorted
// and unique. Names, not aliases: a validated document can only name fields of the schema.
func rootFields(set ast.SelectionSet, frags ast.FragmentDefinitionList) []string {
	var names []string
	var walk func(ast.SelectionSet, int)
	walk = func(set ast.SelectionSet, depth int) {
		if depth > 16 { // fragments cannot cycle in a valid document; this only bounds the walk
			return
		}
		for _, s := range set {
			switch s := s.(type) {
			case *ast.Field:
				names = append(names, s.Name)
			case *ast.InlineFragment:
				walk(s.SelectionSet, depth+1)
			case *ast.FragmentSpread:
				if f := frags.ForName(s.Name); f != nil {
					walk(f.SelectionSet, depth+1)
				}
			}
		}
	}
	walk(set, 0)
	slices.Sort(names)
	return slices.Compact(names)
}
