package fastapi

import (
	"strings"
	"unicode"
)

// Field is one field of an Object.
type Field struct {
	Name     string   // JSON key (snake_case), and the loc segment when it is missing
	Aliases  []string // further keys accepted for the field, tried after Name (pydantic AliasChoices)
	Var      string   // GraphQL input field name; "" means camelCase(Name)
	Schema   Schema
	Required bool // absent: "missing"; optional fields that are absent are left out of the variable
}

// gqlName is the GraphQL input field the value goes to.
func (f Field) gqlName() string {
	if f.Var != "" {
		return f.Var
	}
	return camelCase(f.Name)
}

// Object is a pydantic model (Polar's Schema: from_attributes, extra fields
// ignored, strings checked for U+0000). Name is the model class, which a
// union puts in loc, e.g. ["body","CustomerSessionCustomerIDCreate","customer_id"].
//
// The variable is a map keyed by GraphQL field names. Absent optional fields
// are not in the map and explicit nulls are nil values, so an Omittable input
// field can tell the two apart.
type Object struct {
	Name   string
	Fields []Field
}

func (o Object) validatorName() string { return o.Name }

func (o Object) validate(in any, loc []any) (outcome, []ValidationError) {
	obj, isObj := in.(*Dict)
	if !isObj {
		return fail(errModelAttributesType(loc, in))
	}
	out := make(map[string]any, len(o.Fields))
	var errs []ValidationError
	ex, set := strict, 0
	for _, f := range o.Fields {
		key, raw, present := lookupField(obj, f)
		if !present {
			if f.Required {
				errs = append(errs, errMissing(at(loc, f.Name), obj))
			}
			continue
		}
		oc, ferrs := f.Schema.validate(raw, at(loc, key))
		if len(ferrs) > 0 {
			errs = append(errs, ferrs...)
			continue
		}
		if containsNUL(oc.value) {
			errs = append(errs, errValue(at(loc, key), raw, nulMessage))
			continue
		}
		out[f.gqlName()] = oc.value
		ex = min(ex, oc.exactness)
		set++
	}
	if len(errs) > 0 {
		return fail(errs...)
	}
	return outcome{value: out, exactness: ex, fieldsSet: set}, nil
}

func lookupField(obj *Dict, f Field) (key string, raw any, present bool) {
	if v, found := obj.get(f.Name); found {
		return f.Name, v, true
	}
	for _, alias := range f.Aliases {
		if v, found := obj.get(alias); found {
			return alias, v, true
		}
	}
	return "", nil, false
}

// containsNUL reports whether a validated value holds U+0000 in any string,
// map key included.
func containsNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.IndexByte(v, 0) >= 0
	case []any:
		for _, e := range v {
			if containsNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.IndexByte(k, 0) >= 0 || containsNUL(e) {
				return true
			}
		}
	}
	return false
}

// Union is a pydantic smart-mode union (anyOf). When every member fails,
// each member's errors are reported with the member's name inserted in loc
// (a model's class name, "constrained-str", "int", ...). When several
// succeed, the exact type match wins, then the model with most fields set,
// then the first member.
type Union struct {
	Members []Schema
}

func (u Union) validatorName() string {
	names := make([]string, len(u.Members))
	for i, m := range u.Members {
		names[i] = m.validatorName()
	}
	return "union[" + strings.Join(names, ",") + "]"
}

func (u Union) validate(in any, loc []any) (outcome, []ValidationError) {
	// A model that lacks one of its required fields cannot match, and when another member
	// matches, the errors it would have made are dropped. Building them (each carries its
	// input) was most of the cost of a large batch of union items, so such members are
	// tried only when no other member matches, to report their errors.
	if oc, found := u.best(in, loc, true); found {
		return oc, nil
	}
	var errs []ValidationError
	for _, m := range u.Members {
		if _, merrs := m.validate(in, loc); len(merrs) > 0 {
			errs = append(errs, prefixed(merrs, len(loc), m.validatorName())...)
		}
	}
	return fail(errs...)
}

// best is the member smart mode picks among those that validate in: the exact type match,
// then the model with most fields set, then the first. skipIncomplete leaves out models
// missing a required field.
func (u Union) best(in any, loc []any, skipIncomplete bool) (outcome, bool) {
	var best *outcome
	for _, m := range u.Members {
		if o, isObj := m.(Object); isObj && skipIncomplete && o.lacksRequired(in) {
			continue
		}
		oc, merrs := m.validate(in, loc)
		if len(merrs) > 0 {
			continue
		}
		if oc.exactness == exact && oc.fieldsSet < 0 {
			return oc, true
		}
		switch {
		case best == nil:
		case best.fieldsSet >= 0 && oc.fieldsSet >= 0 && best.fieldsSet != oc.fieldsSet:
			if oc.fieldsSet < best.fieldsSet {
				continue
			}
		case oc.exactness <= best.exactness:
			continue
		}
		best = &oc
	}
	if best == nil {
		return outcome{}, false
	}
	return *best, true
}

