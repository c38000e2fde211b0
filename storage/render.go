package storage

import (
	"fmt"
	"regexp"
	"strings"
)

// A list whose reader shows only plain fields of its records (Window.Render) has PostgreSQL
// write each record's JSON, in the bytes the GraphQL executor would write: the server then
// copies one text column per row instead of decoding a dozen and writing them again, which
// is most of what a page of small objects costs it.

// Rendered is the JSON PostgreSQL wrote for a record read with Window.Render; records that
// lists can render embed it. The executor writes it in place of the record's fields.
type Rendered struct {
	JSON []byte `db:"page_json" json:"-"`
}

// RenderedJSON is the record's JSON, nil when it was read as columns.
func (r *Rendered) RenderedJSON() []byte { return r.JSON }

// renderable is w without Render unless T (a record pointer) embeds Rendered, which is
// where a row's JSON is scanned to: without it the JSON would be read and dropped.
func renderable[T any](w Window) Window {
	if _, ok := any(*new(T)).(interface{ RenderedJSON() []byte }); !ok {
		w.Render = nil
	}
	return w
}

// RenderField is one key of a rendered record: the JSON key (a GraphQL response name), the
// column it shows and how the value is written (renderValue), or Literal for a constant
// JSON value such as a __typename, or Nested for a relation's page written inside the
// record, or One for a to-one relation. Fields are the keys of an object: kind "object" is
// one written from the record's own columns (and, in a Nested page, the page's), kind
// "jsonobject" one stored as a JSON column, whose Fields name its keys in Column and are
// of kind "text" (null when absent) or "text!" ("" when absent), as encoding/json leaves a
// *string and a string. Keys are every key such a stored object may have: one holding
// another key, or a value that is not a string, leaves the record unwritten (its JSON is
// NULL), for the executor, which reads it as encoding/json does.
type RenderField struct {
	Key, Column, Kind, Literal string
	Nested                     *Nested
	One                        *One
	Fields                     []RenderField
	Keys                       []string
}

// One is a to-one relation written inside a record: the record of table whose id is the
// record's column Key, with Fields, null when the column is null or no record has it.
type One struct {
	table, columns, key string
	Fields              []RenderField
}

// OneProduct is the product a record's product_id names, as the product loader reads it.
func OneProduct(fields []RenderField) *One {
	return &One{table: "products", columns: productColumns, key: "product_id", Fields: fields}
}

// jsonKey is what a key of a stored JSON object may be.
var jsonKey = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// renderValue writes a column's value as the executor's marshaller for kind does, or ""
// for a kind it cannot: datetime as UTC with a Z and microseconds only when non-zero
// (scalar.FormatDateTime), numbers and booleans as their text, present as whether the
// column is set, a uuid in its canonical form, text (strings, enums) as a JSON string
// escaped as gqlgen escapes it (textJSON). NULL is left NULL, for the caller to write as
// null.
func renderValue(kind, col string) string {
	switch kind {
	case "text":
		return textJSON(col + "::text")
	case "number", "boolean":
		return col + "::text"
	case "present": // a boolean getter that tells whether its column is set
		return "(" + col + " IS NOT NULL)::text"
	case "uuid": // lower-case hex and hyphens: nothing to escape
		return `'"' || ` + col + `::text || '"'`
	case "datetime":
		utc := col + " AT TIME ZONE 'UTC'"
		micros := `CASE WHEN date_part('microseconds', ` + utc + `)::bigint % 1000000 = 0 THEN '' ELSE to_char(` + utc + `, '.US') END`
		// PostgreSQL's years before 1 AD are BC, without a year 0; Go counts 1 BC as year 0
		// and 2 BC as -1 (written -0001).
		year := `extract(year FROM ` + utc + `)::int`
		return `'"' || CASE WHEN ` + year + ` > 0 THEN to_char(` + utc + `, 'YYYY-MM-DD"T"HH24:MI:SS')
			ELSE CASE WHEN ` + year + ` = -1 THEN '0000' ELSE '-' || lpad((-` + year + ` - 1)::text, 4, '0') END
				|| to_char(` + utc + `, '-MM-DD"T"HH24:MI:SS') END || ` + micros + ` || 'Z"'`
	}
	return ""
}

// textJSON writes text as gqlgen's writeQuotedString does. PostgreSQL's to_json escapes
// the same characters, but writes backspace and form feed as \b and \f and other control
// characters in lower-case hex where gqlgen writes \u0008, \u000C and upper case; text
// holding one of those (rare: names and emails do not) is written by till_json_text
// (migrations/00023_json_text.sql), character by character. A subquery there instead would
// be a subplan that every run of the statement sets up, whether it runs or not: a tenth of
// a portal home's time in PostgreSQL.
func textJSON(text string) string {
	return `CASE WHEN ` + text + ` ~ ('[' || chr(1) || '-' || chr(8) || chr(11) || chr(12) || chr(14) || '-' || chr(31) || ']')
		THEN till_json_text(` + text + `) ELSE to_json(` + text + `)::text END`
}

