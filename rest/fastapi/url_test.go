package fastapi_test

import (
	"errors"
	"testing"

	"till/rest/fastapi"
)

// TestURLHostsGoThroughIDNA pins the host conversion the pydantic golden file samples only
// lightly: RFC 3492's sample labels come out as their A-labels, and xn-- labels that do not
// decode to a non-ASCII U-label are refused.
func TestURLHostsGoThroughIDNA(t *testing.T) {
	t.Parallel()
	const invalid = "Input should be a valid URL, invalid international domain name"
	schema := fastapi.URL{Schemes: []string{"http", "https"}, MaxLength: 2083}
	tests := []struct {
		name, input string
		want        string // the serialised URL, or "" when the error below is expected
		wantErr     string
	}{
		{"a Latin label is punycoded", "https://bücher.example/", "https://xn--bcher-kva.example/", ""},
		{"a Japanese label is punycoded", "https://例え.jp/", "https://xn--r8jz45g.jp/", ""},
		{"a Chinese label is punycoded", "https://他们为什么不说中文.cn/", "https://xn--ihqwcrb4cv8a8dqg056pqjye.cn/", ""},
		{"a mixed-script label keeps its ASCII part first", "https://3年b組金八先生.jp/", "https://xn--3b-ww4c5e180e575a65lsy2b.jp/", ""},
		{"an Arabic label passes the Bidi rule", "https://ليهمابتكلموشعربي؟.example/", "https://xn--egbpdaj6bu4bxfgehfvwxn.example/", ""},
		{"an A-label in capitals is lowercased", "https://XN--BCHER-KVA.example/", "https://xn--bcher-kva.example/", ""},
		{"sharp s is kept, not mapped to ss", "https://straße.de/", "https://xn--strae-oqa.de/", ""},
		{"an underscore is allowed outside STD3 rules", "https://x_y.com/", "https://x_y.com/", ""},

		{"an A-label with nothing encoded is refused", "https://xn--.example/", "", invalid},
		{"an A-label of plain ASCII is refused", "https://xn--abc-.example/", "", invalid},
		{"an A-label with a bad digit is refused", "https://xn--bcher-kv!.example/", "", invalid},
		{"an A-label ending inside a number is refused", "https://xn--bcher-kv.example/", "", invalid},
		{"an A-label with a non-ASCII basic part is refused", "https://xn--é-kva.example/", "", invalid},
		{"an A-label that overflows is refused", "https://xn--99999999999a.example/", "", invalid},
		{"an A-label beyond the last code point is refused", "https://xn--zzzzzzzzz.example/", "", invalid},
		{"a zero width joiner out of context is refused", "https://a\u200db.example/", "", invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := &fastapi.Body{Var: "input", Schema: fastapi.Object{Name: "M", Fields: []fastapi.Field{{Name: "u", Schema: schema, Required: true}}}}
			v, err := fastapi.DecodeBody(body, nil, "", []byte(`{"u":"`+tt.input+`"}`))
			if tt.wantErr == "" {
				if got, _ := v.(map[string]any)["u"].(string); err != nil || got != tt.want {
					t.Fatalf("%s: got %v, %v; want %s", tt.input, v, err, tt.want)
				}
				return
			}
			var verrs fastapi.ValidationErrors
			if !errors.As(err, &verrs) || len(verrs) != 1 || verrs[0].Msg != tt.wantErr {
				t.Fatalf("%s: got %v, %v; want %q", tt.input, v, err, tt.wantErr)
			}
		})
	}
}
