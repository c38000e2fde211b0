package fastapi_test

import (
	"encoding/json"
	"errors"
	"math"
	"net/url"
	"os"
	"testing"

	"till/rest/fastapi/fastapitest"

	"till/rest/fastapi"
)

// The golden cases are pydantic's own answers (testdata/pydantic_golden.py
// builds them with pydantic v2); replaying them pins every 422 item, byte for
// byte, to what upstream would send for the same input.
type goldenCases struct {
	Body []struct {
		Schema string          `json:"schema"`
		Raw    string          `json:"raw"`
		Detail json.RawMessage `json:"detail"`
	} `json:"body"`
	Query []struct {
		Param  string          `json:"param"`
		Values []string        `json:"values"`
		Detail json.RawMessage `json:"detail"`
	} `json:"query"`
	URL []struct {
		Schema string          `json:"schema"`
		Input  json.RawMessage `json:"input"`
		Value  *string         `json:"value"`
		Detail json.RawMessage `json:"detail"`
	} `json:"url"`
}

func loadGolden(tb testing.TB) goldenCases {
	tb.Helper()
	b, err := os.ReadFile("testdata/pydantic-golden.json")
	if err != nil {
		tb.Fatal(err)
	}
	var g goldenCases
	if err := json.Unmarshal(b, &g); err != nil {
		tb.Fatal(err)
	}
	return g
}

// goldenBodies mirror the models of pydantic_golden.py.
func goldenBodies() map[string]*fastapi.Body {
	limitActivations := fastapi.Int32()
	limitActivations.Gt = fastapi.At(0)
	update := &fastapi.Body{Var: "input", Schema: fastapi.Object{Name: "LicenseKeyUpdate", Fields: []fastapi.Field{
		{Name: "status", Schema: fastapi.Nullable{Schema: fastapi.Enum{Name: "Status", Values: []string{"granted", "revoked", "disabled"}}}},
		{Name: "usage", Schema: fastapi.Int32()},
		{Name: "limit_activations", Schema: fastapi.Nullable{Schema: limitActivations}},
		{Name: "expires_at", Schema: fastapi.Nullable{Schema: fastapi.DateTime{}}},
		{Name: "flag", Schema: fastapi.Bool{}},
		{Name: "ratio", Schema: fastapi.Float{AllowInfNaN: true}}, // pydantic's float
	}}}
	session := fastapitest.CustomerSessionBody()
	for _, m := range session.Schema.(fastapi.Union).Members {
		m.(fastapi.Object).Fields[2].Schema = fastapi.Nullable{Schema: fastapi.String{MinLength: 1, MaxLength: 20}}
	}
	event := func(name string, f fastapi.Field) fastapi.Object {
		return fastapi.Object{Name: name, Fields: []fastapi.Field{
			{Name: "name", Schema: fastapi.String{MaxLength: 12}, Required: true},
			{Name: "timestamp", Schema: fastapi.Nullable{Schema: fastapi.DateTime{Aware: true}}},
			f,
		}}
	}
	events := &fastapi.Body{Var: "input", Schema: fastapi.Object{Name: "EventsIngest", Fields: []fastapi.Field{
		{Name: "events", Required: true, Schema: fastapi.List{Items: fastapi.Union{Members: []fastapi.Schema{
			event("EventCreateCustomer", fastapi.Field{Name: "customer_id", Schema: fastapi.UUID4{}, Required: true}),
			event("EventCreateExternalCustomer", fastapi.Field{Name: "external_customer_id", Schema: fastapi.String{}, Required: true}),
		}}}},
	}}}
	return map[string]*fastapi.Body{"validate": fastapitest.LicenseKeyValidateBody(), "update": update, "session": session, "events": events}
}

