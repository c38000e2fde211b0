package fastapi

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
)

// Numbers and booleans as pydantic-core coerces them in lax Python mode:
// strings are parsed (str_as_int, str_as_float, str_as_bool), floats with no
// fraction become integers, and 0/1 become booleans.

// Bound is an optional integer constraint; the zero value means none.
type Bound struct {
	n   int64
	set bool
}

// At returns a Bound at n.
func At(n int64) Bound { return Bound{n: n, set: true} }

// Int is an int with optional bounds (pydantic's gt, ge, lt, le).
type Int struct {
	Gt, Ge, Lt, Le Bound
}

// Int32 is Polar's Int32: an int bounded to PostgreSQL's INTEGER range.
func Int32() Int { return Int{Ge: At(math.MinInt32), Le: At(math.MaxInt32)} }

func (i Int) validatorName() string {
	if i.Gt.set || i.Ge.set || i.Lt.set || i.Le.set {
		return "constrained-int"
	}
	return "int"
}

func (i Int) validate(in any, loc []any) (outcome, []ValidationError) {
	n, e, verr := laxInt(in, loc)
	if verr != nil {
		return fail(*verr)
	}
	// pydantic-core checks le, lt, ge, gt in this order.
	switch {
	case i.Le.set && n.Cmp(big.NewInt(i.Le.n)) > 0:
		return fail(newError("less_than_equal", loc, "Input should be less than or equal to "+strconv.FormatInt(i.Le.n, 10), in, "le", i.Le.n))
	case i.Lt.set && n.Cmp(big.NewInt(i.Lt.n)) >= 0:
		return fail(newError("less_than", loc, "Input should be less than "+strconv.FormatInt(i.Lt.n, 10), in, "lt", i.Lt.n))
	case i.Ge.set && n.Cmp(big.NewInt(i.Ge.n)) < 0:
		return fail(newError("greater_than_equal", loc, "Input should be greater than or equal to "+strconv.FormatInt(i.Ge.n, 10), in, "ge", i.Ge.n))
	case i.Gt.set && n.Cmp(big.NewInt(i.Gt.n)) <= 0:
		return fail(newError("greater_than", loc, "Input should be greater than "+strconv.FormatInt(i.Gt.n, 10), in, "gt", i.Gt.n))
	}
	return ok(intValue(n), e)
}

// intValue is n as a GraphQL variable.
func intValue(n *big.Int) any {
	if n.IsInt64() {
		return n.Int64()
	}
	return json.Number(n.String())
}

// laxInt is pydantic-core's validate_int in lax Python mode.
func laxInt(in any, loc []any) (*big.Int, exactness, *ValidationError) {
	switch v := in.(type) {
	case *big.Int:
		return v, exact, nil
	case bool:
		if v {
			return big.NewInt(1), lax, nil
		}
		return big.NewInt(0), lax, nil
	case float64:
		n, verr := floatAsInt(v, loc, in)
		return n, lax, verr
	case string:
		n, verr := strAsInt(v, loc, in)
		return n, lax, verr
	}
	e := newError("int_type", loc, "Input should be a valid integer", in)
	return nil, lax, &e
}

func floatAsInt(f float64, loc []any, in any) (*big.Int, *ValidationError) {
	var e ValidationError
	switch {
	case math.IsInf(f, 0) || math.IsNaN(f):
		e = newError("finite_number", loc, "Input should be a finite number", in)
	case f != math.Trunc(f):
		e = newError("int_from_float", loc, "Input should be a valid integer, got a number with a fractional part", in)
	case f <= math.MinInt64 || f >= math.MaxInt64:
		e = newError("int_parsing_size", loc, "Unable to parse input string as an integer, exceeded maximum size", in)
	default:
		return big.NewInt(int64(f)), nil
	}
	return nil, &e
}

// strAsInt is pydantic-core's str_as_int: a JSON-style integer, else the
// string cleaned as clean_int_str does (whitespace, a leading "+", leading
// zeros, a ".000" tail and single underscores removed).
func strAsInt(s string, loc []any, in any) (*big.Int, *ValidationError) {
	n, tooBig := jsonInt(s)
	if tooBig {
		e := newError("int_parsing_size", loc, "Unable to parse input string as an integer, exceeded maximum size", in)
		return nil, &e
	}
	if n == nil {
		if cleaned, changed := cleanIntStr(s); changed {
			n, _ = jsonInt(cleaned)
		}
	}
	if n != nil {
		return n, nil
	}
	e := newError("int_parsing", loc, "Input should be a valid integer, unable to parse string as an integer", in)
	return nil, &e
}

