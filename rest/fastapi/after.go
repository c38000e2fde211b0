package fastapi

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// After is a pydantic validator that runs once Schema has accepted a value: a model's
// model_validator(mode="after") or a field_validator. Check judges the validated value (for
// an Object, the map of GraphQL field names, an explicit null a nil value) and returns the
// ValueError's message, or "" to accept it. A refusal is one value_error at the value's loc,
// "Value error, " and the message, with the input as it was sent, as pydantic reports it;
// validators that run in turn are one Check that returns the first refusal.
type After struct {
	Schema Schema
	Check  func(v any) string
}

func (a After) validatorName() string { return a.Schema.validatorName() }

func (a After) validate(in any, loc []any) (outcome, []ValidationError) {
	oc, errs := a.Schema.validate(in, loc)
	if len(errs) > 0 {
		return oc, errs
	}
	if msg := a.Check(oc.value); msg != "" {
		return fail(errValue(loc, in, msg))
	}
	return oc, nil
}

// PyDumpsLen is len(json.dumps(v)) in Python, with its default ASCII escapes and ", " and
// ": " separators, for validators that bound a value's size that way. v is a validated value
// of this package (nil, bool, string, int64, float64, json.Number, []any, map[string]any);
// the length does not depend on key order.
func PyDumpsLen(v any) int {
	switch v := v.(type) {
	case nil:
		return len("null")
	case bool:
		return len(strconv.FormatBool(v))
	case string:
		return pyASCIIStringLen(v)
	case int64:
		return len(strconv.FormatInt(v, 10))
	case int:
		return len(strconv.Itoa(v))
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return len("NaN")
		}
		return len(pyFloatRepr(v))
	case json.Number:
		return len(v)
	case []any:
		n := 2
		for i, e := range v {
			if i > 0 {
				n += len(", ")
			}
			n += PyDumpsLen(e)
		}
		return n
	case map[string]any:
		n, i := 2, 0
		for k, e := range v {
			if i > 0 {
				n += len(", ")
			}
			n += pyASCIIStringLen(k) + len(": ") + PyDumpsLen(e)
			i++
		}
		return n
	}
	b, _ := json.Marshal(v)
	return len(b)
}

// pyASCIIStringLen is the length of s as json.dumps writes it with ensure_ascii: quotes,
// two-character escapes for the usual controls, \uXXXX for other controls and non-ASCII
// characters, two of them beyond the Basic Multilingual Plane.
func pyASCIIStringLen(s string) int {
	n := 2
	for _, r := range s {
		switch {
		case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t' || r == '\b' || r == '\f':
			n += 2
		case r < 0x20 || (r >= 0x7f && r <= 0xffff):
			n += 6
		case r > 0xffff:
			n += 12
		default:
			n += utf8.RuneLen(r)
		}
	}
	return n
}

// EnumLiteral is a Literal of members of a Python StrEnum (Literal[MemberRole.member, …]):
// the input must be one of Values exactly, and a refusal is a literal_error that spells each
// allowed value as the member's repr, <Enum.value: 'value'>, as pydantic does.
type EnumLiteral struct {
	Enum   string
	Values []string
}

func (e EnumLiteral) validatorName() string { return "literal[" + strings.Join(e.reprs(), ",") + "]" }

func (e EnumLiteral) reprs() []string {
	out := make([]string, len(e.Values))
	for i, v := range e.Values {
		out[i] = "<" + e.Enum + "." + v + ": " + pyRepr(v) + ">"
	}
	return out
}

func (e EnumLiteral) validate(in any, loc []any) (outcome, []ValidationError) {
	if v, isStr := in.(string); isStr && slices.Contains(e.Values, v) {
		return ok(v, lax)
	}
	r := e.reprs()
	expected := strings.Join(r[:len(r)-1], ", ") + " or " + r[len(r)-1]
	if len(r) == 1 {
		expected = r[0]
	}
	return fail(newError("literal_error", loc, "Input should be "+expected, in, "expected", expected))
}
