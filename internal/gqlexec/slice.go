// Package gqlexec holds what Till's generated GraphQL executor (graph/) calls besides gqlgen's
// runtime. `go generate` points the generated code at it (see rewrite/).
package gqlexec

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// MarshalSlice marshals a list's elements one after another, in place of gqlgen's
// graphql.MarshalSliceConcurrently, which starts a goroutine per element.
//
// Why: Till's loaders batch by level (resolvers/levels.go): the first element that follows a
// relation loads it for every sibling at once, so elements gain nothing from running
// concurrently, and a goroutine per element (its start, its stack growing as the executor
// recurses, its scheduling) cost more than the elements' own work on large pages. The fields
// of one object still resolve concurrently, so an object's relations load together. The
// signature is gqlgen's; the worker limit has no use in order.
//
// A panic in an element is reported as a field error and makes the list null, as gqlgen does.
func MarshalSlice(ctx context.Context, length int, _ int64, omitPanicHandler bool,
	marshalElement func(ctx context.Context, i int) graphql.Marshaler) graphql.Array {
	ret := make(graphql.Array, length)
	for i := range length {
		childCtx := graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &i})
		if omitPanicHandler {
			ret[i] = marshalElement(childCtx, i)
			continue
		}
		if !marshalRecovering(childCtx, ret, i, marshalElement) {
			return nil
		}
	}
	return ret
}

// marshalRecovering marshals element i into ret and reports false when it panicked.
func marshalRecovering(ctx context.Context, ret graphql.Array, i int,
	marshalElement func(ctx context.Context, i int) graphql.Marshaler) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			graphql.AddError(ctx, graphql.Recover(ctx, r))
			ok = false
		}
	}()
	ret[i] = marshalElement(ctx, i)
	return true
}
