package gqlexec_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/internal/gqlexec"
)

func marshal(t *testing.T, n int, f func(ctx context.Context, i int) graphql.Marshaler) (graphql.Array, gqlerror.List) {
	t.Helper()
	ctx := graphql.WithResponseContext(context.Background(), graphql.DefaultErrorPresenter, graphql.DefaultRecover)
	ctx = graphql.WithFieldContext(ctx, &graphql.FieldContext{})
	out := gqlexec.MarshalSlice(ctx, n, 0, false, f)
	return out, graphql.GetErrors(ctx)
}

func TestMarshalSliceKeepsOrderAndIndexes(t *testing.T) {
	var seen []int
	out, errs := marshal(t, 3, func(ctx context.Context, i int) graphql.Marshaler {
		seen = append(seen, *graphql.GetFieldContext(ctx).Index)
		return graphql.MarshalInt(i * 10)
	})
	var b bytes.Buffer
	out.MarshalGQL(&b)
	if b.String() != "[0,10,20]" || len(errs) != 0 {
		t.Fatalf("got %s with errors %v, want [0,10,20]", b.String(), errs)
	}
	if len(seen) != 3 || seen[0] != 0 || seen[1] != 1 || seen[2] != 2 {
		t.Fatalf("element contexts carried indexes %v, want [0 1 2]", seen)
	}
}

func TestMarshalSliceTurnsAPanicIntoAnErrorAndANullList(t *testing.T) {
	out, errs := marshal(t, 3, func(ctx context.Context, i int) graphql.Marshaler {
		if i == 1 {
			panic("boom")
		}
		return graphql.MarshalInt(i)
	})
	if out != nil || len(errs) != 1 {
		t.Fatalf("got %v with errors %v, want a null list and one error", out, errs)
	}
}

// The committed executor is what go generate makes of gqlgen's output: no element goroutines.
func TestGeneratedExecutorMarshalsListsInOrder(t *testing.T) {
	files, err := filepath.Glob("../../graph/*.generated.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated files found: %v", err)
	}
	calls := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(src, []byte("MarshalSliceConcurrently(")) {
			t.Errorf("%s still marshals a list concurrently; run go generate ./...", f)
		}
		calls += strings.Count(string(src), "gqlexec.MarshalSlice(")
	}
	if calls == 0 {
		t.Error("no list marshals through gqlexec.MarshalSlice")
	}
}
