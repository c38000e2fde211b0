package fastapi_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"till/rest/fastapi"
)

// itemsJSON renders 422 items exactly as /v1 writes them in a 422's detail.
func itemsJSON(tb testing.TB, errs fastapi.ValidationErrors) string {
	tb.Helper()
	parts := make([]string, len(errs))
	for i, e := range errs {
		b, err := e.MarshalJSON()
		if err != nil {
			tb.Fatal(err)
		}
		parts[i] = string(b)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// compactJSON normalises whitespace so expectations can be written readably
// while key order and number spelling still count.
func compactJSON(tb testing.TB, s string) string {
	tb.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		tb.Fatalf("invalid JSON %q: %v", s, err)
	}
	return buf.String()
}
