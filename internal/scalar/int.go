package scalar

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/99designs/gqlgen/graphql"
)

// GraphQL's Int is a signed 32-bit integer. The parser refuses a larger number written in
// the query text, but gqlgen decodes variables into Go ints without that check, so a
// variable of 2^31 would reach an INTEGER column (or a timestamp, or an OFFSET) and fail in
// SQL as a 500. Every Int argument, variable and input field is decoded here instead, and
// refused as the client's mistake with the message the parser gives a literal. Quantities
// that really are larger (file sizes and byte offsets) are the schema's Int64.

// MarshalInt writes an Int, as gqlgen's built-in scalar does.
func MarshalInt(i int) graphql.Marshaler { return graphql.MarshalInt(i) }

// UnmarshalInt accepts a 32-bit integer.
func UnmarshalInt(v any) (int, error) {
	n, err := int32Of(v)
	return int(n), err
}

// MarshalInt32 writes an Int held in an int32.
func MarshalInt32(i int32) graphql.Marshaler { return graphql.MarshalInt32(i) }

// UnmarshalInt32 accepts a 32-bit integer.
func UnmarshalInt32(v any) (int32, error) { return int32Of(v) }

// MarshalInt64 writes an Int held in an int64.
func MarshalInt64(i int64) graphql.Marshaler { return graphql.MarshalInt64(i) }

// UnmarshalInt64 accepts a 32-bit integer into an int64 field: the schema type is still Int.
func UnmarshalInt64(v any) (int64, error) {
	n, err := int32Of(v)
	return int64(n), err
}

func int32Of(v any) (int32, error) {
	n, err := graphql.UnmarshalInt64(v)
	if err != nil || n < math.MinInt32 || n > math.MaxInt32 {
		return 0, fmt.Errorf("Int cannot represent non 32-bit signed integer value: %s", show(v))
	}
	return int32(n), nil
}

// show prints a variable's value as the client sent it.
func show(v any) string {
	switch v := v.(type) {
	case json.Number:
		return string(v)
	case string:
		return v
	}
	return fmt.Sprint(v)
}
