package ratelimit

import (
	"bytes"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/google/uuid"
)

// The per-key rule must see the same (organization_id, key) as the handler,
// or a client could dress up one key as many and escape the rule. The
// handler parses bodies as Python's json.loads does, which differs from
// json.Unmarshal into a struct in ways a client controls: object keys match
// case-sensitively (Unmarshal would also fill Key from "KEY"), UTF-16/32 and
// a UTF-8 BOM are accepted, and NaN or Infinity anywhere in the body is
// valid. So licenseKeyOf transcodes like json.loads, scans only the top-level
// object and skips other values without judging them; encoding/json still
// decodes the two strings, escapes included.

// licenseKeyOf returns the canonical organization_id and the key of a
// license-key request body. ok is false when the handler would reject the
// body anyway (not an object, a field missing or not a string, an invalid
// UUID), since such a request cannot touch a license key.
func licenseKeyOf(body []byte) (org, key string, ok bool) {
	text, ok := jsonText(body)
	if !ok {
		return "", "", false
	}
	rawOrg, key, ok := scanObject(text)
	if !ok || key == "" {
		return "", "", false
	}
	id, err := uuid.Parse(rawOrg)
	if err != nil {
		return "", "", false
	}
	return id.String(), key, true
}

// scanObject returns the last string values of the top-level "organization_id"
// and "key" members; a later non-string duplicate clears the earlier value,
// as the last duplicate wins in json.loads.
func scanObject(s []byte) (org, key string, ok bool) {
	p := &scanner{s: s}
	if !p.expect('{') || p.expect('}') {
		return "", "", false
	}
	for {
		name, nameOK := p.str()
		if !nameOK || !p.expect(':') {
			return "", "", false
		}
		wanted := name == "organization_id" || name == "key"
		value, valueOK := p.value(wanted)
		if !valueOK {
			return "", "", false
		}
		switch name {
		case "organization_id":
			org = value
		case "key":
			key = value
		}
		if p.expect('}') {
			return org, key, true
		}
		if !p.expect(',') {
			return "", "", false
		}
	}
}

// scanner walks JSON text without building values.
type scanner struct {
	s []byte
	i int
}

func (p *scanner) skipWS() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (p *scanner) peek() byte {
	p.skipWS()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// expect consumes c if it is the next non-space byte.
func (p *scanner) expect(c byte) bool {
	if p.peek() != c {
		return false
	}
	p.i++
	return true
}

// value consumes one member value. With decode set, a string value is
// returned decoded; any other value yields "".
func (p *scanner) value(decode bool) (string, bool) {
	if decode && p.peek() == '"' {
		return p.str()
	}
	return "", p.skipValue()
}

// str consumes and decodes a string literal.
func (p *scanner) str() (string, bool) {
	if p.peek() != '"' {
		return "", false
	}
	start := p.i
	if !p.skipString() {
		return "", false
	}
	lit := p.s[start:p.i]
	if bytes.IndexByte(lit, '\\') < 0 && utf8.Valid(lit) {
		return string(lit[1 : len(lit)-1]), true
	}
	var v string
	if err := json.Unmarshal(lit, &v); err != nil {
		return "", false
	}
	return v, true
}

// skipString moves past the string literal starting at p.i.
func (p *scanner) skipString() bool {
	for j := p.i + 1; j < len(p.s); j++ {
		switch p.s[j] {
		case '\\':
			j++
		case '"':
			p.i = j + 1
			return true
		}
	}
	return false
}

// skipValue moves past one member value of any kind, stopping before the ','
// or '}' that follows it. Nesting is tracked but not checked for balance: a
// malformed value is the handler's to report.
func (p *scanner) skipValue() bool {
	depth := 0
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case '"':
			if !p.skipString() {
				return false
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return true
			}
			depth--
		case ',':
			if depth == 0 {
				return true
			}
		}
		p.i++
	}
	return false
}

// jsonText returns body as UTF-8, detecting the encoding as json.loads does
// for bytes (BOMs, then the zero-byte pattern of the first four bytes).
func jsonText(b []byte) ([]byte, bool) {
	switch {
	case bytes.HasPrefix(b, []byte{0, 0, 0xfe, 0xff}):
		return utf32Text(b[4:], true)
	case bytes.HasPrefix(b, []byte{0xff, 0xfe, 0, 0}):
		return utf32Text(b[4:], false)
	case bytes.HasPrefix(b, []byte{0xfe, 0xff}):
		return utf16Text(b[2:], true)
	case bytes.HasPrefix(b, []byte{0xff, 0xfe}):
		return utf16Text(b[2:], false)
	case bytes.HasPrefix(b, []byte{0xef, 0xbb, 0xbf}):
		return b[3:], true
	case len(b) >= 4 && b[0] == 0:
		if b[1] != 0 {
			return utf16Text(b, true)
		}
		return utf32Text(b, true)
	case len(b) >= 4 && b[1] == 0:
		if b[2] != 0 || b[3] != 0 {
			return utf16Text(b, false)
		}
		return utf32Text(b, false)
	case len(b) == 2 && b[0] == 0:
		return utf16Text(b, true)
	case len(b) == 2 && b[1] == 0:
		return utf16Text(b, false)
	}
	return b, true
}

func utf16Text(b []byte, bigEndian bool) ([]byte, bool) {
	if len(b)%2 != 0 {
		return nil, false
	}
	units := make([]uint16, len(b)/2)
	for i := range units {
		hi, lo := b[2*i], b[2*i+1]
		if !bigEndian {
			hi, lo = lo, hi
		}
		units[i] = uint16(hi)<<8 | uint16(lo)
	}
	return []byte(string(utf16.Decode(units))), true
}

func utf32Text(b []byte, bigEndian bool) ([]byte, bool) {
	if len(b)%4 != 0 {
		return nil, false
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i += 4 {
		c := b[i : i+4]
		if !bigEndian {
			c = []byte{c[3], c[2], c[1], c[0]}
		}
		r := rune(uint32(c[0])<<24 | uint32(c[1])<<16 | uint32(c[2])<<8 | uint32(c[3]))
		if r > utf8.MaxRune || r < 0 {
			return nil, false
		}
		out = utf8.AppendRune(out, r)
	}
	return out, true
}