// jsonInt parses exactly -?(0|[1-9][0-9]*), as jiter's NumberInt does.
func jsonInt(s string) (n *big.Int, tooBig bool) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || (digits[0] == '0' && len(digits) > 1) {
		return nil, false
	}
	for i := 0; i < len(digits); i++ {
		if !isDigit(digits[i]) {
			return nil, false
		}
	}
	if len(digits) > maxIntDigits {
		return nil, true
	}
	n, _ = new(big.Int).SetString(s, 10)
	return n, false
}

func cleanIntStr(s string) (string, bool) {
	before := len(s)
	s = strings.TrimFunc(s, unicode.IsSpace)
	if rest, found := strings.CutPrefix(s, "+"); found {
		if strings.HasPrefix(rest, "-") {
			return "", false
		}
		s = rest
	}
	sign := ""
	if rest, found := strings.CutPrefix(s, "-"); found {
		if strings.HasPrefix(rest, "-") || strings.HasPrefix(rest, "+") {
			return "", false
		}
		sign, s = "-", rest
	}
	s, valid := stripLeadingZeros(s)
	if !valid {
		return "", false
	}
	if dot := strings.IndexByte(s, '.'); dot >= 0 && dot+1 < len(s) && strings.Trim(s[dot+1:], "0") == "" {
		s = s[:dot]
	}
	if !strings.HasPrefix(s, "_") && !strings.HasSuffix(s, "_") && strings.Contains(s, "_") && !strings.Contains(s, "__") {
		return sign + strings.ReplaceAll(s, "_", ""), true
	}
	if len(s) == before {
		return "", false
	}
	return sign + s, true
}

func stripLeadingZeros(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	switch c := s[0]; {
	case c >= '1' && c <= '9', c == '-':
		return s, true
	case c != '0':
		return "", false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '0' || c == '_':
		case (c >= '1' && c <= '9') || c == '-':
			return s[i:], true
		case c == '.':
			return s[i-1:], true
		default:
			return "", false
		}
	}
	return s[len(s)-1:], true
}

// Float is a float. pydantic allows inf and nan by default, and upstream then fails to
// store or render them (a 500); unless AllowInfNaN is set, they are refused here as
// allow_inf_nan=False refuses them.
type Float struct {
	AllowInfNaN bool
}

func (Float) validatorName() string { return "float" }

func (f Float) validate(in any, loc []any) (outcome, []ValidationError) {
	oc, errs := f.lax(in, loc)
	if v, isFloat := oc.value.(float64); !f.AllowInfNaN && len(errs) == 0 && isFloat && (math.IsInf(v, 0) || math.IsNaN(v)) {
		return fail(errFinite(loc, in))
	}
	return oc, errs
}

func (Float) lax(in any, loc []any) (outcome, []ValidationError) {
	switch v := in.(type) {
	case float64:
		return ok(v, exact)
	case *big.Int:
		f, _ := new(big.Float).SetInt(v).Float64()
		return ok(f, strict)
	case bool:
		if v {
			return ok(1.0, lax)
		}
		return ok(0.0, lax)
	case string:
		t := strings.TrimFunc(v, unicode.IsSpace)
		if !strings.ContainsAny(t, "xXpP") {
			if f, err := strconv.ParseFloat(strings.ReplaceAll(t, "_", ""), 64); err == nil && !strings.Contains(t, "__") && !strings.HasPrefix(t, "_") && !strings.HasSuffix(t, "_") {
				return ok(f, lax)
			}
		}
		return fail(newError("float_parsing", loc, "Input should be a valid number, unable to parse string as a number", in))
	}
	return fail(newError("float_type", loc, "Input should be a valid number", in))
}

// Bool is a bool with pydantic's lax inputs: 0/1 and the strings
// true/false/1/0/yes/no/on/off/t/f/y/n in any case.
type Bool struct{}

func (Bool) validatorName() string { return "bool" }