// responseName is what a key or a literal string may be: a GraphQL name, which needs no
// escaping in JSON or in an SQL literal.
var responseName = regexp.MustCompile(`^[_A-Za-z][_0-9A-Za-z]*$`)

// renderSQL is the expression that writes a row's JSON from the select list columns (whose
// entries name the table alias each column is read from), or "" when a field cannot be
// written: an unknown kind, a column the list does not select plainly, a key that is not a
// name, a nested relation where nested is nil. nested writes a relation's page, or "".
func renderSQL(columns string, fields []RenderField, nested func(RenderField) string) string {
	entries := map[string]string{}
	for _, e := range splitSelectList(columns) {
		if name := selectName(e); name != "" && !strings.Contains(strings.ToUpper(e), " AS ") {
			entries[name] = e
		}
	}
	return objectSQL(fields, func(f RenderField) string {
		switch {
		case f.Nested != nil:
			if nested == nil {
				return ""
			}
			return parenthesized(nested(f))
		case f.One != nil:
			if one := f.One.sql(entries[f.One.key]); one != "" {
				return "coalesce(" + one + ", 'null')"
			}
			return ""
		case f.Kind == "object":
			return parenthesized(renderSQL(columns, f.Fields, nested))
		case f.Kind == "jsonobject":
			return jsonObjectSQL(entries[f.Column], f.Fields, f.Keys)
		}
		col := entries[f.Column]
		if col == "" || renderValue(f.Kind, col) == "" {
			return ""
		}
		return "coalesce(" + renderValue(f.Kind, col) + ", 'null')"
	})
}

// objectSQL writes a JSON object of fields: each key, then a Literal as a JSON string or
// the JSON text value writes for the field; "" when a key or a literal is not a name or
// value writes "".
func objectSQL(fields []RenderField, value func(RenderField) string) string {
	if len(fields) == 0 {
		return "'{}'"
	}
	var b strings.Builder
	b.WriteString("'{' || ")
	for i, f := range fields {
		if !responseName.MatchString(f.Key) {
			return ""
		}
		if i > 0 {
			b.WriteString(" || ',' || ")
		}
		fmt.Fprintf(&b, `'"%s":' || `, f.Key)
		if f.Literal != "" {
			if !responseName.MatchString(f.Literal) {
				return ""
			}
			fmt.Fprintf(&b, `'"%s"'`, f.Literal)
			continue
		}
		v := value(f)
		if v == "" {
			return ""
		}
		b.WriteString(v)
	}
	b.WriteString(" || '}'")
	return b.String()
}

// parenthesized is expr in parentheses, "" for "".
func parenthesized(expr string) string {
	if expr == "" {
		return ""
	}
	return "(" + expr + ")"
}

// sql is the relation's record's JSON for the record whose key column is key (its select
// list entry), NULL when there is none; "" when a field cannot be written.
func (o *One) sql(key string) string {
	names, ok := selectNames(o.columns)
	if key == "" || !ok {
		return ""
	}
	obj := renderSQL(qualifyNames("page_one", names), o.Fields, nil)
	if obj == "" {
		return ""
	}
	return "(SELECT " + obj + " FROM " + o.table + " page_one WHERE page_one.id = " + key + ")"
}

// jsonObjectSQL writes the object stored in the JSON column col with fields (kind
// "jsonobject"), null when the column is NULL or holds JSON null (as a record decoded from
// JSON has it, see decodeRecord); NULL, so that the whole record is NULL, when the stored
// value is not an object of keys and string or null values; "" when a field cannot be
// written.
func jsonObjectSQL(col string, fields []RenderField, keys []string) string {
	if col == "" || len(keys) == 0 {
		return ""
	}
	for _, k := range keys {
		if !jsonKey.MatchString(k) {
			return ""
		}
	}
	obj := objectSQL(fields, func(f RenderField) string {
		absent := map[string]string{"text": "'null'", "text!": `'""'`}[f.Kind]
		if absent == "" || !jsonKey.MatchString(f.Column) {
			return ""
		}
		return "coalesce(" + textJSON("("+col+"->>'"+f.Column+"')") + ", " + absent + ")"
	})
	if obj == "" {
		return ""
	}
	return "(CASE WHEN " + col + " IS NULL OR jsonb_typeof(" + col + ") = 'null' THEN 'null'" +
		" WHEN jsonb_typeof(" + col + ") = 'object' AND NOT EXISTS (SELECT FROM jsonb_each(" + col + ") page_kv" +
		" WHERE page_kv.key NOT IN ('" + strings.Join(keys, "', '") + "') OR jsonb_typeof(page_kv.value) NOT IN ('string', 'null'))" +
		" THEN " + obj + " END)"
}
