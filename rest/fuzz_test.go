package rest_test

import (
	"encoding/json"
	"errors"
	"testing"

	"till/rest"
)

// FuzzDecodeBody feeds untrusted bytes to the body decoder: it must never
// panic, must return either a value or an error (never both), and every 422
// item must render as valid JSON starting with the body location.
func FuzzDecodeBody(f *testing.F) {
	seeds := []string{
		``, `null`, `{}`, `[]`, `{"customer_id":"` + uuid4 + `"}`, `{"customer_external_id":"x","return_url":""}`,
		`{"key":"k","organization_id":"` + orgUUID + `","conditions":{"a":1,"b":"x","c":1.5,"d":true}}`,
		`{"a":}`, `{"a":1,}`, `"\ud800\udc00"`, `"\u12"`, `NaN`, `-Infinity`, `1e999`, "\xef\xbb\xbf{}", "\xff\xfe{\x00}\x00",
		`{"key":"a\u0000"}`, `[[[[[[[[`, `{"increment_usage":"1_000.00"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), "application/json")
	}
	f.Add([]byte(`{"key":"k"}`), "text/plain")
	bodies := []*rest.Body{customerSessionBody(), licenseKeyValidateBody(), {Var: "input", Schema: rest.Any{}, Optional: true}}
	f.Fuzz(func(t *testing.T, raw []byte, contentType string) {
		for _, b := range bodies {
			v, err := rest.DecodeBody(b, contentType, raw)
			if err == nil {
				if _, mErr := json.Marshal(v); mErr != nil && v != nil {
					// Non-finite floats are the only values JSON cannot carry.
					var unsupported *json.UnsupportedValueError
					if !errors.As(mErr, &unsupported) {
						t.Fatalf("variables do not marshal: %v", mErr)
					}
				}
				continue
			}
			if v != nil {
				t.Fatalf("DecodeBody returned both %v and %v", v, err)
			}
			if errors.Is(err, rest.ErrUnparsableBody) {
				continue
			}
			var verrs rest.ValidationErrors
			if !errors.As(err, &verrs) || len(verrs) == 0 {
				t.Fatalf("unexpected error %v", err)
			}
			for _, e := range verrs {
				out, mErr := e.MarshalJSON()
				if mErr != nil || !json.Valid(out) {
					t.Fatalf("item does not render: %q (%v)", out, mErr)
				}
				if len(e.Loc) == 0 || e.Loc[0] != "body" {
					t.Fatalf("loc %v does not start with body", e.Loc)
				}
			}
		}
	})
}
