// Package fastapitest holds the request schemas the validator's tests and the /v1 tests
// both decode against: small copies of upstream models that exercise unions, aliases,
// nullable fields and bounded maps.
package fastapitest

import (
	"bytes"
	"encoding/json"
	"testing"

	"till/rest/fastapi"
)

// UUIDs of each version the schemas tell apart.
const (
	UUID4   = "3f1c2a5e-8b7d-4c19-9e2f-0a1b2c3d4e5f"
	UUIDV1  = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
	UUID4b  = "0b0c2e9a-6a8e-4d51-8a49-6e1d3c3b9f10"
	OrgUUID = "1dbfc517-0bbf-4301-9ba8-555ca42b9737"
)

// CustomerSessionBody is Polar's CustomerSessionCreate: a union of two models told apart by
// their required id field, one of them with an alias.
func CustomerSessionBody() *fastapi.Body {
	common := func(idField fastapi.Field) []fastapi.Field {
		return []fastapi.Field{
			{Name: "member_id", Schema: fastapi.Nullable{Schema: fastapi.UUID4{}}},
			{Name: "external_member_id", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
			{Name: "return_url", Schema: fastapi.Nullable{Schema: fastapi.URL{Schemes: []string{"http", "https"}, MaxLength: 2083}}},
			idField,
		}
	}
	return &fastapi.Body{Var: "input", Schema: fastapi.Union{Members: []fastapi.Schema{
		fastapi.Object{Name: "CustomerSessionCustomerIDCreate", Fields: common(
			fastapi.Field{Name: "customer_id", Schema: fastapi.UUID4{}, Required: true})},
		fastapi.Object{Name: "CustomerSessionCustomerExternalIDCreate", Fields: common(
			fastapi.Field{Name: "external_customer_id", Aliases: []string{"customer_external_id"}, Schema: fastapi.String{}, Required: true})},
	}}}
}

// MetadataValues is Polar's metadata dictionary: bounded keys, scalar values of any type.
func MetadataValues() fastapi.Map {
	return fastapi.Map{
		Keys:      fastapi.String{MinLength: 1, MaxLength: 40},
		Values:    fastapi.Union{Members: []fastapi.Schema{fastapi.String{MinLength: 1, MaxLength: 500}, fastapi.Int{}, fastapi.Float{}, fastapi.Bool{}}},
		MaxLength: 50,
	}
}

// LicenseKeyValidateBody is Polar's LicenseKeyValidate.
func LicenseKeyValidateBody() *fastapi.Body {
	return &fastapi.Body{Var: "input", Schema: fastapi.Object{Name: "LicenseKeyValidate", Fields: []fastapi.Field{
		{Name: "key", Schema: fastapi.String{}, Required: true},
		{Name: "organization_id", Schema: fastapi.UUID4{}, Required: true},
		{Name: "activation_id", Schema: fastapi.Nullable{Schema: fastapi.UUID4{}}},
		{Name: "increment_usage", Schema: fastapi.Nullable{Schema: fastapi.Int{Ge: fastapi.At(0)}}},
		{Name: "conditions", Schema: MetadataValues()},
	}}}
}

// CompactJSON normalises whitespace so expectations can be written readably while key order
// and number spelling still count.
func CompactJSON(tb testing.TB, s string) string {
	tb.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		tb.Fatalf("invalid JSON %q: %v", s, err)
	}
	return buf.String()
}
