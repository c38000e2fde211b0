package resolvers

import (
	"net/mail"
	"regexp"
	"strings"

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

// checkEmail validates an email address the way customers need it: a bare address.
func checkEmail(email string, loc ...any) error {
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || !strings.Contains(email[strings.LastIndex(email, "@")+1:], ".") {
		return Invalid("value_error", "value is not a valid email address: The email address is not valid.", email, loc...)
	}
	return nil
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

// euVAT matches an EU VAT number once the country prefix is present.
var euVAT = regexp.MustCompile(`^[A-Z]{2}[0-9A-Z+*]{2,12}$`)

var euCountries = "AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK"

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
	if strings.Contains(euCountries, country) {
		prefix := country
		if country == "GR" {
			prefix = "EL"
		}
		if !strings.HasPrefix(v, prefix) {
			v = prefix + v
		}
		if euVAT.MatchString(v) {
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
