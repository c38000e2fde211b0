package fastapi

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// In is where a parameter comes from.
type In int

const (
	// InPath is a segment of the route's path.
	InPath In = iota + 1
	// InQuery is a query-string parameter.
	InQuery
)

// String is the loc segment of the location: "path" or "query".
func (in In) String() string {
	if in == InPath {
		return "path"
	}
	return "query"
}

// Shape is how a query parameter's occurrences become one variable.
type Shape int

const (
	// ShapeScalar takes the last occurrence (FastAPI scalar parameters).
	ShapeScalar Shape = iota
	// ShapeFilter is Polar's MultipleQueryFilter: one value or a repeated
	// parameter, always a list; errors carry pydantic's union tags.
	ShapeFilter
	// ShapeList is list[T]: every occurrence, errors indexed (sorting).
	ShapeList
	// ShapeDeepObject collects name[key]=value pairs into a GraphQL
	// MetadataFilter list [{key, values}]; it never fails (Polar's metadata
	// filter).
	ShapeDeepObject
)

// Param is one path or query parameter.
type Param struct {
	In     In
	Name   string // wire name, also the loc segment
	Var    string // GraphQL variable; "" means camelCase(Name)
	Schema Schema // validates each occurrence (a string); nil means String{}
	Shape  Shape
	Clamp  int64 // when > 0, a larger integer is replaced by Clamp silently
	// Required makes an absent query parameter pydantic's "missing" error (a parameter
	// declared with Query(...) and no default).
	Required bool
}

// Variable is the GraphQL variable the parameter's value goes to.
func (p Param) Variable() string {
	if p.Var != "" {
		return p.Var
	}
	return camelCase(p.Name)
}

func (p Param) schema() Schema {
	if p.Schema == nil {
		return String{}
	}
	return p.Schema
}

// queryPair is one name=value of a query string, in request order.
type queryPair struct{ name, value string }

// parseQuery splits a raw query string as Starlette does: the bytes are read
// as Latin-1, then urllib.parse.parse_qsl(keep_blank_values=True) splits on
// "&" only, turns "+" into a space and percent-decodes as UTF-8 with
// replacement, leaving malformed escapes as they are.
func parseQuery(raw string) []queryPair {
	var out []queryPair
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		name, value, _ := strings.Cut(part, "=")
		out = append(out, queryPair{unquotePlus(name), unquotePlus(value)})
	}
	return out
}

func unquotePlus(s string) string {
	s = strings.ReplaceAll(s, "+", " ")
	if !strings.ContainsAny(s, "%") && isASCII(s) {
		return s
	}
	var out strings.Builder
	var pending []byte // an ASCII run, percent-decoded, awaiting UTF-8 decoding
	flush := func() {
		out.WriteString(decodeReplacing(pending))
		pending = pending[:0]
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80:
			flush()
			out.WriteRune(rune(c)) // Latin-1
		case c == '%' && i+2 < len(s) && isHexDigit(s[i+1]) && isHexDigit(s[i+2]):
			pending = append(pending, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			pending = append(pending, c)
		}
	}
	flush()
	return out.String()
}

// decodeReplacing decodes UTF-8 as Python's errors="replace" does: each
// maximal invalid subpart (a truncated sequence counts once) becomes one
// U+FFFD.
func decodeReplacing(b []byte) string {
	var out strings.Builder
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || n > 1 {
			out.WriteRune(r)
			i += n
			continue
		}
		out.WriteRune(utf8.RuneError)
		i += invalidSubpart(b[i:])
	}
	return out.String()
}

