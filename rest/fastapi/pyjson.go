package fastapi

import (
	"errors"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Upstream parses request bodies with Python's json.loads before pydantic
// sees them. Its syntax errors surface to clients verbatim (422 json_invalid
// with the decoder message and the character offset), so this file mirrors
// CPython's C scanner (Modules/_json.c, 3.13+) instead of using encoding/json.

// jsonSyntaxError is a json.JSONDecodeError: msg and a character offset.
type jsonSyntaxError struct {
	msg string
	pos int // in characters (code points), as Python counts
}

// ErrUnparsableBody is a body FastAPI cannot even decode (invalid UTF-8, an
// integer literal over Python's 4300 digits, nesting beyond the recursion
// limit); it is answered 400 {"detail":"There was an error parsing the body"}.
var ErrUnparsableBody = errors.New("fastapi: there was an error parsing the body")

// maxJSONDepth stands in for Python's recursion limit.
const maxJSONDepth = 1000

// maxIntDigits is Python's default int_max_str_digits.
const maxIntDigits = 4300

// decodePythonJSON decodes body as json.loads(bytes) does.
func decodePythonJSON(body []byte) (any, *jsonSyntaxError, error) {
	return decodePythonJSONWith(body, nil)
}

// decodePythonJSONWith is decodePythonJSON with the list under hook's key in the top-level
// object handed to the hook item by item (see Stream); nil hooks nothing.
func decodePythonJSONWith(body []byte, hook *listHook) (any, *jsonSyntaxError, error) {
	s, err := decodePythonText(body)
	if err != nil {
		return nil, nil, err
	}
	p := &pyParser{s: s, hook: hook}
	i := p.skipWS(0)
	v, end, perr := p.value(i, 0)
	if perr == nil {
		end = p.skipWS(end)
		if end != len(s) {
			perr = &parseErr{msg: "Extra data", at: end}
		}
	}
	if perr != nil {
		if perr.fatal {
			return nil, nil, ErrUnparsableBody
		}
		return nil, &jsonSyntaxError{msg: perr.msg, pos: utf8.RuneCountInString(s[:perr.at])}, nil
	}
	return v, nil, nil
}

type parseErr struct {
	msg   string
	at    int // byte offset into the text
	fatal bool
}

type pyParser struct {
	s    string
	hook *listHook
}

func isPyWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (p *pyParser) skipWS(i int) int {
	for i < len(p.s) && isPyWS(p.s[i]) {
		i++
	}
	return i
}

// value is scan_once: a StopIteration there becomes "Expecting value" at
// the same offset once it reaches raw_decode, so it is reported directly.
func (p *pyParser) value(i, depth int) (any, int, *parseErr) {
	if depth > maxJSONDepth {
		return nil, 0, &parseErr{fatal: true}
	}
	s := p.s
	if i >= len(s) {
		return nil, 0, &parseErr{msg: "Expecting value", at: i}
	}
	switch c := s[i]; {
	case c == '"':
		return p.str(i + 1)
	case c == '{':
		return p.object(i+1, depth)
	case c == '[':
		return p.array(i+1, depth)
	case c == 'n' && strings.HasPrefix(s[i:], "null"):
		return nil, i + 4, nil
	case c == 't' && strings.HasPrefix(s[i:], "true"):
		return true, i + 4, nil
	case c == 'f' && strings.HasPrefix(s[i:], "false"):
		return false, i + 5, nil
	case c == 'N' && strings.HasPrefix(s[i:], "NaN"):
		f, _ := strconv.ParseFloat("NaN", 64)
		return f, i + 3, nil
	case c == 'I' && strings.HasPrefix(s[i:], "Infinity"):
		f, _ := strconv.ParseFloat("+Inf", 64)
		return f, i + 8, nil
	case c == '-' && strings.HasPrefix(s[i:], "-Infinity"):
		f, _ := strconv.ParseFloat("-Inf", 64)
		return f, i + 9, nil
	}
	return p.number(i)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number is _match_number_unicode: -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?,
// backtracking over a fraction or exponent that has no digits.
func (p *pyParser) number(start int) (any, int, *parseErr) {
	s, i := p.s, start
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	case i < len(s) && s[i] == '0':
		i++
	default:
		return nil, 0, &parseErr{msg: "Expecting value", at: start}
	}
	isFloat := false
	if i+1 < len(s) && s[i] == '.' && isDigit(s[i+1]) {
		isFloat = true
		i += 2
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '-' || s[j] == '+') {
			j++
		}
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k > j {
			isFloat = true
			i = k
		}
	}
	text := s[start:i]
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, 0, &parseErr{fatal: true}
		}
		return f, i, nil
	}
	if len(strings.TrimPrefix(text, "-")) > maxIntDigits {
		return nil, 0, &parseErr{fatal: true}
	}
	n, ok := new(big.Int).SetString(text, 10)
	if !ok {
		return nil, 0, &parseErr{fatal: true}
	}
	return n, i, nil
}

