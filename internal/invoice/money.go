package invoice

import (
	"strconv"
	"strings"
)

// Money formatting follows ISO 4217 minor units and the CLDR patterns of a
// handful of locales, kept small on purpose: invoices are issued in the
// seller's few currencies, and a table we can read beats a dependency on
// the whole CLDR.
//
//	locale  example (EUR)    example (CHF)     grouping  decimal  currency
//	en      €1,234.56        CHF 1,234.56      ,         .        before, no space (codes: space)
//	de      1.234,56 €       1.234,56 CHF      .         ,        after, no-break space
//	fr      1 234,56 €       1 234,56 CHF      U+00A0    ,        after, no-break space
//	es      1234,56 €        12.345,00 CHF     .         ,        after, no-break space
//	it      1.234,56 €       1.234,56 CHF      .         ,        after, no-break space
//	nl      € 1.234,56       CHF 1.234,56      .         ,        before, no-break space
//
// Any other locale formats as en. Only the language subtag counts
// ("de-AT" and "de_CH" format as de). Spanish, as in CLDR, groups only
// whole parts of five digits or more. French groups with U+00A0 rather than
// CLDR's narrow no-break space because the PDF core fonts have no glyph
// for the latter. Negative amounts carry a leading '-' before the symbol
// (en: -€1.50), before the digits otherwise (de: -1,50 €; nl: € -1,50).
//
// Symbols are used only where they are unambiguous and printable with the
// core fonts (see currencySymbol); every other currency is written as its
// upper-case ISO code.

// moneyStyle is how one locale lays out an amount.
type moneyStyle struct {
	group, decimal string
	// before puts the currency before the digits; after uses sep.
	before bool
	// sep separates the currency from the digits. en omits it for symbols.
	sep string
	// ungroupedFour leaves four-digit whole parts ungrouped (es: 1234,56 €),
	// CLDR's minimum grouping digits of 2.
	ungroupedFour bool
}

// styleFor returns the money layout for a locale tag such as "de-DE".
func styleFor(locale string) moneyStyle {
	const nbsp = "\u00A0"
	switch language(locale) {
	case "de", "it":
		return moneyStyle{group: ".", decimal: ",", sep: nbsp}
	case "es":
		return moneyStyle{group: ".", decimal: ",", sep: nbsp, ungroupedFour: true}
	case "fr":
		return moneyStyle{group: nbsp, decimal: ",", sep: nbsp}
	case "nl":
		return moneyStyle{group: ".", decimal: ",", before: true, sep: nbsp}
	}
	return moneyStyle{group: ",", decimal: ".", before: true}
}

// language extracts the lower-case primary language subtag of a locale.
func language(locale string) string {
	tag := strings.ToLower(strings.TrimSpace(locale))
	if i := strings.IndexAny(tag, "-_"); i >= 0 {
		tag = tag[:i]
	}
	return tag
}

// MinorUnits reports how many decimal digits a currency's minor unit has
// under ISO 4217: 0 for JPY, KRW and the other zero-decimal currencies, 3
// for BHD, IQD, JOD, KWD, LYD, OMR and TND, and 2 for everything else,
// including codes it does not know. The currency may be in either case.
func MinorUnits(currency string) int {
	switch strings.ToUpper(currency) {
	case "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "MGA",
		"PYG", "RWF", "UGX", "UYI", "VND", "VUV", "XAF", "XOF", "XPF":
		return 0
	case "BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND":
		return 3
	}
	return 2
}

// currencySymbol returns the symbol for the currencies whose symbol the
// core fonts can print and readers will not confuse with another currency.
func currencySymbol(code string) (string, bool) {
	switch code {
	case "USD":
		return "$", true
	case "EUR":
		return "€", true
	case "GBP":
		return "£", true
	case "JPY":
		return "¥", true
	case "CNY":
		return "CN¥", true
	case "CAD":
		return "CA$", true
	case "AUD":
		return "A$", true
	case "NZD":
		return "NZ$", true
	case "HKD":
		return "HK$", true
	case "MXN":
		return "MX$", true
	case "BRL":
		return "R$", true
	}
	return "", false
}

// FormatMoney renders amount, given in the currency's minor units (cents
// for USD, yen for JPY, fils for KWD), the way readers in locale expect:
// FormatMoney(123456, "eur", "de") is "1.234,56 €". The currency code may
// be lower or upper case, as the upstream API sends lower case. The
// result uses only characters the invoice fonts can print. See the table
// at the top of this file for the supported locales.
func FormatMoney(amount int64, currency, locale string) string {
	code := strings.ToUpper(strings.TrimSpace(currency))
	style := styleFor(locale)
	digits := formatDigits(amount, MinorUnits(code), style)
	sign := ""
	if amount < 0 {
		sign = "-"
	}
	symbol, ok := currencySymbol(code)
	if code == "" {
		return sign + digits
	}
	sep := style.sep
	if !ok {
		symbol = code
		if sep == "" {
			sep = " "
		}
	}
	switch {
	case !style.before:
		return sign + digits + sep + symbol
	case style.sep == "":
		return sign + symbol + sep + digits
	default:
		return symbol + sep + sign + digits
	}
}

// formatDigits writes |amount| with grouping and the decimal separator.
// It works on the unsigned magnitude so math.MinInt64 needs no special
// case.
func formatDigits(amount int64, minor int, style moneyStyle) string {
	mag := uint64(amount)
	if amount < 0 {
		mag = -mag
	}
	scale := uint64(1)
	for range minor {
		scale *= 10
	}
	whole := strconv.FormatUint(mag/scale, 10)
	if len(whole) > 4 || !style.ungroupedFour {
		whole = group(whole, style.group)
	}
	if minor == 0 {
		return whole
	}
	frac := strconv.FormatUint(mag%scale, 10)
	return whole + style.decimal + strings.Repeat("0", minor-len(frac)) + frac
}

// group inserts sep between every three digits, counting from the right.
func group(digits, sep string) string {
	if len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	head := len(digits) % 3
	if head == 0 {
		head = 3
	}
	b.WriteString(digits[:head])
	for i := head; i < len(digits); i += 3 {
		b.WriteString(sep)
		b.WriteString(digits[i : i+3])
	}
	return b.String()
}
