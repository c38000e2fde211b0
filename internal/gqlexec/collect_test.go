package gqlexec_test

import (
	"context"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"till/internal/gqlexec"
)

const memoSchema = `
directive @defer(if: Boolean, label: String) on FRAGMENT_SPREAD | INLINE_FRAGMENT
type Query { order: Order }
type Order { id: ID! status: String! customer: Customer }
type Customer { id: ID! name: String }`

// collected is what CollectFields returns for the order's selection set, as "alias:name"
// pairs, when the operation runs with vars through ctx.
func collected(t *testing.T, ctx context.Context, doc *ast.QueryDocument, vars map[string]any) string {
	t.Helper()
	oc := &graphql.OperationContext{Doc: doc, Variables: vars}
	order := doc.Operations[0].SelectionSet[0].(*ast.Field)
	var names []string
	for _, f := range gqlexec.CollectFields(ctx, oc, order.SelectionSet, orderImplementors) {
		names = append(names, f.Alias+":"+f.Name)
	}
	return strings.Join(names, " ")
}

var orderImplementors = []string{"Order"}

func TestFieldsMemoAnswersAsCollectFieldsDoes(t *testing.T) {
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: memoSchema})
	tests := []struct {
		name  string
		query string
		vars  []map[string]any // one operation per entry, all on the same parsed document
		want  []string
	}{
		{"plain fields and aliases", `{ order { id s: status status } }`, []map[string]any{nil, nil},
			[]string{"id:id s:status status:status", "id:id s:status status:status"}},
		{"fragments are flattened", `query { order { ...F ... on Order { customer { id } } } } fragment F on Order { id }`,
			[]map[string]any{nil, nil}, []string{"id:id customer:customer", "id:id customer:customer"}},
		{"a skipped field follows each operation's variables", `query($s: Boolean!) { order { id status @skip(if: $s) } }`,
			[]map[string]any{{"s": true}, {"s": false}, {"s": true}}, []string{"id:id", "id:id status:status", "id:id"}},
		{"an included fragment too", `query($i: Boolean!) { order { id ... on Order @include(if: $i) { status } } }`,
			[]map[string]any{{"i": false}, {"i": true}}, []string{"id:id", "id:id status:status"}},
		{"so does a directive inside a named fragment", `query($s: Boolean!) { order { ...F } } fragment F on Order { id status @skip(if: $s) }`,
			[]map[string]any{{"s": false}, {"s": true}}, []string{"id:id status:status", "id:id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, errs := gqlparser.LoadQuery(schema, tt.query)
			if errs != nil {
				t.Fatal(errs)
			}
			memo := gqlexec.NewFieldsMemo(100)
			var ctx context.Context
			memo.InterceptOperation(context.Background(), func(c context.Context) graphql.ResponseHandler {
				ctx = c
				return nil
			})
			for i, vars := range tt.vars {
				if got := collected(t, ctx, doc, vars); got != tt.want[i] {
					t.Errorf("operation %d: collected %q, want %q", i, got, tt.want[i])
				}
				if plain := collected(t, context.Background(), doc, vars); plain != tt.want[i] {
					t.Errorf("operation %d without the memo: %q, want %q", i, plain, tt.want[i])
				}
			}
		})
	}
}

func TestFieldsMemoReusesAndStaysBounded(t *testing.T) {
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: memoSchema})
	memo := gqlexec.NewFieldsMemo(2)
	var ctx context.Context
	memo.InterceptOperation(context.Background(), func(c context.Context) graphql.ResponseHandler {
		ctx = c
		return nil
	})
	doc, errs := gqlparser.LoadQuery(schema, `{ order { id status } }`)
	if errs != nil {
		t.Fatal(errs)
	}
	sel := doc.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet
	first := gqlexec.CollectFields(ctx, &graphql.OperationContext{Doc: doc}, sel, orderImplementors)
	second := gqlexec.CollectFields(ctx, &graphql.OperationContext{Doc: doc}, sel, orderImplementors)
	if &first[0] != &second[0] {
		t.Error("the second operation on the same document collected the fields again")
	}
	for _, q := range []string{`{ order { id } }`, `{ order { status } }`, `{ order { customer { id } } }`} {
		d, errs := gqlparser.LoadQuery(schema, q)
		if errs != nil {
			t.Fatal(errs)
		}
		gqlexec.CollectFields(ctx, &graphql.OperationContext{Doc: d}, d.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet, orderImplementors)
	}
	if again := gqlexec.CollectFields(ctx, &graphql.OperationContext{Doc: doc}, sel, orderImplementors); &again[0] == &first[0] {
		t.Error("a memo of 2 entries still held the first of 4 selection sets")
	}
}
