package resolvers

import (
	"encoding/json"
	"testing"
)

// TestCostAmountsAreBoundedAsV1Bounds checks _cost.amount given through GraphQL against /v1's
// Decimal of 17 digits and 12 places, normalised as pydantic normalises it.
func TestCostAmountsAreBoundedAsV1Bounds(t *testing.T) {
	for _, tt := range []struct {
		amount any
		want   string // the error type, "" for none
	}{
		{json.Number("12.5"), ""},
		{json.Number("0"), ""},
		{json.Number("-3"), ""},
		{"0.000000000001", ""},
		{json.Number("1.000000000000000000"), ""}, // trailing zeros do not count
		{json.Number("12345678901234567"), ""},
		{json.Number("1.5e2"), ""},
		{json.Number("1e16"), ""},
		{json.Number("1e17"), "decimal_max_digits"},
		{json.Number("123456789012345678"), "decimal_max_digits"},
		{json.Number("1e308"), "decimal_max_digits"},
		{json.Number("1e-400"), "decimal_max_digits"}, // 400 places are 400 digits,
		{json.Number("-1e-400"), "decimal_max_digits"},
		{"0.0000000000001", "decimal_max_places"},
		{json.Number("1.5e-12"), "decimal_max_places"},
		{"abc", "decimal_parsing"},
		{"NaN", "decimal_parsing"},
		{"Infinity", "decimal_parsing"},
		{"", "decimal_parsing"},
		{true, "decimal_type"},
		{nil, "decimal_type"},
		{map[string]any{}, "decimal_type"},
		{[]any{}, "decimal_type"},
	} {
		errs := checkCostAmount(tt.amount, []any{"_cost", "amount"})
		got := ""
		if len(errs) > 0 {
			got = errs[0].Type
		}
		if got != tt.want {
			t.Errorf("%#v: got %q, want %q", tt.amount, got, tt.want)
		}
	}
}
