package resolvers

import (
	"net/mail"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"till/graph/model"
	"till/storage"
)

// Upstream's metadata limits (MetadataInputMixin): at most 50 keys, keys up to 40
// characters, string values up to 500 characters.
const (
	metadataMaxKeys        = 50
	metadataMaxKeyLength   = 40
	metadataMaxValueLength = 500
)

// checkMetadata validates a metadata object against upstream's limits.
func checkMetadata(m storage.JSONMap, loc ...any) error {
	if len(m) > metadataMaxKeys {
		return Invalid("too_long", "Metadata can have at most 50 keys.", map[string]any(m), loc...)
	}
	for k, v := range m {
		if len(k) < 1 || len(k) > metadataMaxKeyLength {
			return Invalid("string_too_long", "Metadata keys must be 1 to 40 characters long.", k, append(loc, k)...)
		}
		if s, ok := v.(string); ok && len(s) > metadataMaxValueLength {
			return Invalid("string_too_long", "String should have at most 500 characters", s, append(loc, k)...)
		}
	}
	return nil
}

// emailMax and emailLocalMax are the lengths email_validator (upstream's) allows an address
// and the part before its @-sign; they also keep addresses inside what an index can hold.
const (
	emailMax      = 254
	emailLocalMax = 64
)

// checkEmail validates an email address the way customers need it: a bare address.
func checkEmail(email string, loc ...any) error {
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || !strings.Contains(email[strings.LastIndex(email, "@")+1:], ".") {
		return Invalid("value_error", "value is not a valid email address: The email address is not valid.", email, loc...)
	}
	local := email[:strings.LastIndex(email, "@")]
	switch {
	case utf8.RuneCountInString(local) > emailLocalMax:
		return Invalid("value_error", "value is not a valid email address: The email address is too long before the @-sign ("+
			charactersOver(utf8.RuneCountInString(local)-emailLocalMax)+").", email, loc...)
	case utf8.RuneCountInString(email) > emailMax:
		return Invalid("value_error", "value is not a valid email address: The email address is too long ("+
			charactersOver(utf8.RuneCountInString(email)-emailMax)+").", email, loc...)
	}
	return nil
}

// charactersOver is email_validator's count of characters over a limit.
func charactersOver(n int) string {
	if n == 1 {
		return "1 character too many"
	}
	return strconv.Itoa(n) + " characters too many"
}

var countryCode = regexp.MustCompile(`^[A-Z]{2}$`)

// addressOf validates an address input and converts it to the stored shape.
func addressOf(a *model.AddressInput, loc ...any) (*storage.Address, error) {
	if a == nil {
		return nil, nil
	}
	if !countryCode.MatchString(a.Country) {
		return nil, Invalid("literal_error", "Input should be a valid ISO 3166-1 alpha-2 country code", a.Country,
			append(loc, "country")...)
	}
	return &storage.Address{Line1: a.Line1, Line2: a.Line2, PostalCode: a.PostalCode, City: a.City,
		State: a.State, Country: a.Country}, nil
}

// taxIDRule recognises one tax id format of a country.
type taxIDRule struct {
	format  string
	pattern *regexp.Regexp
}

