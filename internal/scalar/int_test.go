package scalar_test

import (
	"encoding/json"
	"math"
	"testing"

	"till/internal/scalar"
)

func TestUnmarshalIntHoldsGraphQLsThirtyTwoBits(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want int
		ok   bool
	}{
		{"the largest Int is accepted", json.Number("2147483647"), math.MaxInt32, true},
		{"the smallest Int is accepted", json.Number("-2147483648"), math.MinInt32, true},
		{"an int64 within range is accepted", int64(42), 42, true},
		{"one past the largest is refused", json.Number("2147483648"), 0, false},
		{"one below the smallest is refused", json.Number("-2147483649"), 0, false},
		{"the largest int64 is refused", json.Number("9223372036854775807"), 0, false},
		{"a number beyond int64 is refused", json.Number("9223372036854775808"), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := scalar.UnmarshalInt(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("UnmarshalInt(%v) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
			}
			if err != nil && err.Error() != "Int cannot represent non 32-bit signed integer value: "+string(tt.in.(json.Number)) {
				t.Errorf("message %q", err)
			}
		})
	}
}
