package invoice

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The PDF uses the standard core fonts, which only carry the WinAnsi
// (Windows-1252) glyph set. Embedding a Unicode font would make every
// invoice hundreds of kilobytes larger and slower to render, so text is
// instead mapped to WinAnsi: Latin-1 and the cp1252 extras map directly,
// common Central European letters lose their diacritics (Ł → L, č → c),
// typographic spaces and dashes become their plain forms, invisible
// characters are dropped and anything else (CJK, emoji, …) becomes '?'.
// This never fails, whatever bytes the input holds.

// latinExtA transliterates U+0100–U+017F to a base letter, one byte per
// code point, in code point order. The few that need two letters or that
// cp1252 carries itself are handled before the table is consulted.
const latinExtA = "AaAaAaCcCcCcCcDdDdEeEeEeEeEeGgGgGgGgHhHhIiIiIiIiIiJjJjKkkLlLlLlLlLlNnNnNnnNnOoOoOoOoRrRrRrSsSsSsSsTtTtTtUuUuUuUuUuUuWwYyYZzZzZzs"

// cp1252High lists, in byte order, the code points Windows-1252 places in
// 0x80–0x9F, where ISO-8859-1 has control characters. The five unused
// slots hold their C1 control code points, which text never maps to.
const cp1252High = "€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008DŽ\u008F\u0090‘’“”•–—˜™š›œ\u009DžŸ"

// cp1252Extra returns the Windows-1252 byte in 0x80–0x9F for r.
func cp1252Extra(r rune) (byte, bool) {
	if unicode.IsControl(r) {
		return 0, false
	}
	i := 0
	for _, c := range cp1252High {
		if c == r {
			return byte(0x80 + i), true
		}
		i++
	}
	return 0, false
}

// fromWinAnsi decodes Windows-1252 bytes produced by winAnsi back to
// UTF-8. Document metadata is written as UTF-16, and fpdf's converter
// needs well-formed text within the Basic Multilingual Plane, which a
// round trip through WinAnsi guarantees.
func fromWinAnsi(s string) string {
	high := []rune(cp1252High)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80 && c < 0xA0:
			b.WriteRune(high[c-0x80])
		default:
			b.WriteRune(rune(c))
		}
	}
	return b.String()
}

// transliterate returns a plain replacement for a code point WinAnsi
// lacks, or "" when the code point should simply disappear.
func transliterate(r rune) string {
	switch {
	case r == 'Ĳ':
		return "IJ"
	case r == 'ĳ':
		return "ij"
	case r == 'Đ':
		return "D"
	case r == 'đ':
		return "d"
	case r == 'Ħ':
		return "H"
	case r == 'ħ':
		return "h"
	case r == 'ı':
		return "i"
	case r == 'Ł':
		return "L"
	case r == 'ł':
		return "l"
	case r == 'Ŋ':
		return "N"
	case r == 'ŋ':
		return "n"
	case r == 'Ŧ':
		return "T"
	case r == 'ŧ':
		return "t"
	case r >= 0x100 && r <= 0x17F:
		return latinExtA[r-0x100 : r-0x100+1]
	case r == 'Ș' || r == 'Ş':
		return "S"
	case r == 'ș' || r == 'ş':
		return "s"
	case r == 'Ț' || r == 'Ţ':
		return "T"
	case r == 'ț' || r == 'ţ':
		return "t"
	case r == '\u2028' || r == '\u2029':
		return "\n"
	case r == '\u202F' || r == '\u2007':
		return "\u00A0"
	case r >= 0x2010 && r <= 0x2012, r == 0x2015, r == 0x2212:
		return "-"
	case r == '\t' || unicode.Is(unicode.Zs, r):
		return " "
	case r >= 0x1F3FB && r <= 0x1F3FF: // emoji skin tones modify the previous '?'
		return ""
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r),
		unicode.Is(unicode.Cf, r), unicode.IsControl(r):
		return ""
	}
	return "?"
}

// winAnsi encodes s as Windows-1252 bytes for the core fonts. Newlines
// survive (callers decide whether a field may span lines); carriage
// returns and other control characters are dropped. Invalid UTF-8 becomes
// '?' like any other unmappable character.
func winAnsi(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n' || (r >= 0x20 && r < 0x7F):
			b.WriteByte(byte(r))
		case r >= 0xA0 && r <= 0xFF:
			b.WriteByte(byte(r))
		case r == utf8.RuneError:
			b.WriteByte('?')
		default:
			if c, ok := cp1252Extra(r); ok {
				b.WriteByte(c)
			} else {
				b.WriteString(transliterate(r))
			}
		}
	}
	return b.String()
}

// oneLine folds a multi-line value into a single line, for fields such as
// names and numbers that the layout gives one row.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// truncateBytes shortens an encoded string to at most n bytes so hostile
// input cannot make layout work unbounded; encoded text is one byte per
// glyph, so cutting anywhere is safe.
func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// upperWords turns an API identifier such as "eu_vat" into "EU VAT".
func upperWords(s string) string {
	return strings.ToUpper(strings.ReplaceAll(s, "_", " "))
}