// invalidSubpart is the length of the maximal subpart of an ill-formed
// sequence starting at b[0] (Unicode Table 3-7), at least 1.
func invalidSubpart(b []byte) int {
	lo, hi, need := byte(0x80), byte(0xbf), 0
	switch c := b[0]; {
	case c >= 0xc2 && c <= 0xdf:
		need = 1
	case c == 0xe0:
		lo, need = 0xa0, 2
	case c == 0xed:
		hi, need = 0x9f, 2
	case c >= 0xe1 && c <= 0xef:
		need = 2
	case c == 0xf0:
		lo, need = 0x90, 3
	case c == 0xf4:
		hi, need = 0x8f, 3
	case c >= 0xf1 && c <= 0xf3:
		need = 3
	}
	n := 1
	for ; n <= need && n < len(b); n++ {
		if b[n] < lo || b[n] > hi {
			break
		}
		lo, hi = 0x80, 0xbf
	}
	return n
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// DecodeParams validates an endpoint's parameters in order, as FastAPI does, and fills vars
// with their GraphQL values. pathValue returns a path parameter's text (see PathValue);
// rawQuery is the request's query string as it arrived.
func DecodeParams(params []Param, pathValue func(name string) string, rawQuery string, vars map[string]any) []ValidationError {
	query := parseQuery(rawQuery)
	var errs []ValidationError
	for _, p := range params {
		value, present, perrs := decodeParam(p, pathValue, query)
		if len(perrs) > 0 {
			errs = append(errs, perrs...)
			continue
		}
		if present {
			vars[p.Variable()] = clamp(value, p.Clamp)
		}
	}
	return errs
}

func decodeParam(p Param, pathValue func(string) string, query []queryPair) (any, bool, []ValidationError) {
	if p.In == InPath {
		raw := pathValue(p.Name)
		oc, errs := p.schema().validate(raw, []any{"path", p.Name})
		if _, bad := unstorableQuery(oc.value); len(errs) == 0 && bad {
			errs = []ValidationError{NULError([]any{"path", p.Name}, raw)}
		}
		return oc.value, len(errs) == 0, errs
	}
	loc := []any{"query", p.Name}
	if p.Shape == ShapeDeepObject {
		m, errs := deepObject(p.Name, query)
		return m, len(m) > 0 && len(errs) == 0, errs
	}
	var values []any
	for _, q := range query {
		if q.name == p.Name {
			values = append(values, q.value)
		}
	}
	if len(values) == 0 {
		if p.Required {
			return nil, false, []ValidationError{newError("missing", loc, "Field required", nil)}
		}
		return nil, false, nil
	}
	var oc outcome
	var errs []ValidationError
	switch p.Shape {
	case ShapeScalar:
		oc, errs = p.schema().validate(values[len(values)-1], loc)
	case ShapeList:
		oc, errs = List{Items: p.schema()}.validate(values, loc)
	case ShapeFilter:
		oc, errs = Union{Members: []Schema{p.schema(), sequence{p.schema()}}}.validate(values, loc)
		if _, isList := oc.value.([]any); len(errs) == 0 && !isList {
			oc.value = []any{oc.value}
		}
	}
	if s, bad := unstorableQuery(oc.value); len(errs) == 0 && bad {
		errs = []ValidationError{NULError(loc, s)}
	}
	return oc.value, len(errs) == 0, errs
}

// sequence is the Sequence[T] half of MultipleQueryFilter's union, named as
// pydantic-core names a Sequence validator, which is what appears in loc.
type sequence struct{ items Schema }

func (s sequence) validatorName() string {
	return "json-or-python[json=list[" + s.items.validatorName() + "],python=chain[is-instance[Sequence],function-wrap[sequence_validator()]]]"
}

func (s sequence) validate(in any, loc []any) (outcome, []ValidationError) {
	return List{Items: s.items}.validate(in, loc)
}

// deepObject collects name[key]=value pairs, matching each raw key as
// upstream's re.match(r"metadata\[([^\]]+)\]", key) does, into the GraphQL
// MetadataFilter list [{key, values}], keys in order of first appearance. A key or value
// holding U+0000 is refused at ["query", name, key].
func deepObject(name string, query []queryPair) ([]any, []ValidationError) {
	var out []any
	var errs []ValidationError
	index := map[string]map[string]any{}
	for _, q := range query {
		rest, found := strings.CutPrefix(q.name, name+"[")
		end := strings.IndexByte(rest, ']')
		if !found || end <= 0 {
			continue
		}
		key := rest[:end]
		if strings.IndexByte(key, 0) >= 0 || strings.IndexByte(q.value, 0) >= 0 {
			errs = append(errs, NULError([]any{"query", name, key}, q.value))
			continue
		}
		f, seen := index[key]
		if !seen {
			f = map[string]any{"key": key, "values": []any{}}
			index[key] = f
			out = append(out, f)
		}
		f["values"] = append(f["values"].([]any), q.value)
	}
	return out, errs
}

func clamp(v any, limit int64) any {
	if limit <= 0 {
		return v
	}
	switch n := v.(type) {
	case int64:
		if n > limit {
			return limit
		}
	case json.Number: // beyond int64
		return limit
	}
	return v
}
