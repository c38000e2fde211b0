package fastapi_test

import (
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
