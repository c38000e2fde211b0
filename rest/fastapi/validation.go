package fastapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// ValidationError is one item of a 422 "detail" list, in FastAPI's shape:
// {"type", "loc", "msg", "input", "ctx"?}. Input and Ctx are pre-encoded so
// that values echoed from the request keep Python's rendering (key order,
// 1.0 instead of 1, big integers intact).
type ValidationError struct {
	Type  string
	Loc   []any // strings and ints, starting with "body", "query" or "path"
	Msg   string
	Input json.RawMessage // JSON null when nil
	Ctx   json.RawMessage // omitted when nil
}

// MarshalJSON writes the keys in FastAPI's order.
func (e ValidationError) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"type":`)
	writePyString(&buf, e.Type)
	buf.WriteString(`,"loc":`)
	WriteJSON(&buf, e.Loc)
	buf.WriteString(`,"msg":`)
	writePyString(&buf, e.Msg)
	buf.WriteString(`,"input":`)
	if e.Input == nil {
		buf.WriteString("null")
	} else {
		buf.Write(e.Input)
	}
	if e.Ctx != nil {
		buf.WriteString(`,"ctx":`)
		buf.Write(e.Ctx)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// ValidationErrors is a request that failed validation; /v1 answers it with
// 422 {"error":"RequestValidationError","detail":[...]}.
type ValidationErrors []ValidationError

// Error lists the items for logs; clients get the JSON rendering.
func (v ValidationErrors) Error() string {
	parts := make([]string, len(v))
	for i, e := range v {
		parts[i] = fmt.Sprintf("%v: %s", e.Loc, e.Msg)
	}
	return "request validation failed: " + strings.Join(parts, "; ")
}

// newError builds an item; input is a request value, ctx alternating keys
// and values (kept in that order, as pydantic does).
func newError(typ string, loc []any, msg string, input any, ctx ...any) ValidationError {
	e := ValidationError{Type: typ, Loc: loc, Msg: msg, Input: pyJSON(input)}
	if len(ctx) > 0 {
		obj := NewDict()
		for i := 0; i+1 < len(ctx); i += 2 {
			obj.Set(ctx[i].(string), ctx[i+1])
		}
		e.Ctx = pyJSON(obj)
	}
	return e
}

// at returns loc extended by segs in a fresh slice, so sibling errors never
// share (and overwrite) a backing array.
func at(loc []any, segs ...any) []any {
	out := make([]any, 0, len(loc)+len(segs))
	out = append(out, loc...)
	return append(out, segs...)
}

// prefixed returns errs with seg inserted right after the first n elements
// of each loc, as pydantic does when it tags a union member's errors.
func prefixed(errs []ValidationError, n int, seg any) []ValidationError {
	out := make([]ValidationError, len(errs))
	for i, e := range errs {
		loc := make([]any, 0, len(e.Loc)+1)
		loc = append(loc, e.Loc[:n]...)
		loc = append(loc, seg)
		loc = append(loc, e.Loc[n:]...)
		e.Loc = loc
		out[i] = e
	}
	return out
}

// The messages below are pydantic-core's templates for the error types this
// package produces (pydantic v2, src/errors/types.rs).

func errMissing(loc []any, input any) ValidationError {
	return newError("missing", loc, "Field required", input)
}

func errStringType(loc []any, input any) ValidationError {
	return newError("string_type", loc, "Input should be a valid string", input)
}

func errStringTooShort(loc []any, input any, min int) ValidationError {
	return newError("string_too_short", loc, fmt.Sprintf("String should have at least %d character%s", min, plural(min)), input, "min_length", min)
}

func errStringTooLong(loc []any, input any, max int) ValidationError {
	return newError("string_too_long", loc, fmt.Sprintf("String should have at most %d character%s", max, plural(max)), input, "max_length", max)
}

func errTooLong(loc []any, input any, fieldType string, max, actual int) ValidationError {
	msg := fmt.Sprintf("%s should have at most %d item%s after validation, not %d", fieldType, max, plural(max), actual)
	return newError("too_long", loc, msg, input, "field_type", fieldType, "max_length", max, "actual_length", actual)
}

func errTooShort(loc []any, input any, fieldType string, min, actual int) ValidationError {
	msg := fmt.Sprintf("%s should have at least %d item%s after validation, not %d", fieldType, min, plural(min), actual)
	return newError("too_short", loc, msg, input, "field_type", fieldType, "min_length", min, "actual_length", actual)
}

func errValue(loc []any, input any, msg string) ValidationError {
	return newError("value_error", loc, "Value error, "+msg, input, "error", json.RawMessage(`{}`))
}

func errEnum(loc []any, input any, values []string) ValidationError {
	expected := pyOrList(values)
	return newError("enum", loc, "Input should be "+expected, input, "expected", expected)
}

func errModelAttributesType(loc []any, input any) ValidationError {
	return newError("model_attributes_type", loc, "Input should be a valid dictionary or object to extract fields from", input)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// nulMessage is Polar's validator message for strings holding U+0000, which
// PostgreSQL text cannot store.
const nulMessage = "This value contains invalid characters"
