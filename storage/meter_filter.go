package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MeterFilter selects the events a meter counts, in upstream's JSON shape
// ({"conjunction": "and", "clauses": [...]}), so a filter written for the upstream API is
// stored and read back byte-compatible. A clause is a comparison or a nested filter.
type MeterFilter struct {
	Conjunction string              `json:"conjunction"`
	Clauses     []MeterFilterClause `json:"clauses"`
}

// MeterFilterClause is one item of a filter's clauses: a comparison (Property, Operator,
// Value) or, when Group is set, a nested filter. Value is a string, an int64 or a bool, the
// three types upstream accepts.
type MeterFilterClause struct {
	Property string
	Operator string
	Value    any
	Group    *MeterFilter
}

// Filter conjunctions and operators, spelled as upstream's FilterConjunction and
// FilterOperator.
const (
	ConjunctionAnd = "and"
	ConjunctionOr  = "or"
)

// meterOperators maps each operator to its SQL comparison; like and not_like wrap the value
// in % so they mean "contains", as upstream does.
var meterOperators = map[string]string{
	"eq": "=", "ne": "<>", "gt": ">", "gte": ">=", "lt": "<", "lte": "<=",
	"like": "LIKE", "not_like": "NOT LIKE",
}

// MeterFilterError is a filter or aggregation that breaks a rule; Path is where, relative to
// the filter (["clauses", 1, "operator"]), so callers can build a field error location.
type MeterFilterError struct {
	Path []any
	Msg  string
}

func (e *MeterFilterError) Error() string { return fmt.Sprintf("%v: %s", e.Path, e.Msg) }

func filterErr(msg string, path ...any) error { return &MeterFilterError{Path: path, Msg: msg} }

// MarshalJSON writes a comparison as {"property","operator","value"} and a group as a filter.
func (c MeterFilterClause) MarshalJSON() ([]byte, error) {
	if c.Group != nil {
		return json.Marshal(c.Group)
	}
	return json.Marshal(struct {
		Property string `json:"property"`
		Operator string `json:"operator"`
		Value    any    `json:"value"`
	}{c.Property, c.Operator, c.Value})
}

// UnmarshalJSON reads either shape; an object with "conjunction" is a nested filter, as
// upstream's FilterClause | Filter union tells them apart. Integer values become int64.
func (c *MeterFilterClause) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if _, ok := raw["conjunction"]; ok {
		c.Group = &MeterFilter{}
		return json.Unmarshal(b, c.Group)
	}
	if err := unmarshalIfSet(raw["property"], &c.Property); err != nil {
		return err
	}
	if err := unmarshalIfSet(raw["operator"], &c.Operator); err != nil {
		return err
	}
	v, err := decodeFilterValue(raw["value"])
	if err != nil {
		return err
	}
	c.Value = v
	return nil
}

func unmarshalIfSet(b json.RawMessage, v any) error {
	if len(b) == 0 {
		return nil
	}
	return json.Unmarshal(b, v)
}

// decodeFilterValue keeps integers exact (int64), not float64.
func decodeFilterValue(b json.RawMessage) (any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i, nil
		}
		return n, nil // not an integer: Validate rejects it
	}
	return v, nil
}

