package storage

import (
	"reflect"
	"slices"
	"strings"
)

// A list reads every column of its record unless the window names the ones its reader
// needs (Window.Columns): a page that shows six fields of an order need not carry, decode and
// allocate its thirty-six. The columns storage itself relies on are always read.

// alwaysRead are the columns kept in every projection: the record's identity and the keys
// that tenancy checks and per-parent windows read back from the record.
var alwaysRead = []string{"id", "organization_id", "customer_id"}

// ColumnOf is the column that fills the Go field named field of record type t (a struct, or
// a pointer to one), as sqlx maps it: its db tag. ok is false for a field no column fills.
func ColumnOf(t reflect.Type, field string) (string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return "", false
	}
	sf, ok := t.FieldByName(field)
	if !ok {
		return "", false
	}
	for _, fi := range recordMapper.TypeMap(t).Index {
		if slices.Equal(fi.Index, sf.Index) && !strings.Contains(fi.Path, ".") && fi.Name != "" && fi.Name != "-" {
			return fi.Name, true
		}
	}
	return "", false
}

// ColumnsOfGetter are the columns the getter method named method of record type t reads,
// as the record declares them (a GetterColumns method); ok is false when it declares none.
func ColumnsOfGetter(t reflect.Type, method string) ([]string, bool) {
	if t.Kind() != reflect.Pointer {
		t = reflect.PointerTo(t)
	}
	g, ok := reflect.Zero(t).Interface().(interface{ GetterColumns() map[string][]string })
	if !ok {
		return nil, false
	}
	cols, ok := g.GetterColumns()[method]
	return cols, ok
}

// KindOfGetter is how PostgreSQL writes the getter method named method of record type t
// from the one column it reads (ColumnsOfGetter), as the record declares it (a GetterKinds
// method); ok is false when it declares none.
func KindOfGetter(t reflect.Type, method string) (string, bool) {
	if t.Kind() != reflect.Pointer {
		t = reflect.PointerTo(t)
	}
	g, ok := reflect.Zero(t).Interface().(interface{ GetterKinds() map[string]string })
	if !ok {
		return "", false
	}
	kind, ok := g.GetterKinds()[method]
	return kind, ok && renderValue(kind, "x") != ""
}

// projected is the select list columns (a record's, each entry a column, alias.column, or
// an expression AS name) narrowed to the entries named in want, plus alwaysRead and keep.
// It returns columns unchanged when want is nil, or when it cannot tell every entry's name
// or find every wanted one: reading too much is slow, reading too little is wrong.
func projected(columns string, want []string, keep ...string) string {
	if want == nil {
		return columns
	}
	entries := splitSelectList(columns)
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = selectName(e)
		if names[i] == "" {
			return columns
		}
	}
	var out []string
	found := 0
	for i, e := range entries {
		switch {
		case slices.Contains(want, names[i]):
			found++
		case slices.Contains(alwaysRead, names[i]) || slices.Contains(keep, names[i]):
		default:
			continue
		}
		out = append(out, e)
	}
	if found < len(want) {
		return columns
	}
	return strings.Join(out, ", ")
}

// splitSelectList splits a select list at its top-level commas (not those inside
// parentheses or quotes), trimming each entry.
func splitSelectList(list string) []string {
	var out []string
	depth, start := 0, 0
	quote := byte(0)
	for i := 0; i < len(list); i++ {
		c := list[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(list[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(list[start:]))
}

// selectName is the name a select-list entry gives its column: the alias after AS, else the
// column after the table alias; "" when it cannot tell (a star, an unnamed expression).
func selectName(entry string) string {
	fields := strings.Fields(entry)
	if n := len(fields); n >= 3 && strings.EqualFold(fields[n-2], "AS") {
		return identifier(fields[n-1])
	}
	if len(fields) != 1 {
		return ""
	}
	name := fields[0]
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return identifier(name)
}

// identifier returns s when it is a plain lower-case SQL identifier, else "".
func identifier(s string) string {
	if s == "" {
		return ""
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return ""
		}
	}
	return s
}
