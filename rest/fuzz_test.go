package rest_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"till/rest/fastapi/fastapitest"

	"till/rest"
	"till/rest/fastapi"
)

// storable fails the test when a decoded value holds what PostgreSQL or a JSON document
// cannot: U+0000, text that is not UTF-8, an infinite or NaN float.
func storable(t *testing.T, v any, where string) {
	t.Helper()
	switch v := v.(type) {
	case string:
		if strings.IndexByte(v, 0) >= 0 || !utf8.ValidString(v) {
			t.Fatalf("%s: decoded text %q cannot be stored", where, v)
		}
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			t.Fatalf("%s: decoded float %v cannot be stored", where, v)
		}
	case []any:
		for _, e := range v {
			storable(t, e, where)
		}
	case map[string]any:
		for k, e := range v {
			storable(t, k, where)
			storable(t, e, where)
		}
	}
}

// checkFuzzItems fails the test unless every 422 item renders as JSON with loc under one of
// the given roots.
func checkFuzzItems(t *testing.T, verrs fastapi.ValidationErrors, roots ...string) {
	t.Helper()
	if len(verrs) == 0 {
		t.Fatal("a validation error without items")
	}
	for _, e := range verrs {
		out, err := e.MarshalJSON()
		if err != nil || !json.Valid(out) {
			t.Fatalf("item does not render: %q (%v)", out, err)
		}
		if len(e.Loc) == 0 || !contains(roots, e.Loc[0]) {
			t.Fatalf("loc %v does not start with one of %v", e.Loc, roots)
		}
	}
}

func contains(roots []string, v any) bool {
	for _, r := range roots {
		if v == r {
			return true
		}
	}
	return false
}

// routeBodies are the bodies of the real route table, and the two test bodies.
func routeBodies() []*fastapi.Body {
	bodies := []*fastapi.Body{fastapitest.CustomerSessionBody(), fastapitest.LicenseKeyValidateBody()}
	for _, r := range rest.Routes() {
		if r.Body != nil {
			bodies = append(bodies, r.Body)
		}
	}
	return bodies
}