func TestBodiesFailExactlyAsPydanticDoes(t *testing.T) {
	bodies := goldenBodies()
	for _, c := range loadGolden(t).Body {
		_, err := fastapi.DecodeBody(bodies[c.Schema], nil, "application/json", []byte(c.Raw))
		got := "null"
		var verrs fastapi.ValidationErrors
		if errors.As(err, &verrs) {
			got = itemsJSON(t, verrs)
		} else if err != nil {
			got = err.Error()
		}
		if want := fastapitest.CompactJSON(t, string(c.Detail)); got != want {
			t.Errorf("%s body %s:\n got %s\nwant %s", c.Schema, c.Raw, got, want)
		}
	}
}

// goldenParams mirror the query parameters of pydantic_golden.py: Polar's page, scalar
// parameters, MultipleQueryFilter and sorting.
func goldenParams() []fastapi.Param {
	query := func(name string, s fastapi.Schema) fastapi.Param {
		return fastapi.Param{In: fastapi.InQuery, Name: name, Schema: s}
	}
	filter := func(name string, s fastapi.Schema) fastapi.Param {
		return fastapi.Param{In: fastapi.InQuery, Name: name, Schema: s, Shape: fastapi.ShapeFilter}
	}
	return []fastapi.Param{
		{In: fastapi.InQuery, Name: "page", Schema: fastapi.Int{Gt: fastapi.At(0)}, Clamp: math.MaxInt32},
		query("bool", fastapi.Nullable{Schema: fastapi.Bool{}}),
		query("datetime", fastapi.Nullable{Schema: fastapi.DateTime{}}),
		query("float", fastapi.Float{AllowInfNaN: true}), // pydantic's float
		query("uuid", fastapi.UUID4{}),
		filter("filter_uuid", fastapi.UUID4{}),
		filter("filter_enum", fastapi.Enum{Name: "OrderStatus", Values: []string{"draft", "pending", "paid"}}),
		filter("filter_str", fastapi.String{}),
		{In: fastapi.InQuery, Name: "sorting", Shape: fastapi.ShapeList,
			Schema: fastapi.Enum{Values: []string{"created_at", "-created_at", "status", "-status"}}},
	}
}

func TestQueryParametersFailExactlyAsPydanticDoes(t *testing.T) {
	params := goldenParams()
	noPath := func(string) string { return "" }
	for _, c := range loadGolden(t).Query {
		rawQuery := url.Values{c.Param: c.Values}.Encode()
		got := itemsJSON(t, fastapi.DecodeParams(params, noPath, rawQuery, map[string]any{}))
		want := "[]"
		if string(c.Detail) != "null" {
			want = fastapitest.CompactJSON(t, string(c.Detail))
		}
		if got != want {
			t.Errorf("%s=%q:\n got %s\nwant %s", c.Param, c.Values, got, want)
		}
	}
}

func TestURLsParseExactlyAsPydanticDoes(t *testing.T) {
	schemas := map[string]fastapi.URL{
		"HttpUrl":  {Schemes: []string{"http", "https"}, MaxLength: 2083},
		"HttpsUrl": {Schemes: []string{"https"}, MaxLength: 2083},
	}
	for _, c := range loadGolden(t).URL {
		body := &fastapi.Body{Var: "input", Schema: fastapi.Object{Name: "M", Fields: []fastapi.Field{{Name: "u", Schema: schemas[c.Schema], Required: true}}}}
		v, err := fastapi.DecodeBody(body, nil, "", []byte(`{"u":`+string(c.Input)+`}`))
		var verrs fastapi.ValidationErrors
		switch {
		case c.Value != nil:
			if got, _ := v.(map[string]any)["u"].(string); err != nil || got != *c.Value {
				t.Errorf("%s %s: got %v, %v; want %s", c.Schema, c.Input, v, err, *c.Value)
			}
		case errors.As(err, &verrs):
			if got, want := itemsJSON(t, verrs), fastapitest.CompactJSON(t, string(c.Detail)); got != want {
				t.Errorf("%s %s:\n got %s\nwant %s", c.Schema, c.Input, got, want)
			}
		default:
			t.Errorf("%s %s: got %v, %v; want 422", c.Schema, c.Input, v, err)
		}
	}
}
