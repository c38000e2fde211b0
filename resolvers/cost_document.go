package resolvers

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"
	"github.com/vektah/gqlparser/v2/parser"
)

// Limits on a client's GraphQL document, checked before gqlgen validates it. Validation is
// where an unchecked document costs most: OverlappingFieldsCanBeMerged compares every pair
// of fields that share a response name, so a few thousand `__typename` took seconds. Parsing
// is linear, so a document is parsed with a token limit and its shape measured on the AST;
// only a document within every limit reaches validation, and its cost is then bounded.
const (
	// maxQueryBytes caps a POST body, a GET URL and the document itself (an automatic
	// persisted query's text included).
	maxQueryBytes = 64 << 10
	// maxTokens stops the parser, whose cost grows with the tokens it reads: GraphiQL's
	// introspection query has under 400, a thousand aliased fields about 3,000.
	maxTokens = 4000
	// maxFields caps the field selections of a document with its fragments expanded where
	// they are spread, as execution and validation see them; aliases count each.
	maxFields = 1000
	// maxOverlapPairs caps the pairs of same-named fields validation must compare (in each
	// selection, merged with the same-named fields' selections): about a microsecond each.
	maxOverlapPairs = 1000
)

// DocumentLimit refuses a document over the size, token, field or overlap limits before it
// is validated. It runs after automatic persisted queries have put the document in place, and
// skips documents the query cache holds: they were measured before they were validated.
type DocumentLimit struct {
	// Cache is the handler's cache of validated documents.
	Cache graphql.Cache[*ast.QueryDocument]
}

// ExtensionName implements graphql.HandlerExtension.
func (DocumentLimit) ExtensionName() string { return "DocumentLimit" }

// Validate implements graphql.HandlerExtension.
func (DocumentLimit) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters implements graphql.OperationParameterMutator.
func (d DocumentLimit) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	if len(params.Query) > maxQueryBytes {
		return costLimitError(fmt.Sprintf("The document is %d bytes; at most %d are accepted.", len(params.Query), maxQueryBytes))
	}
	if d.Cache != nil {
		if _, known := d.Cache.Get(ctx, params.Query); known {
			return nil
		}
	}
	src := &ast.Source{Input: params.Query}
	if tooManyTokens(src) {
		return costLimitError(fmt.Sprintf("The document has more than %d tokens.", maxTokens))
	}
	doc, err := parser.ParseQueryWithTokenLimit(src, maxTokens)
	if err != nil {
		gqlErr, isGQL := err.(*gqlerror.Error)
		if !isGQL {
			gqlErr = gqlerror.Wrap(err)
		}
		errcode.Set(gqlErr, errcode.ParseFailed)
		return gqlErr
	}
	return measureDocument(doc)
}

// tooManyTokens counts the document's tokens up to maxTokens with the lexer alone, which
// allocates nothing and costs about a third of parsing them, so a document refused for its
// length never builds a syntax tree. A lexical error stops the count: the parser reports it.
func tooManyTokens(src *ast.Source) bool {
	l := lexer.New(src)
	for range maxTokens {
		tok, err := l.ReadToken()
		if err != nil || tok.Kind == lexer.EOF {
			return false
		}
	}
	tok, err := l.ReadToken()
	return err == nil && tok.Kind != lexer.EOF
}

// costLimitError is a refusal of the document as a whole.
func costLimitError(detail string) *gqlerror.Error {
	return errorOf(&Error{Code: CodeCostLimitExceeded, Detail: detail})
}

// measureDocument walks every operation and fragment definition as validation will, with
// fragments expanded, and stops at the first limit passed, so its own cost is bounded by the
// limits whatever the document.
func measureDocument(doc *ast.QueryDocument) *gqlerror.Error {
	m := &docMeasure{frags: doc.Fragments, active: map[string]bool{}}
	var sets []ast.SelectionSet
	for _, op := range doc.Operations {
		sets = append(sets, op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		sets = append(sets, f.SelectionSet)
	}
	for _, set := range sets {
		var fields []*ast.Field
		if !m.collect(set, &fields) || !m.merged(fields) {
			break
		}
	}
	switch {
	case m.fields > maxFields:
		return costLimitError(fmt.Sprintf("The document selects more than %d fields, fragments expanded.", maxFields))
	case m.pairs > maxOverlapPairs:
		return costLimitError(fmt.Sprintf("The document selects one response name too many times: more than %d pairs of same-named fields.", maxOverlapPairs))
	}
	return nil
}

// docMeasure counts a document's expanded fields and the same-named pairs among them.
type docMeasure struct {
	frags  ast.FragmentDefinitionList
	active map[string]bool // fragments being expanded, so a cycle is not followed forever
	fields int
	pairs  int
}

// collect appends the fields of set, through inline fragments and fragment spreads, to out,
// counting each; false once the document has too many.
func (m *docMeasure) collect(set ast.SelectionSet, out *[]*ast.Field) bool {
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			if m.fields++; m.fields > maxFields {
				return false
			}
			*out = append(*out, sel)
		case *ast.InlineFragment:
			if !m.collect(sel.SelectionSet, out) {
				return false
			}
		case *ast.FragmentSpread:
			f := m.frags.ForName(sel.Name)
			if f == nil || m.active[sel.Name] {
				continue // validation reports unknown and cyclic fragments
			}
			m.active[sel.Name] = true
			ok := m.collect(f.SelectionSet, out)
			delete(m.active, sel.Name)
			if !ok {
				return false
			}
		}
	}
	return true
}

// merged groups fields by response name, as validation and execution merge them, counts the
// pairs each group makes, and measures each group's selections merged; false once a limit is
// passed.
func (m *docMeasure) merged(fields []*ast.Field) bool {
	groups := map[string][]*ast.Field{}
	var order []string
	for _, f := range fields {
		if _, seen := groups[f.Alias]; !seen {
			order = append(order, f.Alias)
		}
		groups[f.Alias] = append(groups[f.Alias], f)
	}
	for _, name := range order {
		group := groups[name]
		if m.pairs += len(group) * (len(group) - 1) / 2; m.pairs > maxOverlapPairs {
			return false
		}
		var sub []*ast.Field
		for _, f := range group {
			if !m.collect(f.SelectionSet, &sub) {
				return false
			}
		}
		if len(sub) > 0 && !m.merged(sub) {
			return false
		}
	}
	return true
}
