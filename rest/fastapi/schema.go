package fastapi

import (
	"math/big"
	"strings"
	"time"
	"unicode/utf8"
)

// Schema validates one request value the way pydantic v2 does in Python lax
// mode (FastAPI validates the objects json.loads produced, and query strings
// as str), and converts it to a GraphQL variable value: string, bool, int64
// (json.Number beyond int64), float64, nil, []any or map[string]any.
//
// The implementations are the types of this package (String, UUID4, Int,
// Object, Union, ...); callers compose them as literals, as pydantic models are declared.
type Schema interface {
	validate(in any, loc []any) (outcome, []ValidationError)
	// validatorName is pydantic-core's name for the validator, which a
	// union puts in loc to tell its members' errors apart.
	validatorName() string
}

// exactness ranks successful union members as pydantic's smart mode does.
type exactness int

const (
	lax exactness = iota
	strict
	exact
)

// outcome is a successful validation: the GraphQL value, how exactly the
// input matched, and for objects how many fields were set (-1 otherwise).
type outcome struct {
	value     any
	exactness exactness
	fieldsSet int
}

func ok(v any, e exactness) (outcome, []ValidationError) {
	return outcome{value: v, exactness: e, fieldsSet: -1}, nil
}

func fail(errs ...ValidationError) (outcome, []ValidationError) {
	return outcome{}, errs
}

// String is a str, optionally with length limits counted in characters.
type String struct {
	MinLength int // 0: none
	MaxLength int // 0: none
}

func (s String) validatorName() string {
	if s.MinLength > 0 || s.MaxLength > 0 {
		return "constrained-str"
	}
	return "str"
}

func (s String) validate(in any, loc []any) (outcome, []ValidationError) {
	v, isStr := in.(string)
	if !isStr {
		return fail(errStringType(loc, in))
	}
	n := utf8.RuneCountInString(v)
	if s.MinLength > 0 && n < s.MinLength {
		return fail(errStringTooShort(loc, in, s.MinLength))
	}
	if s.MaxLength > 0 && n > s.MaxLength {
		return fail(errStringTooLong(loc, in, s.MaxLength))
	}
	return ok(v, exact)
}

// UpperCase upper-cases a string before Schema validates it (pydantic's
// BeforeValidator(str.upper)); other values reach Schema unchanged.
type UpperCase struct{ Schema Schema }

func (u UpperCase) validatorName() string { return u.Schema.validatorName() }

func (u UpperCase) validate(in any, loc []any) (outcome, []ValidationError) {
	if s, isString := in.(string); isString {
		in = strings.ToUpper(s)
	}
	return u.Schema.validate(in, loc)
}

// UUID4 is pydantic's UUID4: any spelling uuid::Uuid::parse_str accepts,
// version 4 with the RFC 4122 variant; the variable is the lowercase
// hyphenated form.
type UUID4 struct{}

func (UUID4) validatorName() string { return "uuid" }

func (UUID4) validate(in any, loc []any) (outcome, []ValidationError) {
	v, isStr := in.(string)
	if !isStr {
		return fail(newError("uuid_type", loc, "UUID input should be a string, bytes or UUID object", in))
	}
	canonical, version, rfc4122, errText := parseUUID(v)
	if errText != "" {
		return fail(newError("uuid_parsing", loc, "Input should be a valid UUID, "+errText, in, "error", errText))
	}
	if version != 4 || !rfc4122 {
		return fail(newError("uuid_version", loc, "UUID version 4 expected", in, "expected_version", 4))
	}
	return ok(canonical, lax)
}

// Enum is a Python StrEnum: the input must be one of Values exactly. Name is
// the enum class, which appears in union tags (str-enum[Name]).
type Enum struct {
	Name   string
	Values []string
}

func (e Enum) validatorName() string { return "str-enum[" + e.Name + "]" }

func (e Enum) validate(in any, loc []any) (outcome, []ValidationError) {
	if v, isStr := in.(string); isStr {
		for _, allowed := range e.Values {
			if v == allowed {
				return ok(v, lax)
			}
		}
	}
	return fail(errEnum(loc, in, e.Values))
}

// DateTime is a datetime (AwareDatetime when Aware). The variable is RFC 3339
// in UTC; a naive input is taken as UTC.
type DateTime struct {
	Aware bool
	// Past rejects times after now, as an after-validator raising "Timestamp must be in the
	// past." does upstream; now is the server's clock.
	Past bool
}

func (DateTime) validatorName() string { return "datetime" }

func (d DateTime) validate(in any, loc []any) (outcome, []ValidationError) {
	var pt parsedTime
	switch v := in.(type) {
	case string:
		var errText string
		if pt, errText = parseSpeedateDateTime(v); errText != "" {
			return fail(newError("datetime_from_date_parsing", loc, "Input should be a valid datetime or date, "+errText, in, "error", errText))
		}
	case *big.Int, float64:
		f, _ := toFloat(v)
		var good bool
		if pt, good = timestampTime(f); !good {
			return fail(newError("datetime_parsing", loc, "Input should be a valid datetime, dates after 9999 are not supported as unix timestamps", in, "error", "dates after 9999 are not supported as unix timestamps"))
		}
	default:
		return fail(newError("datetime_type", loc, "Input should be a valid datetime", in))
	}
	if pt.year == 0 {
		return fail(newError("datetime_parsing", loc, "Input should be a valid datetime, year 0 is out of range", in, "error", "year 0 is out of range"))
	}
	if d.Aware && !pt.aware {
		return fail(newError("timezone_aware", loc, "Input should have timezone info", in))
	}
	if d.Past && pt.t.After(time.Now()) {
		return fail(errValue(loc, in, "Timestamp must be in the past."))
	}
	return ok(formatTime(pt.t), lax)
}

func toFloat(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case *big.Int:
		f, _ := new(big.Float).SetInt(v).Float64()
		return f, true
	}
	return 0, false
}

// Any accepts every value unchanged (pydantic's Any), except infinities and NaN, which
// no JSON document or jsonb column can hold.
type Any struct{}

func (Any) validatorName() string { return "any" }

func (Any) validate(in any, loc []any) (outcome, []ValidationError) {
	if errs := nonFinite(in, loc); len(errs) > 0 {
		return fail(errs...)
	}
	return ok(graphQLValue(in), exact)
}

// graphQLValue converts a request value to a GraphQL variable value.
func graphQLValue(v any) any {
	switch v := v.(type) {
	case *big.Int:
		return intValue(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = graphQLValue(e)
		}
		return out
	case *Dict:
		out := make(map[string]any, len(v.keys))
		for _, k := range v.keys {
			out[k] = graphQLValue(v.vals[k])
		}
		return out
	}
	return v
}