// lacksRequired reports whether in is not an object or misses a required field, so that
// validating it must fail.
func (o Object) lacksRequired(in any) bool {
	obj, isObj := in.(*Dict)
	if !isObj {
		return true
	}
	for _, f := range o.Fields {
		if _, _, present := lookupField(obj, f); f.Required && !present {
			return true
		}
	}
	return false
}

// List is a list[T].
type List struct {
	Items     Schema
	MinLength int // 0: none
	MaxLength int // 0: none
}

func (l List) validatorName() string { return "list[" + l.Items.validatorName() + "]" }

func (l List) validate(in any, loc []any) (outcome, []ValidationError) {
	if streamed, isStreamed := in.(*streamedList); isStreamed { // validated as it was parsed
		if len(streamed.errs) > 0 {
			return fail(streamed.errs...)
		}
		return ok(streamed.kept, exact)
	}
	items, isList := in.([]any)
	if !isList {
		return fail(newError("list_type", loc, "Input should be a valid list", in))
	}
	if l.MaxLength > 0 && len(items) > l.MaxLength {
		return fail(errTooLong(loc, in, "List", l.MaxLength, len(items)))
	}
	out := make([]any, len(items))
	var errs []ValidationError
	ex := exact
	for i, item := range items {
		oc, ierrs := l.Items.validate(item, at(loc, i))
		if len(ierrs) > 0 {
			errs = append(errs, ierrs...)
			continue
		}
		out[i] = oc.value
		ex = min(ex, oc.exactness)
	}
	if len(errs) > 0 {
		return fail(errs...)
	}
	if l.MinLength > 0 && len(items) < l.MinLength {
		return fail(errTooShort(loc, in, "List", l.MinLength, len(items)))
	}
	return ok(out, ex)
}

// Map is a dict[str, V] such as Polar's metadata: key errors are reported at
// [..., key, "[key]"], value errors at [..., key], and the size limit only
// once every item is valid.
type Map struct {
	Keys      String // constraints on keys
	Values    Schema // nil: Any
	MaxLength int    // 0: none
	// Known are keys with a schema of their own, as a TypedDict's declared keys beside its
	// extra items (event metadata's _cost and _llm); the other keys take Values.
	Known []Field
}

func (m Map) values() Schema {
	if m.Values == nil {
		return Any{}
	}
	return m.Values
}

func (m Map) validatorName() string {
	return "dict[" + m.Keys.validatorName() + "," + m.values().validatorName() + "]"
}

func (m Map) validate(in any, loc []any) (outcome, []ValidationError) {
	obj, isObj := in.(*Dict)
	if !isObj {
		return fail(newError("dict_type", loc, "Input should be a valid dictionary", in))
	}
	out := make(map[string]any, len(obj.keys))
	var errs []ValidationError
	ex := exact
	for _, k := range obj.keys {
		_, kerrs := m.Keys.validate(k, at(loc, k, "[key]"))
		errs = append(errs, kerrs...)
		values := m.values()
		for _, f := range m.Known {
			if f.Name == k {
				values = f.Schema
			}
		}
		oc, verrs := values.validate(obj.vals[k], at(loc, k))
		if len(verrs) > 0 {
			errs = append(errs, verrs...)
			continue
		}
		out[k] = oc.value
		ex = min(ex, oc.exactness)
	}
	if len(errs) > 0 {
		return fail(errs...)
	}
	if m.MaxLength > 0 && len(out) > m.MaxLength {
		return fail(errTooLong(loc, in, "Dictionary", m.MaxLength, len(out)))
	}
	return ok(out, ex)
}

// Nullable is T | None (pydantic's nullable schema: no union tag in loc).
type Nullable struct {
	Schema Schema
}

func (n Nullable) validatorName() string { return "nullable[" + n.Schema.validatorName() + "]" }

func (n Nullable) validate(in any, loc []any) (outcome, []ValidationError) {
	if in == nil {
		return ok(nil, exact)
	}
	return n.Schema.validate(in, loc)
}

// camelCase turns a snake_case wire name into the GraphQL field name.
func camelCase(s string) string {
	parts := strings.Split(s, "_")
	var b strings.Builder
	b.WriteString(parts[0])
	for _, p := range parts[1:] {
		if p == "" {
			continue
		}
		r := []rune(p)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	return b.String()
}
