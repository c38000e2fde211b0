package fastapi

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decodePythonText turns bytes into text as json.detect_encoding and
// bytes.decode(..., "surrogatepass") do. Lone surrogates, which Go strings
// cannot hold, become U+FFFD (one character either way, so offsets agree).
func decodePythonText(b []byte) (string, error) {
	switch {
	case hasPrefix(b, 0x00, 0x00, 0xfe, 0xff), hasPrefix(b, 0xff, 0xfe, 0x00, 0x00):
		return decodeUTF32(b[4:], b[0] == 0x00)
	case hasPrefix(b, 0xfe, 0xff), hasPrefix(b, 0xff, 0xfe):
		return decodeUTF16(b[2:], b[0] == 0xfe)
	case hasPrefix(b, 0xef, 0xbb, 0xbf):
		return decodeUTF8(b[3:])
	case len(b) >= 4 && b[0] == 0:
		if b[1] != 0 {
			return decodeUTF16(b, true)
		}
		return decodeUTF32(b, true)
	case len(b) >= 4 && b[1] == 0:
		if b[2] != 0 || b[3] != 0 {
			return decodeUTF16(b, false)
		}
		return decodeUTF32(b, false)
	case len(b) == 2 && b[0] == 0:
		return decodeUTF16(b, true)
	case len(b) == 2 && b[1] == 0:
		return decodeUTF16(b, false)
	}
	return decodeUTF8(b)
}

func hasPrefix(b []byte, p ...byte) bool {
	return len(b) >= len(p) && string(b[:len(p)]) == string(p)
}

func decodeUTF8(b []byte) (string, error) {
	if utf8.Valid(b) {
		return string(b), nil
	}
	var sb strings.Builder
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			// surrogatepass accepts UTF-8 encoded surrogates (ED A0..BF xx).
			if i+2 < len(b) && b[i] == 0xed && b[i+1] >= 0xa0 && b[i+1] <= 0xbf && b[i+2] >= 0x80 && b[i+2] <= 0xbf {
				sb.WriteRune(utf8.RuneError)
				i += 3
				continue
			}
			return "", ErrUnparsableBody
		}
		sb.WriteString(string(b[i : i+n]))
		i += n
	}
	return sb.String(), nil
}

func decodeUTF16(b []byte, bigEndian bool) (string, error) {
	if len(b)%2 != 0 {
		return "", ErrUnparsableBody
	}
	units := make([]uint16, len(b)/2)
	for i := range units {
		if bigEndian {
			units[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		} else {
			units[i] = uint16(b[2*i+1])<<8 | uint16(b[2*i])
		}
	}
	return string(utf16.Decode(units)), nil
}

func decodeUTF32(b []byte, bigEndian bool) (string, error) {
	if len(b)%4 != 0 {
		return "", ErrUnparsableBody
	}
	var sb strings.Builder
	for i := 0; i < len(b); i += 4 {
		var r rune
		if bigEndian {
			r = rune(b[i])<<24 | rune(b[i+1])<<16 | rune(b[i+2])<<8 | rune(b[i+3])
		} else {
			r = rune(b[i+3])<<24 | rune(b[i+2])<<16 | rune(b[i+1])<<8 | rune(b[i])
		}
		if r < 0 || r > utf8.MaxRune {
			return "", ErrUnparsableBody
		}
		sb.WriteRune(r) // surrogates are written as U+FFFD
	}
	return sb.String(), nil
}
