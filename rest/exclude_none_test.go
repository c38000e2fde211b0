package rest_test

import (
	"testing"

	"till/rest"
)

func TestExcludeNoneDropsNullMembersOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"null members of nested objects go, the rest keeps its order",
			`{"b":1,"a":null,"periods":[{"x":null,"y":2},{"x":3,"y":null}],"z":{"q":null}}`,
			`{"b":1,"periods":[{"y":2},{"x":3}],"z":{}}`},
		{"a first member that is null leaves no comma", `{"a":null,"b":null,"c":true}`, `{"c":true}`},
		{"nulls in arrays stay, as FastAPI keeps them", `[null,1,{"a":null}]`, `[null,1,{}]`},
		{"strings keep their bytes, escapes and look-alikes included",
			`{"s":"a \"null\" \\ \u00e9 <&>","t":"null","u":null}`, `{"s":"a \"null\" \\ \u00e9 <&>","t":"null"}`},
		{"whitespace between tokens is dropped", "{ \"a\" : null ,\n \"b\" : [ 1 , 2 ] }", `{"b":[1,2]}`},
		{"numbers and booleans are copied as written", `{"n":-1.5e3,"f":false,"i":12345678901234567890}`,
			`{"n":-1.5e3,"f":false,"i":12345678901234567890}`},
		{"a bare null document stays null", `null`, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rest.ExcludeNone([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	for _, bad := range []string{`{"a":1`, `{"a" 1}`, `[1 2]`, `{"a":"x`, `{"a":1}}`, `{1:2}`} {
		if got, err := rest.ExcludeNone([]byte(bad)); err == nil {
			t.Errorf("%s: got %s, want an error", bad, got)
		}
	}
}