// euVAT matches each member state's VAT number format (as VIES publishes them) once the
// country prefix is present; Greece uses EL.
var euVAT = map[string]*regexp.Regexp{
	"AT": regexp.MustCompile(`^ATU[0-9]{8}$`),
	"BE": regexp.MustCompile(`^BE[01][0-9]{9}$`),
	"BG": regexp.MustCompile(`^BG[0-9]{9,10}$`),
	"CY": regexp.MustCompile(`^CY[0-9]{8}[A-Z]$`),
	"CZ": regexp.MustCompile(`^CZ[0-9]{8,10}$`),
	"DE": regexp.MustCompile(`^DE[0-9]{9}$`),
	"DK": regexp.MustCompile(`^DK[0-9]{8}$`),
	"EE": regexp.MustCompile(`^EE[0-9]{9}$`),
	"ES": regexp.MustCompile(`^ES[0-9A-Z][0-9]{7}[0-9A-Z]$`),
	"FI": regexp.MustCompile(`^FI[0-9]{8}$`),
	"FR": regexp.MustCompile(`^FR[0-9A-HJ-NP-Z]{2}[0-9]{9}$`),
	"GR": regexp.MustCompile(`^EL[0-9]{9}$`),
	"HR": regexp.MustCompile(`^HR[0-9]{11}$`),
	"HU": regexp.MustCompile(`^HU[0-9]{8}$`),
	"IE": regexp.MustCompile(`^IE([0-9]{7}[A-W][A-I]?|[0-9][A-Z+*][0-9]{5}[A-W])$`),
	"IT": regexp.MustCompile(`^IT[0-9]{11}$`),
	"LT": regexp.MustCompile(`^LT([0-9]{9}|[0-9]{12})$`),
	"LU": regexp.MustCompile(`^LU[0-9]{8}$`),
	"LV": regexp.MustCompile(`^LV[0-9]{11}$`),
	"MT": regexp.MustCompile(`^MT[0-9]{8}$`),
	"NL": regexp.MustCompile(`^NL[0-9]{9}B[0-9]{2}$`),
	"PL": regexp.MustCompile(`^PL[0-9]{10}$`),
	"PT": regexp.MustCompile(`^PT[0-9]{9}$`),
	"RO": regexp.MustCompile(`^RO[0-9]{2,10}$`),
	"SE": regexp.MustCompile(`^SE[0-9]{12}$`),
	"SI": regexp.MustCompile(`^SI[0-9]{8}$`),
	"SK": regexp.MustCompile(`^SK[0-9]{10}$`),
}

// taxIDRules covers the formats sellers meet most; a country without a rule cannot validate
// a tax id and gets the same error upstream gives for an unrecognised value.
var taxIDRules = map[string][]taxIDRule{
	"GB": {{"gb_vat", regexp.MustCompile(`^GB([0-9]{9}|[0-9]{12}|GD[0-9]{3}|HA[0-9]{3})$`)}},
	"US": {{"us_ein", regexp.MustCompile(`^[0-9]{2}-?[0-9]{7}$`)}},
	"CA": {{"ca_bn", regexp.MustCompile(`^[0-9]{9}$`)}, {"ca_gst_hst", regexp.MustCompile(`^[0-9]{9}RT[0-9]{4}$`)}},
	"AU": {{"au_abn", regexp.MustCompile(`^[0-9]{11}$`)}},
	"CH": {{"ch_vat", regexp.MustCompile(`^CHE[0-9]{9}(MWST|TVA|IVA)$`)}},
	"NO": {{"no_vat", regexp.MustCompile(`^[0-9]{9}MVA$`)}},
	"IN": {{"in_gst", regexp.MustCompile(`^[0-9]{2}[A-Z]{5}[0-9]{4}[A-Z][0-9A-Z]Z[0-9A-Z]$`)}},
	"JP": {{"jp_cn", regexp.MustCompile(`^[0-9]{13}$`)}},
	"BR": {{"br_cnpj", regexp.MustCompile(`^[0-9]{14}$`)}, {"br_cpf", regexp.MustCompile(`^[0-9]{11}$`)}},
}

// taxIDOf validates a tax id against the billing country and returns its format.
func taxIDOf(value string, country string, loc ...any) (string, string, error) {
	if country == "" {
		return "", "", Invalid("value_error", "Country is required to validate tax ID.", value, loc...)
	}
	v := strings.ToUpper(strings.NewReplacer(" ", "", ".", "", "-", "").Replace(value))
	if pattern, ok := euVAT[country]; ok {
		prefix := country
		if country == "GR" {
			prefix = "EL"
		}
		if !strings.HasPrefix(v, prefix) {
			v = prefix + v
		}
		if pattern.MatchString(v) {
			return v, "eu_vat", nil
		}
	}
	for _, r := range taxIDRules[country] {
		if r.pattern.MatchString(v) {
			return v, r.format, nil
		}
		if r.format == "us_ein" && r.pattern.MatchString(value) {
			return value, r.format, nil
		}
	}
	return "", "", Invalid("invalid", "Invalid tax ID.", value, loc...)
}
