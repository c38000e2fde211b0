package invoice_test

import (
	"math"
	"testing"

	"till/internal/invoice"
)

func TestFormatMoney(t *testing.T) {
	const nbsp = "\u00A0"
	tests := []struct {
		name     string
		amount   int64
		currency string
		locale   string
		want     string
	}{
		{"US dollars in English", 123456, "usd", "en", "$1,234.56"},
		{"an empty locale formats as English", 123456, "USD", "", "$1,234.56"},
		{"an unknown locale formats as English", 5, "usd", "tlh", "$0.05"},
		{"zero", 0, "usd", "en", "$0.00"},
		{"cents below a dollar keep the leading zero", 7, "eur", "en", "€0.07"},
		{"negative amounts put the sign before the symbol", -150, "eur", "en", "-€1.50"},
		{"yen has no minor unit", 1234567, "jpy", "en", "¥1,234,567"},
		{"won has no minor unit and prints its code", 50000, "krw", "en", "KRW 50,000"},
		{"Kuwaiti dinar has three decimals", 1234567, "kwd", "en", "KWD 1,234.567"},
		{"Bahraini dinar pads three decimals", 5, "BHD", "en", "BHD 0.005"},
		{"currencies without a symbol use the code", 99900, "chf", "en", "CHF 999.00"},
		{"negative code amounts sign the whole", -99900, "chf", "en", "-CHF 999.00"},
		{"exactly three digits are not grouped", 99999, "usd", "en", "$999.99"},
		{"millions group twice", 123456789012, "usd", "en", "$1,234,567,890.12"},
		{"the largest amount", math.MaxInt64, "usd", "en", "$92,233,720,368,547,758.07"},
		{"the smallest amount", math.MinInt64, "usd", "en", "-$92,233,720,368,547,758.08"},
		{"German puts the symbol after", 123456, "eur", "de", "1.234,56" + nbsp + "€"},
		{"German region tags format as German", -123456, "eur", "de-AT", "-1.234,56" + nbsp + "€"},
		{"German with underscores", 100, "usd", "de_CH", "1,00" + nbsp + "$"},
		{"French groups with no-break spaces", 123456789, "eur", "fr", "1" + nbsp + "234" + nbsp + "567,89" + nbsp + "€"},
		{"French with a code", 123456, "chf", "fr-CH", "1" + nbsp + "234,56" + nbsp + "CHF"},
		{"Spanish leaves four digits ungrouped", 123456, "eur", "es", "1234,56" + nbsp + "€"},
		{"Spanish groups five digits", 1234567, "eur", "es-ES", "12.345,67" + nbsp + "€"},
		{"Italian", 123456, "eur", "it", "1.234,56" + nbsp + "€"},
		{"Dutch puts the symbol first with a space", 123456, "eur", "nl", "€" + nbsp + "1.234,56"},
		{"Dutch negatives sign the digits", -123456, "eur", "nl-BE", "€" + nbsp + "-1.234,56"},
		{"yen in German", 1234567, "JPY", "de", "1.234.567" + nbsp + "¥"},
		{"dinar in French", 1234567, "kwd", "fr", "1" + nbsp + "234,567" + nbsp + "KWD"},
		{"pounds", 1999, "gbp", "en-GB", "£19.99"},
		{"Canadian dollars are told apart from US dollars", 1999, "cad", "en", "CA$19.99"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := invoice.FormatMoney(tt.amount, tt.currency, tt.locale); got != tt.want {
				t.Errorf("FormatMoney(%d, %q, %q) = %q, want %q", tt.amount, tt.currency, tt.locale, got, tt.want)
			}
		})
	}
}

func TestMinorUnits(t *testing.T) {
	tests := []struct {
		currency string
		want     int
	}{
		{"usd", 2}, {"EUR", 2}, {"jpy", 0}, {"KRW", 0}, {"vnd", 0},
		{"kwd", 3}, {"BHD", 3}, {"tnd", 3}, {"xyz", 2},
	}
	for _, tt := range tests {
		t.Run(tt.currency+" has the ISO 4217 exponent", func(t *testing.T) {
			if got := invoice.MinorUnits(tt.currency); got != tt.want {
				t.Errorf("MinorUnits(%q) = %d, want %d", tt.currency, got, tt.want)
			}
		})
	}
}

func TestCountryName(t *testing.T) {
	tests := []struct {
		code, want string
	}{
		{"US", "United States"},
		{"de", "Germany"},
		{" gb ", "United Kingdom"},
		{"zz", "ZZ"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run("code "+tt.code+" reads as "+tt.want, func(t *testing.T) {
			if got := invoice.CountryName(tt.code); got != tt.want {
				t.Errorf("CountryName(%q) = %q, want %q", tt.code, got, tt.want)
			}
		})
	}
}
