package fastapi

import (
	"strings"
	"unicode"
)

// WirePath maps a path of GraphQL input names under a value of s (as a use case reports a
// field error: ["customerId"], ["items", 0, "priceId"]) back to the names the client sent
// (["customer_id"], ["items", 0, "price_id"]), the inverse of the renaming validation
// does; a name s does not know is turned from camelCase to snake_case. s may be nil.
func WirePath(s Schema, segs []any) []any {
	out := make([]any, 0, len(segs))
	for _, seg := range segs {
		name, isName := seg.(string)
		if !isName {
			out = append(out, seg)
			s = itemSchema(s)
			continue
		}
		wire, child, found := wireField(s, name)
		if !found {
			wire, child = snakeCase(name), nil
		}
		out = append(out, wire)
		s = child
	}
	return out
}

// wireField finds the wire name and schema of a GraphQL field or map key.
func wireField(s Schema, name string) (string, Schema, bool) {
	switch s := s.(type) {
	case Nullable:
		return wireField(s.Schema, name)
	case After:
		return wireField(s.Schema, name)
	case Object:
		for _, f := range s.Fields {
			if f.gqlName() == name {
				return f.Name, f.Schema, true
			}
		}
	case Union:
		for _, m := range s.Members {
			if wire, child, found := wireField(m, name); found {
				return wire, child, true
			}
		}
	case Map:
		return name, s.values(), true
	}
	return "", nil, false
}

func itemSchema(s Schema) Schema {
	switch s := s.(type) {
	case Nullable:
		return itemSchema(s.Schema)
	case After:
		return itemSchema(s.Schema)
	case List:
		return s.Items
	}
	return nil
}

// snakeCase turns a GraphQL name back into a wire name.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
