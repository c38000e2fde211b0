package fastapi_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"till/rest/fastapi/fastapitest"

	"github.com/google/go-cmp/cmp"

	"till/rest/fastapi"
)

func TestDecodeBodyReportsPydanticErrors(t *testing.T) {
	validate := fastapitest.LicenseKeyValidateBody()
	session := fastapitest.CustomerSessionBody()
	tests := []struct {
		name        string
		body        *fastapi.Body
		contentType string
		raw         string
		want        string
	}{
		{"an empty body is a missing body", validate, "application/json", ``,
			`[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]`},
		{"a JSON null is a missing body too", validate, "application/json", `null`,
			`[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]`},
		{"a missing field echoes the whole object", validate, "application/json", `{"organization_id":"` + fastapitest.OrgUUID + `","extra":[1.0,1e2]}`,
			`[{"type":"missing","loc":["body","key"],"msg":"Field required","input":{"organization_id":"` + fastapitest.OrgUUID + `","extra":[1.0,100.0]}}]`},
		{"a union reports every member with its class name", session, "", `{}`,
			`[{"type":"missing","loc":["body","CustomerSessionCustomerIDCreate","customer_id"],"msg":"Field required","input":{}},` +
				`{"type":"missing","loc":["body","CustomerSessionCustomerExternalIDCreate","external_customer_id"],"msg":"Field required","input":{}}]`},
		{"a non-object body fails model validation", validate, "application/json", `[1]`,
			`[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":[1]}]`},
		{"a non-JSON content type is validated as text", validate, "text/plain", `{"key":"k"}`,
			`[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":"{\"key\":\"k\"}"}]`},
		{"a malformed UUID quotes the uuid crate", validate, "", `{"key":"k","organization_id":"abc"}`,
			`[{"type":"uuid_parsing","loc":["body","organization_id"],"msg":"Input should be a valid UUID, invalid length: expected length 32 for simple format, found 3","input":"abc","ctx":{"error":"invalid length: expected length 32 for simple format, found 3"}}]`},
		{"a UUID with a bad character names it and its position", validate, "", `{"key":"k","organization_id":"zbc"}`,
			`[{"type":"uuid_parsing","loc":["body","organization_id"],"msg":"Input should be a valid UUID, invalid character: found ` + "`z`" + ` at 1","input":"zbc","ctx":{"error":"invalid character: found ` + "`z`" + ` at 1"}}]`},
		{"a UUID with too few groups counts them", validate, "", `{"key":"k","organization_id":"1234-5678"}`,
			`[{"type":"uuid_parsing","loc":["body","organization_id"],"msg":"Input should be a valid UUID, invalid group count: expected 5, found 2","input":"1234-5678","ctx":{"error":"invalid group count: expected 5, found 2"}}]`},
		{"a UUID with a short last group measures it", validate, "", `{"key":"k","organization_id":"12345678-1234-1234-1234-12345678901"}`,
			`[{"type":"uuid_parsing","loc":["body","organization_id"],"msg":"Input should be a valid UUID, invalid group length in group 4: expected 12, found 11","input":"12345678-1234-1234-1234-12345678901","ctx":{"error":"invalid group length in group 4: expected 12, found 11"}}]`},
		{"a version 1 UUID is not a UUID4", validate, "", `{"key":"k","organization_id":"` + fastapitest.UUIDV1 + `"}`,
			`[{"type":"uuid_version","loc":["body","organization_id"],"msg":"UUID version 4 expected","input":"` + fastapitest.UUIDV1 + `","ctx":{"expected_version":4}}]`},
		{"a number is not a UUID", validate, "", `{"key":"k","organization_id":5}`,
			`[{"type":"uuid_type","loc":["body","organization_id"],"msg":"UUID input should be a string, bytes or UUID object","input":5}]`},
		{"a float is echoed as Python writes it", validate, "", `{"key":1.0,"organization_id":"` + fastapitest.OrgUUID + `"}`,
			`[{"type":"string_type","loc":["body","key"],"msg":"Input should be a valid string","input":1.0}]`},
		{"a big integer is echoed intact", validate, "", `{"key":123456789012345678901234567890,"organization_id":"` + fastapitest.OrgUUID + `"}`,
			`[{"type":"string_type","loc":["body","key"],"msg":"Input should be a valid string","input":123456789012345678901234567890}]`},
		{"a NUL character is a value error", validate, "", `{"key":"a\u0000b","organization_id":"` + fastapitest.OrgUUID + `"}`,
			`[{"type":"value_error","loc":["body","key"],"msg":"Value error, This value contains invalid characters","input":"a\u0000b","ctx":{"error":{}}}]`},
		{"a NUL character in a map key is a value error on the field", validate, "", `{"key":"k","organization_id":"` + fastapitest.OrgUUID + `","conditions":{"a\u0000":"x"}}`,
			`[{"type":"value_error","loc":["body","conditions"],"msg":"Value error, This value contains invalid characters","input":{"a\u0000":"x"},"ctx":{"error":{}}}]`},
		{"an infinite or NaN float anywhere in a JSON value is refused at its loc", &fastapi.Body{Var: "input", Schema: fastapi.Any{}}, "", `{"a":[1,1e400],"b":{"c":NaN},"d":-Infinity}`,
			`[{"type":"finite_number","loc":["body","a",1],"msg":"Input should be a finite number","input":null},` +
				`{"type":"finite_number","loc":["body","b","c"],"msg":"Input should be a finite number","input":null},` +
				`{"type":"finite_number","loc":["body","d"],"msg":"Input should be a finite number","input":null}]`},
		{"an integer below its bound says so", validate, "", `{"key":"k","organization_id":"` + fastapitest.OrgUUID + `","increment_usage":-1}`,
			`[{"type":"greater_than_equal","loc":["body","increment_usage"],"msg":"Input should be greater than or equal to 0","input":-1,"ctx":{"ge":0}}]`},
		{"an integer string that does not parse", validate, "", `{"key":"k","organization_id":"` + fastapitest.OrgUUID + `","increment_usage":"abc"}`,
			`[{"type":"int_parsing","loc":["body","increment_usage"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"abc"}]`},
		{"a fractional number is not an integer", validate, "", `{"key":"k","organization_id":"` + fastapitest.OrgUUID + `","increment_usage":1.5}`,
			`[{"type":"int_from_float","loc":["body","increment_usage"],"msg":"Input should be a valid integer, got a number with a fractional part","input":1.5}]`},
		{"a map value tries every union member", validate, "", `{"key":"k","organization_id":"` + fastapitest.OrgUUID + `","conditions":{"k":""}}`,
			`[{"type":"string_too_short","loc":["body","conditions","k","constrained-str"],"msg":"String should have at least 1 character","input":"","ctx":{"min_length":1}},` +
				`{"type":"int_parsing","loc":["body","conditions","k","int"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":""},` +
				`{"type":"float_parsing","loc":["body","conditions","k","float"],"msg":"Input should be a valid number, unable to parse string as a number","input":""},` +
				`{"type":"bool_parsing","loc":["body","conditions","k","bool"],"msg":"Input should be a valid boolean, unable to interpret input","input":""}]`},
		{"a map key that is too long is reported under [key]", validate, "", `{"key":"k","organization_id":"` + fastapitest.OrgUUID + `","conditions":{"` + strings.Repeat("k", 41) + `":1}}`,
			`[{"type":"string_too_long","loc":["body","conditions","` + strings.Repeat("k", 41) + `","[key]"],"msg":"String should have at most 40 characters","input":"` + strings.Repeat("k", 41) + `","ctx":{"max_length":40}}]`},
		{"every field error is collected in field order", validate, "", `{"organization_id":"x","key":5}`,
			`[{"type":"string_type","loc":["body","key"],"msg":"Input should be a valid string","input":5},` +
				`{"type":"uuid_parsing","loc":["body","organization_id"],"msg":"Input should be a valid UUID, invalid character: found ` + "`x`" + ` at 1","input":"x","ctx":{"error":"invalid character: found ` + "`x`" + ` at 1"}}]`},
		{"an empty URL in a union is reported for both members", session, "", `{"customer_id":"` + fastapitest.UUID4 + `","return_url":""}`,
			`[{"type":"url_parsing","loc":["body","CustomerSessionCustomerIDCreate","return_url"],"msg":"Input should be a valid URL, input is empty","input":"","ctx":{"error":"input is empty"}},` +
				`{"type":"url_parsing","loc":["body","CustomerSessionCustomerExternalIDCreate","return_url"],"msg":"Input should be a valid URL, input is empty","input":"","ctx":{"error":"input is empty"}},` +
				`{"type":"missing","loc":["body","CustomerSessionCustomerExternalIDCreate","external_customer_id"],"msg":"Field required","input":{"customer_id":"` + fastapitest.UUID4 + `","return_url":""}}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := fastapi.DecodeBody(tt.body, nil, tt.contentType, []byte(tt.raw))
			var verrs fastapi.ValidationErrors
			if !errors.As(err, &verrs) {
				t.Fatalf("DecodeBody = %v, %v; want validation errors", v, err)
			}
			if got, want := itemsJSON(t, verrs), fastapitest.CompactJSON(t, tt.want); got != want {
				t.Errorf("items:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestDecodeBodyReportsPythonJSONErrors(t *testing.T) {
	tests := []struct {
		name, raw, msg string
		pos            int
	}{
		{"a value is missing after a colon", `{"a":}`, "Expecting value", 5},
		{"nothing at all is not JSON", `   `, "Expecting value", 3},
		{"a trailing comma in an object", `{"a":1,}`, "Illegal trailing comma before end of object", 6},
		{"a trailing comma in an array", `[1,]`, "Illegal trailing comma before end of array", 2},
		{"single quotes are not property names", `{'a':1}`, "Expecting property name enclosed in double quotes", 1},
		{"array items need commas", `[1 2]`, "Expecting ',' delimiter", 3},
		{"keys need colons", `{"a" 1}`, "Expecting ':' delimiter", 5},
		{"an unterminated string points at its quote", `{"a":"b`, "Unterminated string starting at", 5},
		{"an unknown escape points at the backslash", `"\x"`, "Invalid \\escape", 1},
		{"a short unicode escape points at the u", `"\u12"`, "Invalid \\uXXXX escape", 2},
		{"a raw control character is refused", "\"a\tb\"", "Invalid control character at", 2},
		{"text after the document is extra data", `{} x`, "Extra data", 3},
		{"a leading zero ends the number", `01`, "Extra data", 1},
		{"offsets count characters, not bytes", `{"é":1,}`, "Illegal trailing comma before end of object", 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fastapi.DecodeBody(&fastapi.Body{Var: "input", Schema: fastapi.Any{}}, nil, "", []byte(tt.raw))
			var verrs fastapi.ValidationErrors
			if !errors.As(err, &verrs) {
				t.Fatalf("DecodeBody error = %v; want validation errors", err)
			}
			msg, _ := json.Marshal(tt.msg)
			want := `[{"type":"json_invalid","loc":["body",` + itoa(tt.pos) + `],"msg":"JSON decode error","input":{},"ctx":{"error":` + string(msg) + `}}]`
			if got := itemsJSON(t, verrs); got != want {
				t.Errorf("items:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestDecodeBodyRefusesUndecodableBytes(t *testing.T) {
	tests := []struct{ name, raw string }{
		{"invalid UTF-8", "{\"a\":\"\xff\"}"},
		{"an integer beyond Python's digit limit", strings.Repeat("9", 4301)},
		{"nesting beyond the recursion limit", strings.Repeat("[", 2000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fastapi.DecodeBody(&fastapi.Body{Var: "input", Schema: fastapi.Any{}}, nil, "", []byte(tt.raw))
			if !errors.Is(err, fastapi.ErrUnparsableBody) {
				t.Errorf("DecodeBody error = %v; want ErrUnparsableBody", err)
			}
		})
	}
}

func TestDecodeBodyProducesGraphQLVariables(t *testing.T) {
	session := fastapitest.CustomerSessionBody()
	validate := fastapitest.LicenseKeyValidateBody()
	tests := []struct {
		name string
		body *fastapi.Body
		raw  string
		want any
	}{
		{"an explicit null stays apart from an absent field", session, `{"customer_id":"` + strings.ToUpper(fastapitest.UUID4) + `","member_id":null,"unknown":1}`,
			map[string]any{"customerId": fastapitest.UUID4, "memberId": nil}},
		{"an alias fills its field", session, `{"customer_external_id":"ext"}`,
			map[string]any{"externalCustomerId": "ext"}},
		{"a URL is stored as pydantic serialises it", session, `{"customer_external_id":"ext","return_url":"HTTPS://Example.COM:443"}`,
			map[string]any{"externalCustomerId": "ext", "returnUrl": "https://example.com/"}},
		{"the more exact union member wins, as in pydantic's smart mode", session, `{"customer_id":"` + fastapitest.UUID4 + `","external_customer_id":"ext"}`,
			map[string]any{"externalCustomerId": "ext"}},
		{"the only valid union member is chosen", session, `{"customer_id":"` + fastapitest.UUID4 + `","member_id":"` + fastapitest.UUID4b + `"}`,
			map[string]any{"customerId": fastapitest.UUID4, "memberId": fastapitest.UUID4b}},
		{"lax integers and exact map values convert", validate, `{"key":"k","organization_id":"` + fastapitest.OrgUUID + `","increment_usage":"7","conditions":{"s":"1","i":2,"f":1.5,"b":true,"x":10000000000000000000000}}`,
			map[string]any{"key": "k", "organizationId": fastapitest.OrgUUID, "incrementUsage": int64(7),
				"conditions": map[string]any{"s": "1", "i": int64(2), "f": 1.5, "b": true, "x": json.Number("10000000000000000000000")}}},
		{"duplicate keys keep the last value", &fastapi.Body{Var: "input", Schema: fastapi.Any{}}, `{"a":1,"a":2}`,
			map[string]any{"a": int64(2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fastapi.DecodeBody(tt.body, nil, "application/json; charset=utf-8", []byte(tt.raw))
			if err != nil {
				t.Fatalf("DecodeBody: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("variables (-want +got):\n%s", diff)
			}
		})
	}
}