// ParseMeterFilter decodes and validates a stored or submitted filter.
func ParseMeterFilter(b []byte) (*MeterFilter, error) {
	var f MeterFilter
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, filterErr("invalid filter: " + err.Error())
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

// maxMeterFilterText is upstream's FilterClause.value max_length for strings.
const maxMeterFilterText = 1000

// Bounds on a filter's shape that upstream does not set. GraphQL spells a filter as a typed
// tree, which a query (and the /v1 documents that render a meter) selects to a fixed depth:
// a filter deeper than they select would be cut short. And the operation cost prices each
// level of clauses at its largest size, multiplied by the levels above it. Two levels (a
// filter and groups of comparisons in it) are what upstream's dashboard builds.
const (
	// MaxMeterFilterDepth is how many levels of groups a filter may have, itself included.
	MaxMeterFilterDepth = 2
	// MaxMeterFilterClauses is how many clauses one group may hold.
	MaxMeterFilterClauses = 25
)

// Validate checks the filter against upstream's schema: a known conjunction, known
// operators, a property, and a value that is a string, a 32-bit integer or a boolean; and
// against Till's bounds on nesting and width (MaxMeterFilterDepth, MaxMeterFilterClauses). Property names are normalized
// ("metadata.tokens" becomes "tokens"), as upstream stores them.
func (f *MeterFilter) Validate() error { return f.validate(nil, 1) }

func (f *MeterFilter) validate(path []any, depth int) error {
	if depth > MaxMeterFilterDepth {
		return filterErr(fmt.Sprintf("filters nest at most %d levels deep", MaxMeterFilterDepth), path...)
	}
	if len(f.Clauses) > MaxMeterFilterClauses {
		return filterErr(fmt.Sprintf("a group holds at most %d clauses", MaxMeterFilterClauses), append(path, "clauses")...)
	}
	if f.Conjunction != ConjunctionAnd && f.Conjunction != ConjunctionOr {
		return filterErr("conjunction must be 'and' or 'or'", append(path, "conjunction")...)
	}
	for i := range f.Clauses {
		c := &f.Clauses[i]
		at := append(append([]any{}, path...), "clauses", i)
		if c.Group != nil {
			if err := c.Group.validate(at, depth+1); err != nil {
				return err
			}
			continue
		}
		if err := c.validate(at); err != nil {
			return err
		}
	}
	return nil
}

func (c *MeterFilterClause) validate(at []any) error {
	c.Property = strings.TrimPrefix(c.Property, "metadata.")
	if c.Property == "" {
		return filterErr("property is required", append(at, "property")...)
	}
	if _, ok := meterOperators[c.Operator]; !ok {
		return filterErr("operator must be one of eq, ne, gt, gte, lt, lte, like, not_like", append(at, "operator")...)
	}
	switch v := c.Value.(type) {
	case bool:
	case string:
		if utf8.RuneCountInString(v) > maxMeterFilterText {
			return filterErr(fmt.Sprintf("value must be at most %d characters", maxMeterFilterText), append(at, "value")...)
		}
	case int64:
		if v < math.MinInt32 || v > math.MaxInt32 {
			return filterErr("value must be a 32-bit integer", append(at, "value")...)
		}
	case int:
		c.Value = int64(v)
		return c.validate(at)
	default:
		return filterErr("value must be a string, an integer or a boolean", append(at, "value")...)
	}
	return nil
}

// sqlParams numbers the parameters of a statement as they are added, so compiled predicates
// never splice a value (or a metadata key) into SQL text.
type sqlParams struct{ args []any }

// add appends v and returns its placeholder with a cast, which fixes the parameter's type
// for the planner whatever context it appears in.
func (p *sqlParams) add(v any, cast string) string {
	p.args = append(p.args, v)
	return "$" + strconv.Itoa(len(p.args)) + "::" + cast
}

// SQL compiles the filter into a predicate over the events row aliased e, appending its
// values to p. It follows upstream's Filter.get_sql_clause: name and source compare as text
// and only with string values, timestamp compares as epoch seconds and only with integers
// (any other value type never matches), and a metadata key compares by its JSON type.
func (f *MeterFilter) SQL(p *sqlParams) (string, error) {
	if len(f.Clauses) == 0 {
		return "true", nil
	}
	parts := make([]string, len(f.Clauses))
	for i, c := range f.Clauses {
		var err error
		if c.Group != nil {
			parts[i], err = c.Group.SQL(p)
		} else {
			parts[i], err = c.sql(p)
		}
		if err != nil {
			return "", err
		}
	}
	join := " AND "
	if f.Conjunction == ConjunctionOr {
		join = " OR "
	} else if f.Conjunction != ConjunctionAnd {
		return "", errors.New("storage: meter filter conjunction " + strconv.Quote(f.Conjunction))
	}
	return "(" + strings.Join(parts, join) + ")", nil
}

func (c MeterFilterClause) sql(p *sqlParams) (string, error) {
	op, ok := meterOperators[c.Operator]
	if !ok {
		return "", errors.New("storage: meter filter operator " + strconv.Quote(c.Operator))
	}
	prop := strings.TrimPrefix(c.Property, "metadata.")
	switch prop {
	case "name", "source":
		s, ok := c.Value.(string)
		if !ok {
			return "false", nil
		}
		return compare("e."+prop, op, p.add(likeValue(op, s), "text")), nil
	case "timestamp":
		n, ok := intValue(c.Value)
		if !ok {
			return "false", nil
		}
		epoch := `extract(epoch FROM e."timestamp")::bigint`
		if isLike(op) {
			return compare(epoch+"::text", op, p.add(likeValue(op, strconv.FormatInt(n, 10)), "text")), nil
		}
		return compare(epoch, op, p.add(n, "bigint")), nil
	}
	return metadataClause(p, prop, op, c.Value), nil
}

// metadataClause compares a metadata value by its JSON type, as upstream does: strings as
// text, numbers numerically when the value is an integer (or a boolean, as 1/0), booleans
// only with booleans; like and not_like always compare the text form. Numbers compare as
// numeric rather than upstream's integer cast, which fails on fractional values.
func metadataClause(p *sqlParams, key, op string, v any) string {
	k := p.add(key, "text")
	text := "(e.metadata ->> " + k + ")"
	if isLike(op) {
		return compare(text, op, p.add(likeValue(op, strValue(v)), "text"))
	}
	num, bval := "false", "false"
	if n, ok := intValue(v); ok {
		num = compare(text+"::numeric", op, p.add(n, "numeric"))
	}
	if b, ok := v.(bool); ok {
		bval = compare(text+"::boolean", op, p.add(b, "boolean"))
	}
	return "(CASE jsonb_typeof(e.metadata -> " + k + ")" +
		" WHEN 'string' THEN " + compare(text, op, p.add(strValue(v), "text")) +
		" WHEN 'number' THEN " + num +
		" WHEN 'boolean' THEN " + bval + " END)"
}

func compare(left, op, right string) string { return left + " " + op + " " + right }

func isLike(op string) bool { return op == "LIKE" || op == "NOT LIKE" }

// likeValue makes a like operand a contains-pattern; upstream leaves the user's own % and _
// as wildcards, and so does Till.
func likeValue(op, s string) string {
	if isLike(op) {
		return "%" + s + "%"
	}
	return s
}

// strValue is upstream's _get_str_value: booleans are "t" and "f".
func strValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		if x {
			return "t"
		}
		return "f"
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return fmt.Sprint(v)
}

// intValue is the value as an integer where upstream treats it as one (a Python bool is an
// int).
func intValue(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}
