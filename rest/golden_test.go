package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"testing"
	"testing/fstest"

	"github.com/99designs/gqlgen/graphql"

	"till/rest"
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
func goldenBodies() map[string]*rest.Body {
	limitActivations := rest.Int32()
	limitActivations.Gt = rest.At(0)
	update := &rest.Body{Var: "input", Schema: rest.Object{Name: "LicenseKeyUpdate", Fields: []rest.Field{
		{Name: "status", Schema: rest.Nullable{Schema: rest.Enum{Name: "Status", Values: []string{"granted", "revoked", "disabled"}}}},
		{Name: "usage", Schema: rest.Int32()},
		{Name: "limit_activations", Schema: rest.Nullable{Schema: limitActivations}},
		{Name: "expires_at", Schema: rest.Nullable{Schema: rest.DateTime{}}},
		{Name: "flag", Schema: rest.Bool{}},
		{Name: "ratio", Schema: rest.Float{AllowInfNaN: true}}, // pydantic's float
	}}}
	session := customerSessionBody()
	for _, m := range session.Schema.(rest.Union).Members {
		m.(rest.Object).Fields[2].Schema = rest.Nullable{Schema: rest.String{MinLength: 1, MaxLength: 20}}
	}
	event := func(name string, f rest.Field) rest.Object {
		return rest.Object{Name: name, Fields: []rest.Field{
			{Name: "name", Schema: rest.String{MaxLength: 12}, Required: true},
			{Name: "timestamp", Schema: rest.Nullable{Schema: rest.DateTime{Aware: true}}},
			f,
		}}
	}
	events := &rest.Body{Var: "input", Schema: rest.Object{Name: "EventsIngest", Fields: []rest.Field{
		{Name: "events", Required: true, Schema: rest.List{Items: rest.Union{Members: []rest.Schema{
			event("EventCreateCustomer", rest.Field{Name: "customer_id", Schema: rest.UUID4{}, Required: true}),
			event("EventCreateExternalCustomer", rest.Field{Name: "external_customer_id", Schema: rest.String{}, Required: true}),
		}}}},
	}}}
	return map[string]*rest.Body{"validate": licenseKeyValidateBody(), "update": update, "session": session, "events": events}
}

func TestBodiesFailExactlyAsPydanticDoes(t *testing.T) {
	bodies := goldenBodies()
	for _, c := range loadGolden(t).Body {
		_, err := rest.DecodeBody(bodies[c.Schema], "application/json", []byte(c.Raw))
		got := "null"
		var verrs rest.ValidationErrors
		if errors.As(err, &verrs) {
			got = itemsJSON(t, verrs)
		} else if err != nil {
			got = err.Error()
		}
		if want := compactJSON(t, string(c.Detail)); got != want {
			t.Errorf("%s body %s:\n got %s\nwant %s", c.Schema, c.Raw, got, want)
		}
	}
}

func goldenData(context.Context, string, string, map[string]any) *graphql.Response {
	return &graphql.Response{Data: json.RawMessage(`{"golden":{"golden":true}}`)}
}

func TestQueryParametersFailExactlyAsPydanticDoes(t *testing.T) {
	docs := fstest.MapFS{"Golden.graphql": &fstest.MapFile{Data: []byte(`query Golden($page: Int, $bool: Boolean, $datetime: DateTime,
  $float: Float, $uuid: UUID, $filterUuid: [UUID!], $filterEnum: [OrderStatus!], $filterStr: [String!], $sorting: [String!]) { golden }`)}}
	route := rest.Route{Method: http.MethodGet, Path: "/v1/golden", Operation: "Golden", Field: "golden", Params: []rest.Param{
		rest.Page(),
		rest.Query("bool", "", rest.Nullable{Schema: rest.Bool{}}),
		rest.Query("datetime", "", rest.Nullable{Schema: rest.DateTime{}}),
		rest.Query("float", "", rest.Float{AllowInfNaN: true}), // pydantic's float
		rest.Query("uuid", "", rest.UUID4{}),
		rest.Filter("filter_uuid", "", rest.UUID4{}),
		rest.Filter("filter_enum", "", rest.Enum{Name: "OrderStatus", Values: []string{"draft", "pending", "paid"}}),
		rest.Filter("filter_str", "", rest.String{}),
		rest.Sorting("created_at", "status"),
	}}
	h, err := rest.NewRouter(rest.Config{Executor: rest.ExecutorFunc(goldenData), Routes: []rest.Route{route}, Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range loadGolden(t).Query {
		target := "/v1/golden?" + url.Values{c.Param: c.Values}.Encode()
		rec := serve(h, request(http.MethodGet, target, ""))
		want, wantStatus := `{"golden":true}`, http.StatusOK
		if string(c.Detail) != "null" {
			want, wantStatus = `{"error":"RequestValidationError","detail":`+compactJSON(t, string(c.Detail))+`}`, http.StatusUnprocessableEntity
		}
		if rec.Code != wantStatus || !bytes.Equal(rec.Body.Bytes(), []byte(want)) {
			t.Errorf("%s=%q:\n got %d %s\nwant %d %s", c.Param, c.Values, rec.Code, rec.Body, wantStatus, want)
		}
	}
}

func TestURLsParseExactlyAsPydanticDoes(t *testing.T) {
	schemas := map[string]rest.URL{
		"HttpUrl":  {Schemes: []string{"http", "https"}, MaxLength: 2083},
		"HttpsUrl": {Schemes: []string{"https"}, MaxLength: 2083},
	}
	for _, c := range loadGolden(t).URL {
		body := &rest.Body{Var: "input", Schema: rest.Object{Name: "M", Fields: []rest.Field{{Name: "u", Schema: schemas[c.Schema], Required: true}}}}
		v, err := rest.DecodeBody(body, "", []byte(`{"u":`+string(c.Input)+`}`))
		var verrs rest.ValidationErrors
		switch {
		case c.Value != nil:
			if got, _ := v.(map[string]any)["u"].(string); err != nil || got != *c.Value {
				t.Errorf("%s %s: got %v, %v; want %s", c.Schema, c.Input, v, err, *c.Value)
			}
		case errors.As(err, &verrs):
			if got, want := itemsJSON(t, verrs), compactJSON(t, string(c.Detail)); got != want {
				t.Errorf("%s %s:\n got %s\nwant %s", c.Schema, c.Input, got, want)
			}
		default:
			t.Errorf("%s %s: got %v, %v; want 422", c.Schema, c.Input, v, err)
		}
	}
}
