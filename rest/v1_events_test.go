package rest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/rest"
	"till/rest/resttest"
)

// eventsFixture is an organization with a customer, and a body builder for ingests.
type eventsFixture struct {
	s        *v1
	org      org
	customer uuid.UUID
}

func newEventsFixture(t testing.TB) eventsFixture {
	t.Helper()
	s := newV1(t)
	o := s.NewOrg(t, "events:write")
	return eventsFixture{s: s, org: o, customer: s.NewCustomer(t, o.ID, "ext-ev").ID}
}

// batch is an ingest body of n good events (external ids prefix-0…), with bad in place of
// event at when bad is not empty.
func (f eventsFixture) batch(prefix string, n, at int, bad string) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"name":"api_call","customer_id":%q,"external_id":"%s-%d","metadata":{"tokens":%d,"model":"m"}}`,
			f.customer, prefix, i, i)
	}
	if bad != "" {
		items[at] = bad
	}
	return `{"events":[` + strings.Join(items, ",") + `]}`
}

func (f eventsFixture) stored(t *testing.T) int {
	t.Helper()
	var n int
	if err := f.s.DB.Get(&n, `SELECT count(*) FROM events WHERE organization_id = $1`, f.org.ID); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestV1EventsIngest(t *testing.T) {
	t.Parallel()
	f := newEventsFixture(t)
	post := func(token, body string) *httptest.ResponseRecorder {
		return f.s.do(t, call{method: http.MethodPost, target: "/v1/events/ingest", token: token, body: body})
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	bad := func(fields string) string { return `{"name":"api_call",` + fields + `}` }
	customer := fmt.Sprintf(`"customer_id":%q`, f.customer)
	tests := []struct {
		name string
		body string
		want want
	}{
		{"1,000 new events", f.batch("a", 1000, 0, ""), want{status: 200, body: `{"inserted":1000,"duplicates":0}`}},
		{"the same batch again, as after a lost response", f.batch("a", 1000, 0, ""), want{status: 200, body: `{"inserted":0,"duplicates":1000}`}},
		{"repeats inside one batch", `{"events":[` + bad(customer+`,"external_id":"d"`) + `,` + bad(`"external_customer_id":"x","external_id":"d"`) + `]}`,
			want{status: 200, body: `{"inserted":1,"duplicates":1}`}},
		{"an empty batch", `{"events":[]}`, want{status: 200, body: `{"inserted":0,"duplicates":0}`}},
		{"one unknown customer among 1,000", f.batch("b", 1000, 500, bad(fmt.Sprintf(`"customer_id":%q`, uuid.New()))),
			polarValidation(item{Type: "customer_id", Loc: []any{"body", "events", 500, "customer_id"}, Msg: "Customer not found."})},
		{"organization_id with an organization token", f.batch("c", 1000, 999, bad(customer+fmt.Sprintf(`,"organization_id":%q`, f.org.ID))),
			polarValidation(item{Type: "organization_token", Loc: []any{"body", "events", 999, "organization_id"},
				Msg: "Setting organization_id is disallowed when using an organization token.", Input: f.org.ID.String()})},
		{"a future timestamp", f.batch("d", 1000, 3, bad(customer+`,"timestamp":"`+future+`"`)), validation(
			item{Type: "value_error", Loc: []any{"body", "events", 3, "EventCreateCustomer", "timestamp"}, Msg: "Value error, Timestamp must be in the past."},
			item{Type: "value_error", Loc: []any{"body", "events", 3, "EventCreateExternalCustomer", "timestamp"}, Msg: "Value error, Timestamp must be in the past."},
			item{Type: "missing", Loc: []any{"body", "events", 3, "EventCreateExternalCustomer", "external_customer_id"}, Msg: "Field required"})},
		{"a timestamp without a time zone", f.batch("e", 10, 0, bad(`"external_customer_id":"x","timestamp":"2026-01-01T00:00:00"`)), validation(
			item{Type: "timezone_aware", Loc: []any{"body", "events", 0, "EventCreateCustomer", "timestamp"}, Msg: "Input should have timezone info"},
			item{Type: "missing", Loc: []any{"body", "events", 0, "EventCreateCustomer", "customer_id"}},
			item{Type: "timezone_aware", Loc: []any{"body", "events", 0, "EventCreateExternalCustomer", "timestamp"}, Msg: "Input should have timezone info"})},
		{"a 501-character metadata value", f.batch("f", 10, 9, bad(`"external_customer_id":"x","metadata":{"k":"`+strings.Repeat("v", 501)+`"}`)), validation(
			item{Type: "string_too_long", Loc: []any{"body", "events", 9, "EventCreateCustomer", "metadata", "k", "constrained-str"}},
			item{Type: "int_parsing", Loc: []any{"body", "events", 9, "EventCreateCustomer", "metadata", "k", "int"}},
			item{Type: "float_parsing", Loc: []any{"body", "events", 9, "EventCreateCustomer", "metadata", "k", "float"}},
			item{Type: "bool_parsing", Loc: []any{"body", "events", 9, "EventCreateCustomer", "metadata", "k", "bool"}},
			item{Type: "missing", Loc: []any{"body", "events", 9, "EventCreateCustomer", "customer_id"}},
			item{Type: "string_too_long", Loc: []any{"body", "events", 9, "EventCreateExternalCustomer", "metadata", "k", "constrained-str"}},
			item{Type: "int_parsing", Loc: []any{"body", "events", 9, "EventCreateExternalCustomer", "metadata", "k", "int"}},
			item{Type: "float_parsing", Loc: []any{"body", "events", 9, "EventCreateExternalCustomer", "metadata", "k", "float"}},
			item{Type: "bool_parsing", Loc: []any{"body", "events", 9, "EventCreateExternalCustomer", "metadata", "k", "bool"}})},
		{"a _cost in euros", f.batch("g", 10, 1, bad(`"external_customer_id":"x","metadata":{"_cost":{"amount":1,"currency":"eur"}}`)), validation(
			item{Type: "string_pattern_mismatch", Loc: []any{"body", "events", 1, "EventCreateCustomer", "metadata", "_cost", "currency"}},
			item{Type: "missing", Loc: []any{"body", "events", 1, "EventCreateCustomer", "customer_id"}},
			item{Type: "string_pattern_mismatch", Loc: []any{"body", "events", 1, "EventCreateExternalCustomer", "metadata", "_cost", "currency"}})},
		{"a name of the wrong type", `{"events":[{"name":5,"external_customer_id":"x"}]}`, validation(
			item{Type: "string_type", Loc: []any{"body", "events", 0, "EventCreateCustomer", "name"}},
			item{Type: "missing", Loc: []any{"body", "events", 0, "EventCreateCustomer", "customer_id"}},
			item{Type: "string_type", Loc: []any{"body", "events", 0, "EventCreateExternalCustomer", "name"}})},
		{"no events field", `{}`, validation(item{Type: "missing", Loc: []any{"body", "events"}})},
	}
	for _, tt := range tests {
		before := f.stored(t)
		rec := post(f.org.Token, tt.body)
		t.Run(tt.name, func(t *testing.T) {
			tt.want.check(t, rec)
			if rec.Code != 200 && f.stored(t) != before {
				t.Errorf("a rejected batch changed the stored events: %d -> %d", before, f.stored(t))
			}
		})
	}
	t.Run("an 11 MiB batch is 413 and stores nothing", func(t *testing.T) {
		body := f.batch("big", 11<<20/90, 0, "")
		if len(body) <= 11<<20 {
			body = body[:len(body)-2] + `,{"name":"` + strings.Repeat("p", 11<<20-len(body)) + `","external_customer_id":"x"}]}`
		}
		want{status: 413, error: "RequestBodyTooLarge"}.check(t, post(f.org.Token, body))
	})
	t.Run("without events:write", func(t *testing.T) {
		insufficientScope("events:write").check(t, post(f.s.NewToken(t, f.org.ID, "customers:read"), f.batch("h", 1, 0, "")))
	})
	t.Run("anonymous", func(t *testing.T) {
		unauthorized().check(t, post("", f.batch("i", 1, 0, "")))
	})
	t.Run("anonymous with events that fail validation, which authentication beats", func(t *testing.T) {
		unauthorized().check(t, post("", f.batch("i", 2, 1, `{"name":5}`)))
	})
	if n := f.stored(t); n != 1001 {
		t.Errorf("%d events stored, want 1001", n)
	}
}

// The ingest route hands validated events to the use case instead of executing its
// operation; both ways must answer the same bytes, successes and failures alike.
func TestIngestRouteRendersExactlyItsOperation(t *testing.T) {
	t.Parallel()
	f := newEventsFixture(t)
	operationOnly, err := rest.NewRouter(rest.Config{Executor: f.s.Resolver.Executor(), Routes: rest.Routes(),
		Schema: f.s.Resolver.Schema().Schema(), Authenticate: auth.Middleware(f.s.Resolver, f.s.Secret)})
	if err != nil {
		t.Fatal(err)
	}
	unknown := fmt.Sprintf(`{"name":"x","customer_id":%q}`, uuid.New())
	for _, tc := range []struct {
		name string
		body func(prefix string) string
	}{
		{"new events", func(p string) string { return f.batch(p, 3, 0, "") }},
		{"duplicates", func(string) string { return f.batch("same", 3, 0, "") }},
		{"an unknown customer", func(p string) string { return f.batch(p, 3, 1, unknown) }},
		{"with _cost and _llm metadata", func(p string) string {
			return `{"events":[{"name":"llm","external_customer_id":"c","external_id":"` + p + `","metadata":{"_cost":{"amount":"0.5","currency":"usd"},` +
				`"_llm":{"vendor":"v","model":"m","input_tokens":1,"output_tokens":2,"total_tokens":3}}}]}`
		}},
		// The direct route validates events while it parses them; what json.loads and
		// pydantic would make of the whole body must not change.
		{"a repeated events key, whose last value wins", func(p string) string {
			return `{"events":[` + unknown + `],"x":1,"events":` + f.batch(p, 2, 0, "")[len(`{"events":`):]
		}},
		{"a repeated events key whose last value is no list", func(p string) string {
			return f.batch(p, 2, 0, "")[:len(f.batch(p, 2, 0, ""))-1] + `,"events":5}`
		}},
		{"bad events before a syntax error", func(string) string { return f.batch("s", 3, 1, unknown)[:140] }},
		{"bad events before extra data", func(string) string { return f.batch("s", 3, 1, `{"name":5}`) + ` x` }},
		{"events that fail validation", func(string) string { return f.batch("s", 3, 1, `{"name":5,"metadata":{"k":1e400}}`) }},
		{"events nested deeper than the top level", func(string) string { return `{"batch":` + f.batch("s", 2, 0, "") + `}` }},
		{"a top-level list", func(string) string { return `[` + f.batch("s", 2, 0, "") + `]` }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer := func(h http.Handler, prefix string) *httptest.ResponseRecorder {
				return resttest.Serve(t, h, call{method: http.MethodPost, target: "/v1/events/ingest", token: f.org.Token,
					body: tc.body(prefix)}.request())
			}
			if tc.name == "duplicates" {
				answer(f.s.h, "")
			}
			viaOperation := answer(operationOnly, tc.name+"-op")
			direct := answer(f.s.h, tc.name+"-direct")
			if viaOperation.Code != direct.Code || viaOperation.Body.String() != direct.Body.String() {
				t.Errorf("operation answered %d %s\ndirect answered    %d %s", viaOperation.Code, viaOperation.Body, direct.Code, direct.Body)
			}
		})
	}
}

// Structured metadata is stored under the names the client sent, as upstream stores it.
func TestV1EventsIngestStoresLLMMetadataAsSent(t *testing.T) {
	t.Parallel()
	f := newEventsFixture(t)
	body := `{"events":[{"name":"llm","external_customer_id":"c","metadata":{"_cost":{"amount":"0.5","currency":"usd"},` +
		`"_llm":{"vendor":"v","model":"m","input_tokens":1,"cached_input_tokens":0,"output_tokens":2,"total_tokens":3}}}]}`
	want{status: http.StatusOK, body: `{"inserted":1,"duplicates":0}`}.check(t,
		f.s.do(t, call{method: http.MethodPost, target: "/v1/events/ingest", token: f.org.Token, body: body}))
	var stored string
	if err := f.s.DB.Get(&stored, `SELECT metadata->'_llm' FROM events WHERE organization_id = $1`, f.org.ID); err != nil {
		t.Fatal(err)
	}
	if want := `{"model": "m", "vendor": "v", "input_tokens": 1, "total_tokens": 3, "output_tokens": 2, "cached_input_tokens": 0}`; stored != want {
		t.Errorf("stored _llm = %s, want %s", stored, want)
	}
}
