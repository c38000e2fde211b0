package rawjson_test

import (
	"errors"
	"testing"

	"till/internal/rawjson"
)

func TestMemberFindsAValueByteForByte(t *testing.T) {
	tests := []struct {
		name, raw, member string
		want              string
		found             bool
		err               bool
	}{
		{name: "a nested object whole", raw: `{"order":{"id":"x","items":[{"a":"}]"}],"n":1.50}}`, member: "order",
			want: `{"id":"x","items":[{"a":"}]"}],"n":1.50}`, found: true},
		{name: "after other members", raw: `{"a":[1,2],"b":"q\"}","c":null}`, member: "c", want: "null", found: true},
		{name: "a string with escapes", raw: `{"a":"x\\\"y"}`, member: "a", want: `"x\\\"y"`, found: true},
		{name: "an escaped key", raw: `{"\u006f":1}`, member: "o", want: "1", found: true},
		{name: "the first of two equal keys", raw: `{"a":1,"a":2}`, member: "a", want: "1", found: true},
		{name: "missing", raw: `{"a":1}`, member: "b"},
		{name: "spaces", raw: " {\n \"a\" : true } ", member: "a", want: "true", found: true},
		{name: "empty object", raw: `{}`, member: "a"},
		{name: "truncated", raw: `{"a":{"b":1}`, member: "a", err: true},
		{name: "unterminated string", raw: `{"a":"x`, member: "a", err: true},
		{name: "no value", raw: `{"a":}`, member: "a", err: true},
		{name: "trailing comma", raw: `{"a":1,}`, member: "a", err: true},
		{name: "not an object", raw: `[{"a":1}]`, member: "a", err: true},
		{name: "empty input", raw: ``, member: "a", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found, err := rawjson.Member([]byte(tt.raw), tt.member)
			if (err != nil) != tt.err || err != nil && !errors.Is(err, rawjson.ErrMalformed) {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if found != tt.found || string(got) != tt.want {
				t.Errorf("got %q (found %v), want %q (found %v)", got, found, tt.want, tt.found)
			}
		})
	}
}

func TestElementsKeepTheirOrder(t *testing.T) {
	var got []string
	err := rawjson.Elements([]byte(` [ {"n":[2]} , "a,b" ,null,-1.5e3 ] `), func(v []byte) error {
		got = append(got, string(v))
		return nil
	})
	want := []string{`{"n":[2]}`, `"a,b"`, "null", "-1.5e3"}
	if err != nil || len(got) != len(want) {
		t.Fatalf("got %q, %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("element %d = %s, want %s", i, got[i], want[i])
		}
	}
	if err := rawjson.Elements([]byte(`[1,`), func([]byte) error { return nil }); !errors.Is(err, rawjson.ErrMalformed) {
		t.Errorf("truncated array: %v", err)
	}
}