// str is scanstring_unicode; begin is the offset just after the quote.
func (p *pyParser) str(begin int) (any, int, *parseErr) {
	s := p.s
	var b strings.Builder
	i := begin
	for {
		j := i
		for j < len(s) && s[j] != '"' && s[j] != '\\' {
			if s[j] <= 0x1f {
				return nil, 0, &parseErr{msg: "Invalid control character at", at: j}
			}
			j++
		}
		if j >= len(s) {
			return nil, 0, &parseErr{msg: "Unterminated string starting at", at: begin - 1}
		}
		b.WriteString(s[i:j])
		if s[j] == '"' {
			return b.String(), j + 1, nil
		}
		// Backslash at j.
		if j+1 >= len(s) {
			return nil, 0, &parseErr{msg: "Unterminated string starting at", at: begin - 1}
		}
		esc := s[j+1]
		if esc != 'u' {
			r, ok := simpleEscape(esc)
			if !ok {
				return nil, 0, &parseErr{msg: "Invalid \\escape", at: j}
			}
			b.WriteByte(r)
			i = j + 2
			continue
		}
		u := j + 1 // offset of 'u'; CPython wants a character after the four digits
		if u+5 >= len(s) {
			return nil, 0, &parseErr{msg: "Invalid \\uXXXX escape", at: u}
		}
		c, ok := hex4(s[u+1 : u+5])
		if !ok {
			return nil, 0, &parseErr{msg: "Invalid \\uXXXX escape", at: u}
		}
		end := u + 5
		r := rune(c)
		if utf16.IsSurrogate(r) && c < 0xdc00 && end+6 < len(s) && s[end] == '\\' && s[end+1] == 'u' {
			c2, ok := hex4(s[end+2 : end+6])
			if !ok {
				return nil, 0, &parseErr{msg: "Invalid \\uXXXX escape", at: end + 1}
			}
			if c2 >= 0xdc00 && c2 <= 0xdfff {
				r = utf16.DecodeRune(r, rune(c2))
				end += 6
			}
		}
		b.WriteRune(r) // a lone surrogate is written as U+FFFD
		i = end
	}
}

func simpleEscape(c byte) (byte, bool) {
	switch c {
	case '"', '\\', '/':
		return c, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

func hex4(s string) (uint16, bool) {
	if len(s) != 4 {
		return 0, false
	}
	var c uint16
	for i := 0; i < 4; i++ {
		d := s[i]
		c <<= 4
		switch {
		case d >= '0' && d <= '9':
			c |= uint16(d - '0')
		case d >= 'a' && d <= 'f':
			c |= uint16(d - 'a' + 10)
		case d >= 'A' && d <= 'F':
			c |= uint16(d - 'A' + 10)
		default:
			return 0, false
		}
	}
	return c, true
}

func (p *pyParser) object(i, depth int) (any, int, *parseErr) {
	s := p.s
	obj := NewDict()
	i = p.skipWS(i)
	if i < len(s) && s[i] == '}' {
		return obj, i + 1, nil
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return nil, 0, &parseErr{msg: "Expecting property name enclosed in double quotes", at: i}
		}
		k, next, err := p.str(i + 1)
		if err != nil {
			return nil, 0, err
		}
		i = p.skipWS(next)
		if i >= len(s) || s[i] != ':' {
			return nil, 0, &parseErr{msg: "Expecting ':' delimiter", at: i}
		}
		i = p.skipWS(i + 1)
		var v any
		var err2 *parseErr
		if depth == 0 && p.hook != nil && k.(string) == p.hook.key && i < len(s) && s[i] == '[' {
			v, next, err2 = p.streamArray(i+1, depth+1)
		} else {
			v, next, err2 = p.value(i, depth+1)
		}
		if err2 != nil {
			return nil, 0, err2
		}
		obj.Set(k.(string), v)
		i = p.skipWS(next)
		if i < len(s) && s[i] == '}' {
			return obj, i + 1, nil
		}
		if i >= len(s) || s[i] != ',' {
			return nil, 0, &parseErr{msg: "Expecting ',' delimiter", at: i}
		}
		comma := i
		i = p.skipWS(i + 1)
		if i < len(s) && s[i] == '}' {
			return nil, 0, &parseErr{msg: "Illegal trailing comma before end of object", at: comma}
		}
	}
}

func (p *pyParser) array(i, depth int) (any, int, *parseErr) {
	s := p.s
	out := []any{}
	i = p.skipWS(i)
	if i < len(s) && s[i] == ']' {
		return out, i + 1, nil
	}
	for {
		v, next, err := p.value(i, depth+1)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, v)
		i = p.skipWS(next)
		if i < len(s) && s[i] == ']' {
			return out, i + 1, nil
		}
		if i >= len(s) || s[i] != ',' {
			return nil, 0, &parseErr{msg: "Expecting ',' delimiter", at: i}
		}
		comma := i
		i = p.skipWS(i + 1)
		if i < len(s) && s[i] == ']' {
			return nil, 0, &parseErr{msg: "Illegal trailing comma before end of array", at: comma}
		}
	}
}