// FuzzDecodeBody feeds untrusted bytes to the body decoder of every route: it must never
// panic, must return either a value or an error (never both), every 422 item must render
// as valid JSON starting with the body location, and a value it accepts must be storable.
func FuzzDecodeBody(f *testing.F) {
	seeds := []string{
		``, `null`, `{}`, `[]`, `{"customer_id":"` + fastapitest.UUID4 + `"}`, `{"customer_external_id":"x","return_url":""}`,
		`{"key":"k","organization_id":"` + fastapitest.OrgUUID + `","conditions":{"a":1,"b":"x","c":1.5,"d":true}}`,
		`{"a":}`, `{"a":1,}`, `"\ud800\udc00"`, `"\u12"`, `NaN`, `-Infinity`, `1e999`, "\xef\xbb\xbf{}", "\xff\xfe{\x00}\x00",
		`{"key":"a\u0000"}`, `[[[[[[[[`, `{"increment_usage":"1_000.00"}`,
		`{"events":[{"name":"a","external_customer_id":"x","metadata":{"k":1e400,"j":NaN}}]}`,
		`{"events":[{"name":"a","customer_id":"` + fastapitest.UUID4 + `","metadata":{"_llm":{"vendor":"v","model":"m","input_tokens":1,"output_tokens":1,"total_tokens":2}}}]}`,
		`{"key":"k","organization_id":"` + fastapitest.OrgUUID + `","conditions":{"a\u0000":1}}`,
		`{"name":"n","metadata":{"k":"\u0000"}}`, `{"url":"https://x.test/\u0000","format":"raw","events":["order.created"]}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), "application/json")
	}
	f.Add([]byte(`{"key":"k"}`), "text/plain")
	bodies := append(routeBodies(), &fastapi.Body{Var: "input", Schema: fastapi.Any{}, Optional: true})
	f.Fuzz(func(t *testing.T, raw []byte, contentType string) {
		for i, b := range bodies {
			v, err := fastapi.DecodeBody(b, nil, contentType, raw)
			if err == nil {
				if _, isAny := b.Schema.(fastapi.Any); !isAny {
					storable(t, v, "body")
				}
				if _, mErr := json.Marshal(v); mErr != nil && v != nil {
					t.Fatalf("body %d: variables do not marshal: %v", i, mErr)
				}
				continue
			}
			if v != nil {
				t.Fatalf("DecodeBody returned both %v and %v", v, err)
			}
			if errors.Is(err, fastapi.ErrUnparsableBody) {
				continue
			}
			var verrs fastapi.ValidationErrors
			if !errors.As(err, &verrs) {
				t.Fatalf("unexpected error %v", err)
			}
			checkFuzzItems(t, verrs, "body")
		}
	})
}

// FuzzStreamedBodyDecodesAsTheWholeBody holds the streaming decoder of the ingest route to
// the decoder of whole bodies: the same value or the same 422 items for any bytes.
func FuzzStreamedBodyDecodesAsTheWholeBody(f *testing.F) {
	for _, s := range []string{
		`{"events":[]}`, `{"events":[{"name":"a","external_customer_id":"x"}]}`,
		`{"events":[{"name":5}],"events":[{"name":"a","external_customer_id":"x"}]}`,
		`{"events":[{"name":"a","external_customer_id":"x"}],"events":5}`, `{"events":[1,2,3]`, `{"events":[{"name":5}]} x`,
		`[{"events":[]}]`, `{"x":{"events":[1]}}`, `{"events":[{"name":"a","customer_id":"` + fastapitest.UUID4 + `","metadata":{"k":1e400}}]}`,
	} {
		f.Add([]byte(s))
	}
	var body *fastapi.Body
	for _, r := range rest.Routes() {
		if r.Path == "/v1/events/ingest" {
			body = r.Body
		}
	}
	keep := &fastapi.Stream{Field: "events", Keep: func(item map[string]any) any { return item }}
	f.Fuzz(func(t *testing.T, raw []byte) {
		whole, wholeErr := fastapi.DecodeBody(body, nil, "application/json", raw)
		streamed, streamedErr := fastapi.DecodeBody(body, keep, "application/json", raw)
		if a, b := errorText(wholeErr), errorText(streamedErr); a != b {
			t.Fatalf("whole body: %s\nstreamed:   %s", a, b)
		}
		a, _ := json.Marshal(whole)
		b, _ := json.Marshal(streamed)
		if string(a) != string(b) {
			t.Fatalf("whole body: %s\nstreamed:   %s", a, b)
		}
	})
}

// errorText renders a decoding error, 422 items included, for comparison.
func errorText(err error) string {
	var verrs fastapi.ValidationErrors
	if !errors.As(err, &verrs) {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	parts := make([]string, len(verrs))
	for i, e := range verrs {
		out, _ := e.MarshalJSON()
		parts[i] = string(out)
	}
	return strings.Join(parts, ",")
}

// FuzzDecodeParams feeds untrusted query strings and path segments to the parameter
// decoding of every route: no panic, items under "query" or "path", and accepted values
// storable (metadata filters included).
func FuzzDecodeParams(f *testing.F) {
	for _, s := range [][2]string{
		{"x", ""}, {fastapitest.UUID4, "page=2&limit=500"}, {"a\x00b", "external_customer_id=a%00b"}, {"a\xffb", "metadata[k]=v&metadata[k]=w"},
		{"%00", "metadata[k%00]=v"}, {"x", "metadata[]=v&metadata[k"}, {"x", "sorting=-created_at&sorting=x"},
		{"x", "customer_id=" + fastapitest.UUID4 + "&customer_id=%ff%fe"}, {"x", "page=1e400&limit=NaN"}, {"x", "a=%zz&%=&&="},
	} {
		f.Add(s[0], s[1])
	}
	routes := rest.Routes()
	f.Fuzz(func(t *testing.T, path, rawQuery string) {
		for _, r := range routes {
			vars := map[string]any{}
			verrs := fastapi.DecodeParams(r.Params, func(string) string { return fastapi.PathValue(path, false) }, rawQuery, vars)
			if len(verrs) > 0 {
				checkFuzzItems(t, verrs, "path", "query")
				continue
			}
			storable(t, map[string]any(vars), r.Method+" "+r.Path)
		}
	})
}