func (Bool) validate(in any, loc []any) (outcome, []ValidationError) {
	parsing := func() (outcome, []ValidationError) {
		return fail(newError("bool_parsing", loc, "Input should be a valid boolean, unable to interpret input", in))
	}
	switch v := in.(type) {
	case bool:
		return ok(v, exact)
	case string:
		switch asciiLower(v) {
		case "0", "f", "n", "no", "off", "false":
			return ok(false, lax)
		case "1", "t", "y", "on", "yes", "true":
			return ok(true, lax)
		}
		return parsing()
	case *big.Int:
		// Integers reach int_as_bool through an i64; larger ones fall
		// through to the type error, as in pydantic-core.
		switch {
		case !v.IsInt64():
		case v.Sign() == 0:
			return ok(false, lax)
		case v.Int64() == 1:
			return ok(true, lax)
		default:
			return parsing()
		}
	case float64:
		switch v {
		case 0:
			return ok(false, lax)
		case 1:
			return ok(true, lax)
		}
		if v == math.Trunc(v) && v > math.MinInt64 && v < math.MaxInt64 {
			return parsing()
		}
	}
	return fail(newError("bool_type", loc, "Input should be a valid boolean", in))
}

// asciiLower lowers ASCII letters only, like Rust's eq_ignore_ascii_case.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Decimal is pydantic's Decimal with max_digits and decimal_places: integers, floats and
// numeric strings; trailing zeros of the fraction do not count. The variable keeps the
// input's JSON type (a number stays a number, a string a string).
type Decimal struct {
	MaxDigits     int
	DecimalPlaces int
}

func (Decimal) validatorName() string { return "decimal" }

func (d Decimal) validate(in any, loc []any) (outcome, []ValidationError) {
	var text string
	switch v := in.(type) {
	case *big.Int:
		text = v.String()
	case float64:
		text = strconv.FormatFloat(v, 'f', -1, 64)
	case string:
		text = strings.TrimFunc(v, unicode.IsSpace)
	default:
		return fail(newError("decimal_type", loc, "Decimal input should be an integer, float, string or Decimal object", in))
	}
	digits, places, good := decimalDigits(text)
	if !good {
		return fail(newError("decimal_parsing", loc, "Input should be a valid decimal", in))
	}
	if d.MaxDigits > 0 && digits > d.MaxDigits {
		return fail(newError("decimal_max_digits", loc, fmt.Sprintf("Decimal input should have no more than %d digit%s in total", d.MaxDigits, plural(d.MaxDigits)), in, "max_digits", d.MaxDigits))
	}
	if d.DecimalPlaces > 0 && places > d.DecimalPlaces {
		return fail(newError("decimal_max_places", loc, fmt.Sprintf("Decimal input should have no more than %d decimal place%s", d.DecimalPlaces, plural(d.DecimalPlaces)), in, "decimal_places", d.DecimalPlaces))
	}
	if n, isInt := in.(*big.Int); isInt && n.IsInt64() {
		return ok(n.Int64(), lax)
	}
	return ok(in, lax)
}

// decimalDigits counts a plain decimal's digits and decimal places the way pydantic checks
// a normalised Decimal: trailing zeros dropped, and a fraction's places counted as digits
// when they are more (0.0012 has 4).
func decimalDigits(s string) (digits, places int, good bool) {
	s = strings.TrimLeft(s, "+-")
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" {
		return 0, 0, false
	}
	for _, part := range []string{whole, frac} {
		for _, c := range part {
			if c < '0' || c > '9' {
				return 0, 0, false
			}
		}
	}
	whole = strings.TrimLeft(whole, "0")
	frac = strings.TrimRight(frac, "0")
	digits = len(whole) + len(frac)
	if whole == "" {
		digits = len(strings.TrimLeft(frac, "0"))
	}
	return max(digits, len(frac)), len(frac), true
}

// Pattern is a str matching a regular expression that is a plain literal, as pydantic
// matches patterns: anywhere in the string.
type Pattern struct {
	Literal string
}

func (Pattern) validatorName() string { return "constrained-str" }

func (p Pattern) validate(in any, loc []any) (outcome, []ValidationError) {
	v, isStr := in.(string)
	if !isStr {
		return fail(errStringType(loc, in))
	}
	if !strings.Contains(v, p.Literal) {
		return fail(newError("string_pattern_mismatch", loc, "String should match pattern '"+p.Literal+"'", in, "pattern", p.Literal))
	}
	return ok(v, exact)
}
