package resolvers_test

import (
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/resolvers"
)

func TestWireBodyOrdersAndOmitsEntries(t *testing.T) {
	e := gqlerror.List{{Message: "no", Extensions: map[string]any{"code": "FORBIDDEN"}}}
	tests := []struct {
		name string
		resp graphql.Response
		want string
	}{
		{"data alone, copied as written", graphql.Response{Data: json.RawMessage(`{"a": [1, 2]}`)}, `{"data":{"a": [1, 2]}}`},
		{"a request error has no data entry", graphql.Response{Errors: e},
			`{"errors":[{"message":"no","extensions":{"code":"FORBIDDEN"}}]}`},
		{"errors come first, extensions last", graphql.Response{Errors: e, Data: json.RawMessage(`{"a":null}`),
			Extensions: map[string]any{"cost": 3}},
			`{"errors":[{"message":"no","extensions":{"code":"FORBIDDEN"}}],"data":{"a":null},"extensions":{"cost":3}}`},
		{"null data stays null", graphql.Response{Errors: e, Data: json.RawMessage(`null`)},
			`{"errors":[{"message":"no","extensions":{"code":"FORBIDDEN"}}],"data":null}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolvers.WireBody(&tc.resp)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if !json.Valid(got) {
				t.Errorf("not JSON: %s", got)
			}
		})
	}
}
