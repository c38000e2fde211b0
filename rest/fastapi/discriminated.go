package fastapi

import (
	"fmt"
	"regexp"
	"strings"
)

// Tagged is a union discriminated by a field (pydantic's Discriminator("service")): the
// field's value picks the member outright, and the member's errors carry that value in loc,
// e.g. ["body","product_media","mime_type"], where a plain Union would try every member and
// name their classes.
type Tagged struct {
	Field   string // the discriminator key
	Members []TaggedMember
}

// TaggedMember is one member of a Tagged union and the tag that selects it.
type TaggedMember struct {
	Tag    string
	Schema Schema
}

func (t Tagged) validatorName() string {
	names := make([]string, len(t.Members))
	for i, m := range t.Members {
		names[i] = m.Schema.validatorName()
	}
	return "tagged-union[" + strings.Join(names, ",") + "]"
}

func (t Tagged) validate(in any, loc []any) (outcome, []ValidationError) {
	obj, isObj := in.(*Dict)
	if !isObj {
		return fail(errModelAttributesType(loc, in))
	}
	discriminator := pyRepr(t.Field)
	raw, present := obj.get(t.Field)
	if !present {
		return fail(newError("union_tag_not_found", loc, "Unable to extract tag using discriminator "+discriminator,
			in, "discriminator", discriminator))
	}
	tag, isStr := raw.(string)
	if !isStr {
		tag = fmt.Sprint(raw)
	}
	for _, m := range t.Members {
		if isStr && m.Tag == tag {
			oc, errs := m.Schema.validate(in, loc)
			if len(errs) > 0 {
				return fail(prefixed(errs, len(loc), m.Tag)...)
			}
			return oc, nil
		}
	}
	tags := make([]string, len(t.Members))
	for i, m := range t.Members {
		tags[i] = pyRepr(m.Tag)
	}
	expected := strings.Join(tags, ", ")
	return fail(newError("union_tag_invalid", loc, fmt.Sprintf("Input tag %s found using %s does not match any of the expected tags: %s",
		pyRepr(tag), discriminator, expected), in, "discriminator", discriminator, "tag", tag, "expected_tags", expected))
}

// Regex is a str matching a regular expression anywhere (pydantic's pattern, which
// searches; anchor it with ^ and $ to match the whole string). Build it with NewRegex.
type Regex struct {
	Pattern string
	re      *regexp.Regexp
}

// NewRegex compiles pattern once, when the schema is built.
func NewRegex(pattern string) Regex {
	return Regex{Pattern: pattern, re: regexp.MustCompile(pattern)}
}

func (Regex) validatorName() string { return "constrained-str" }

func (p Regex) validate(in any, loc []any) (outcome, []ValidationError) {
	v, isStr := in.(string)
	if !isStr {
		return fail(errStringType(loc, in))
	}
	if !p.re.MatchString(v) {
		return fail(newError("string_pattern_mismatch", loc, "String should match pattern '"+p.Pattern+"'", in,
			"pattern", p.Pattern))
	}
	return ok(v, exact)
}
