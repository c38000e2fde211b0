package fastapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Request values are held the way Python holds them after json.loads, because
// upstream validates (and echoes back in 422 items) those Python objects, not
// the raw bytes: integers are arbitrary precision (*big.Int), other numbers
// are float64, objects keep their key order (*Dict), arrays are []any,
// and strings, booleans and nil map to themselves.

// Dict is a JSON object as Python's dict holds it: a key keeps the position of its first
// occurrence and the value of its last. Request bodies parse into it, so a 422 echoes an
// object's keys in the client's order; WriteJSON writes it in that order too, for answers
// whose key order upstream fixes.
type Dict struct {
	keys []string
	vals map[string]any
}

// NewDict returns an empty Dict.
func NewDict() *Dict { return &Dict{vals: map[string]any{}} }

// Set sets k to v, appending k when it is new.
func (o *Dict) Set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *Dict) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// WriteJSON writes v as Starlette's JSONResponse would (json.dumps with ensure_ascii=False
// and compact separators): the request values of this package (nil, bool, *big.Int,
// float64, string, []any, *Dict) and the Go values answers are made of (int, int64,
// []string, json.RawMessage written as is). Non-finite floats, which Python would refuse to
// encode, become null.
func WriteJSON(buf *bytes.Buffer, v any) {
	switch v := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(v))
	case *big.Int:
		buf.WriteString(v.String())
	case int:
		buf.WriteString(strconv.Itoa(v))
	case int64:
		buf.WriteString(strconv.FormatInt(v, 10))
	case float64:
		buf.WriteString(pyFloatRepr(v))
	case string:
		writePyString(buf, v)
	case json.RawMessage:
		buf.Write(v)
	case []string:
		buf.WriteByte('[')
		for i, s := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			writePyString(buf, s)
		}
		buf.WriteByte(']')
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			WriteJSON(buf, e)
		}
		buf.WriteByte(']')
	case *Dict:
		buf.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writePyString(buf, k)
			buf.WriteByte(':')
			WriteJSON(buf, v.vals[k])
		}
		buf.WriteByte('}')
	default:
		b, err := json.Marshal(v)
		if err != nil {
			buf.WriteString("null")
			return
		}
		buf.Write(b)
	}
}

// pyJSON returns WriteJSON's output as a raw message.
func pyJSON(v any) json.RawMessage {
	var buf bytes.Buffer
	WriteJSON(&buf, v)
	return buf.Bytes()
}

// writePyString escapes like json.dumps(ensure_ascii=False): only the quote,
// the backslash and control characters are escaped.
func writePyString(buf *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				buf.WriteString("\ufffd")
			} else {
				buf.WriteString(s[i : i+n])
			}
			i += n
			continue
		}
		switch c {
		case '"':
			buf.WriteString(`\"`)
		case '\\':
			buf.WriteString(`\\`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		case '\b':
			buf.WriteString(`\b`)
		case '\f':
			buf.WriteString(`\f`)
		default:
			if c < 0x20 {
				buf.WriteString(`\u00`)
				buf.WriteByte(hex[c>>4])
				buf.WriteByte(hex[c&0xf])
			} else {
				buf.WriteByte(c)
			}
		}
		i++
	}
	buf.WriteByte('"')
}

// pyFloatRepr formats f as Python's repr(float): the shortest round-tripping
// digits, fixed notation for exponents in [-4, 16), a trailing ".0" on whole
// numbers, and a two-digit minimum exponent otherwise (1e+16, 1e-05).
func pyFloatRepr(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return "null"
	}
	sign := ""
	if math.Signbit(f) {
		sign = "-"
		f = -f
	}
	if f == 0 {
		return sign + "0.0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expText, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expText)
	decpt := exp + 1
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			return sign + "0." + strings.Repeat("0", -decpt) + digits
		case decpt >= len(digits):
			return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
		default:
			return sign + digits[:decpt] + "." + digits[decpt:]
		}
	}
	out := digits[:1]
	if len(digits) > 1 {
		out += "." + digits[1:]
	}
	expSign := "+"
	if exp < 0 {
		expSign = "-"
		exp = -exp
	}
	expDigits := strconv.Itoa(exp)
	if len(expDigits) < 2 {
		expDigits = "0" + expDigits
	}
	return sign + out + "e" + expSign + expDigits
}

// pyRepr is Python's repr of a str, which pydantic uses to list the expected
// values of an enum ('a', 'b' or 'c').
func pyRepr(s string) string {
	quote := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(quote):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatInt(int64(r)|0x100, 16)[1:])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// pyOrList joins reprs the way pydantic-core's expected_repr_name does:
// "'a'", "'a' or 'b'", "'a', 'b' or 'c'".
func pyOrList(values []string) string {
	reprs := make([]string, len(values))
	for i, v := range values {
		reprs[i] = pyRepr(v)
	}
	if len(reprs) <= 1 {
		return strings.Join(reprs, "")
	}
	return strings.Join(reprs[:len(reprs)-1], ", ") + " or " + reprs[len(reprs)-1]
}

// PyFloat is Python's str of a float, which the csv module writes for one: upstream's CSV
// exports print amounts as cents / 100 this way (19.99, 10.0).
func PyFloat(f float64) string { return pyFloatRepr(f) }

// PyRepr is Python's repr of a str, as a tuple or a message quoting a value prints it.
func PyRepr(s string) string { return pyRepr(s) }

// PyASCII escapes a JSON text as json.dumps does by default (ensure_ascii): every character
// outside printable ASCII becomes \uXXXX, two of them beyond the Basic Multilingual Plane.
// The text must be valid JSON, where such characters occur only inside strings; PostgreSQL
// prints jsonb with json.dumps' separators, so this turns its text into json.dumps' output.
func PyASCII(jsonText string) string {
	var b strings.Builder
	for _, r := range jsonText {
		switch {
		case r < 0x7f:
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		}
	}
	return b.String()
}
