package fastapi

import (
	"math"
	"net/url"
	"strings"
	"unicode/utf8"
)

// PostgreSQL text holds neither U+0000 nor bytes that are not UTF-8, and a float column or
// a JSON document holds no infinity or NaN. Upstream's pydantic accepts all three, then
// fails in the database or the JSON encoder with a 500; here every decoder of outside
// input refuses them, at the value's loc, so no use case has to remember.

// NULError is Polar's item for a string holding U+0000, for values read outside this
// package (a path parameter a handler takes itself).
func NULError(loc []any, input any) ValidationError {
	return errValue(loc, input, nulMessage)
}

// errFinite is pydantic's item for a float that must be finite.
func errFinite(loc []any, input any) ValidationError {
	return newError("finite_number", loc, "Input should be a finite number", input)
}

// utf8Replacing returns s, with invalid UTF-8 decoded as Python's errors="replace" does:
// uvicorn decodes a percent-decoded path that way, so {param} values always are text.
func utf8Replacing(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return decodeReplacing([]byte(s))
}

// PathValue unescapes a path parameter taken from the escaped path (escaped: the URL had
// one) into text, as uvicorn decodes a path: {param} values are always text.
func PathValue(v string, escaped bool) string {
	if escaped {
		if unescaped, err := url.PathUnescape(v); err == nil {
			v = unescaped
		}
	}
	return utf8Replacing(v)
}

// nonFinite lists a finite_number item for every infinite or NaN float in a request value
// (json.loads reads NaN, Infinity and 1e400 as such), in document order.
func nonFinite(in any, loc []any) []ValidationError {
	switch v := in.(type) {
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return []ValidationError{errFinite(loc, v)}
		}
	case []any:
		var errs []ValidationError
		for i, e := range v {
			errs = append(errs, nonFinite(e, at(loc, i))...)
		}
		return errs
	case *Dict:
		var errs []ValidationError
		for _, k := range v.keys {
			errs = append(errs, nonFinite(v.vals[k], at(loc, k))...)
		}
		return errs
	}
	return nil
}

// unstorableQuery finds a NUL in a query parameter's validated value (a string, or a list
// of them), returning the offending string.
func unstorableQuery(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		if strings.IndexByte(v, 0) >= 0 {
			return v, true
		}
	case []any:
		for _, e := range v {
			if s, bad := unstorableQuery(e); bad {
				return s, true
			}
		}
	}
	return "", false
}
