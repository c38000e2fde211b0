package fastapi_test

import (
	"encoding/json"
	"errors"
	"testing"

	"till/rest/fastapi"
)

// TestAfterValidatorsAndEnumLiteralsFailAsPydantic pins the model and field validators that
// run once a value is valid, and literals of enum members, against pydantic's own answers
// (pydantic 2.13: a model_validator(mode="after") raising ValueError, and
// Literal[MemberRole.member, MemberRole.billing_manager]).
func TestAfterValidatorsAndEnumLiteralsFailAsPydantic(t *testing.T) {
	t.Parallel()
	body := &fastapi.Body{Var: "input", Schema: fastapi.After{
		Schema: fastapi.Object{Name: "M", Fields: []fastapi.Field{
			{Name: "a", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
			{Name: "role", Schema: fastapi.EnumLiteral{Enum: "MemberRole", Values: []string{"member", "billing_manager"}}},
		}},
		Check: func(v any) string {
			if v.(map[string]any)["a"] == nil {
				return "a is required"
			}
			return ""
		},
	}}
	tests := []struct{ name, body, want string }{
		{"a refusal of the model is a value_error at the body, with the body as input",
			`{"a":null}`,
			`[{"type":"value_error","loc":["body"],"msg":"Value error, a is required","input":{"a":null},"ctx":{"error":{}}}]`},
		{"a field error comes first and the model validator does not run",
			`{"role":"owner"}`,
			`[{"type":"literal_error","loc":["body","role"],"msg":"Input should be <MemberRole.member: 'member'> or <MemberRole.billing_manager: 'billing_manager'>","input":"owner","ctx":{"expected":"<MemberRole.member: 'member'> or <MemberRole.billing_manager: 'billing_manager'>"}}]`},
		{"an accepted value passes", `{"a":"x","role":"billing_manager"}`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fastapi.DecodeBody(body, nil, "", []byte(tt.body))
			var verrs fastapi.ValidationErrors
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want == "":
			case !errors.As(err, &verrs):
				t.Fatalf("err = %v, want validation errors", err)
			default:
				if got := itemsJSON(t, verrs); got != tt.want {
					t.Errorf("items = %s\nwant    %s", got, tt.want)
				}
			}
		})
	}
}

// TestPyDumpsLenIsPythonsLength compares with len(json.dumps(v)) as Python 3 computes it.
func TestPyDumpsLenIsPythonsLength(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		json string
		want int
	}{
		{`{}`, 2},
		{`{"a": 1}`, 8},
		{`{"k": "ééé"}`, 27},
		{`{"x": [1, 2.5, null, true, "a\"b"], "y": {"z": "😀\u007f\n"}}`, 71},
		{`{"n": 100000000000000000000}`, 28},
	} {
		t.Run(tt.json, func(t *testing.T) {
			body := &fastapi.Body{Var: "input", Schema: fastapi.Map{}}
			v, err := fastapi.DecodeBody(body, nil, "", []byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			if got := fastapi.PyDumpsLen(v); got != tt.want {
				b, _ := json.Marshal(v)
				t.Errorf("PyDumpsLen(%s) = %d, want %d", b, got, tt.want)
			}
		})
	}
}
