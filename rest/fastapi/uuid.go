package fastapi

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// pydantic parses UUIDs with the Rust uuid crate and puts its error text in
// the 422 message ("Input should be a valid UUID, invalid group count: ..."),
// so parseUUID accepts exactly what Uuid::parse_str accepts and explains a
// failure with InvalidUuid::into_err's wording.

// parseUUID returns the canonical (lowercase, hyphenated) form, the version
// and whether the variant is RFC 4122's (pydantic wants both for UUID4).
func parseUUID(s string) (canonical string, version int, rfc4122 bool, errText string) {
	var body string
	switch {
	case len(s) == 32:
		body = s
	case len(s) == 36:
		body = s
	case len(s) == 38 && s[0] == '{' && s[37] == '}':
		body = s[1:37]
	case len(s) == 45 && strings.HasPrefix(s, "urn:uuid:"):
		body = s[9:]
	}
	if b, ok := uuidBytes(body); ok {
		var out [36]byte
		hex.Encode(out[0:8], b[0:4])
		out[8] = '-'
		hex.Encode(out[9:13], b[4:6])
		out[13] = '-'
		hex.Encode(out[14:18], b[6:8])
		out[18] = '-'
		hex.Encode(out[19:23], b[8:10])
		out[23] = '-'
		hex.Encode(out[24:36], b[10:16])
		return string(out[:]), int(b[6] >> 4), b[8]&0xc0 == 0x80, ""
	}
	return "", 0, false, uuidErrorText(s)
}

func uuidBytes(body string) ([]byte, bool) {
	switch len(body) {
	case 32:
		b, err := hex.DecodeString(body)
		return b, err == nil
	case 36:
		if body[8] != '-' || body[13] != '-' || body[18] != '-' || body[23] != '-' {
			return nil, false
		}
		b, err := hex.DecodeString(body[0:8] + body[9:13] + body[14:18] + body[19:23] + body[24:36])
		return b, err == nil
	}
	return nil, false
}

// uuidErrorText is InvalidUuid::into_err followed by Display.
func uuidErrorText(input string) string {
	uuidStr, offset, simple := input, 0, true
	switch {
	case len(input) >= 2 && input[0] == '{' && input[len(input)-1] == '}':
		uuidStr, offset, simple = input[1:len(input)-1], 1, false
	case strings.HasPrefix(input, "urn:uuid:"):
		uuidStr, offset, simple = input[9:], 9, false
	}
	hyphens := 0
	var bounds [4]int
	for i, r := range uuidStr {
		switch {
		case r == '-':
			if hyphens < 4 {
				bounds[hyphens] = i
			}
			hyphens++
		case r < 0x80 && isHexDigit(byte(r)):
		default:
			return fmt.Sprintf("invalid character: found `%c` at %d", r, i+offset+1)
		}
	}
	if hyphens == 0 && simple {
		return fmt.Sprintf("invalid length: expected length 32 for simple format, found %d", len(input))
	}
	if hyphens != 4 {
		return fmt.Sprintf("invalid group count: expected 5, found %d", hyphens+1)
	}
	starts := [5]int{0, 9, 14, 19, 24}
	expected := [5]int{8, 4, 4, 4, 12}
	for g := 0; g < 4; g++ {
		if bounds[g] != starts[g+1]-1 {
			return fmt.Sprintf("invalid group length in group %d: expected %d, found %d", g, expected[g], bounds[g]-starts[g])
		}
	}
	return fmt.Sprintf("invalid group length in group 4: expected 12, found %d", len(input)-starts[4])
}

func isHexDigit(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
