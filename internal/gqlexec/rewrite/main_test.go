package main

import (
	"strings"
	"testing"
)

func TestRewrite(t *testing.T) {
	const generated = `package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

func f(ctx context.Context) graphql.Array {
	return graphql.MarshalSliceConcurrently(ctx, 2, 0, false, nil)
}
`
	tests := []struct {
		name, src string
		want      []string // substrings of the output
		unchanged bool
	}{
		{name: "a call is pointed at gqlexec and the package imported", src: generated,
			want: []string{"gqlexec.MarshalSlice(ctx, 2, 0, false, nil)", `"till/internal/gqlexec"`}},
		{name: "collecting fields goes through the memo", src: `package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

type executionContext struct{ OperationContext *graphql.OperationContext }

func (ec *executionContext) _T(ctx context.Context, sel ast.SelectionSet) int {
	return len(graphql.CollectFields(ec.OperationContext, sel, tImplementors))
}

var tImplementors = []string{"T"}
`, want: []string{"gqlexec.CollectFields(ctx, ec.OperationContext, sel, tImplementors)", `"till/internal/gqlexec"`}},
		{name: "a file without such calls is left as it is", src: "package graph\n\nimport (\n\t\"context\"\n)\n\nvar _ context.Context\n",
			unchanged: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := rewrite([]byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if tc.unchanged && string(out) != tc.src {
				t.Fatalf("changed:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(string(out), "MarshalSliceConcurrently") || strings.Contains(string(out), "graphql.CollectFields") {
				t.Errorf("a concurrent call is left:\n%s", out)
			}
			again, err := rewrite(out)
			if err != nil || string(again) != string(out) {
				t.Errorf("a second rewrite changed the output (err %v)", err)
			}
		})
	}
}
