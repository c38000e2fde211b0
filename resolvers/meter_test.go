package resolvers_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// meterFields selects a meter with its filter and aggregation in upstream's JSON shapes, the
// filter as deep as one nests.
const meterFields = `id createdAt modifiedAt organizationId name unit customLabel customMultiplier
	filter { conjunction clauses { ... on MeterFilterComparison { property operator value }
		... on MeterFilterGroup { conjunction clauses { ... on MeterFilterComparison { property operator value } } } } }
	aggregation { ... on MeterCountAggregation { func } ... on MeterPropertyAggregation { func property }
		... on MeterUniqueAggregation { func property } }
	archivedAt metadata`

type meter struct {
	ID               uuid.UUID       `json:"id"`
	OrganizationID   uuid.UUID       `json:"organizationId"`
	Name             string          `json:"name"`
	Unit             string          `json:"unit"`
	CustomLabel      *string         `json:"customLabel"`
	CustomMultiplier *int            `json:"customMultiplier"`
	Filter           json.RawMessage `json:"filter"`
	Aggregation      json.RawMessage `json:"aggregation"`
	ArchivedAt       *string         `json:"archivedAt"`
	Metadata         map[string]any  `json:"metadata"`
}

const createMeterDoc = `mutation($input: MeterCreateInput!) { createMeter(input: $input) { ` + meterFields + ` } }`

// apiCallsInput is a valid create input; tests override fields of a copy.
func apiCallsInput(overrides vars) vars {
	in := vars{
		"name":        "API calls",
		"filter":      vars{"conjunction": "and", "clauses": []any{vars{"property": "name", "operator": "eq", "value": "api_call"}}},
		"aggregation": vars{"func": "count"},
	}
	for k, v := range overrides {
		in[k] = v
	}
	return in
}

func createMeter(tb testing.TB, s *resolverstest.Server, token string, input vars) meter {
	tb.Helper()
	var out struct{ CreateMeter meter }
	s.Query(tb, token, createMeterDoc, vars{"input": input}, &out)
	return out.CreateMeter
}

// sameJSON compares two JSON documents by value.
func sameJSON(tb testing.TB, got json.RawMessage, want string) bool {
	tb.Helper()
	var g any
	if err := json.Unmarshal(got, &g); err != nil {
		tb.Fatal(err)
	}
	return reflect.DeepEqual(g, jsonOf(tb, want))
}

func TestMeterLifecycle(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	created := createMeter(t, s, org.Token, apiCallsInput(vars{
		"unit": "custom", "customLabel": "requests", "customMultiplier": 1000, "metadata": vars{"team": "core"},
		"filter": vars{"conjunction": "or", "clauses": []any{
			vars{"property": "metadata.tokens", "operator": "gte", "value": 10},
			vars{"conjunction": "and", "clauses": []any{
				vars{"property": "name", "operator": "like", "value": "api"},
				vars{"property": "beta", "operator": "eq", "value": true},
			}},
		}},
		"aggregation": vars{"func": "sum", "property": "metadata.tokens"},
	}))
	if created.OrganizationID != org.ID || created.Name != "API calls" || created.Unit != "custom" ||
		*created.CustomLabel != "requests" || *created.CustomMultiplier != 1000 || created.Metadata["team"] != "core" ||
		created.ArchivedAt != nil {
		t.Errorf("created = %+v", created)
	}
	wantFilter := `{"conjunction": "or", "clauses": [{"property": "tokens", "operator": "gte", "value": 10},
		{"conjunction": "and", "clauses": [{"property": "name", "operator": "like", "value": "api"},
		{"property": "beta", "operator": "eq", "value": true}]}]}`
	if !sameJSON(t, created.Filter, wantFilter) || !sameJSON(t, created.Aggregation, `{"func": "sum", "property": "tokens"}`) {
		t.Errorf("stored filter %s, aggregation %s", created.Filter, created.Aggregation)
	}
	other := createMeter(t, s, org.Token, apiCallsInput(vars{"name": "Uploads"}))

	var updated struct{ UpdateMeter meter }
	s.Query(t, org.Token, `mutation($input: MeterUpdateInput!) { updateMeter(input: $input) { `+meterFields+` } }`,
		vars{"input": vars{"id": created.ID, "name": "Tokens", "unit": "token", "aggregation": vars{"func": "max", "property": "tokens"}}}, &updated)
	if u := updated.UpdateMeter; u.Name != "Tokens" || u.Unit != "token" || u.CustomLabel != nil || u.CustomMultiplier != nil ||
		!sameJSON(t, u.Aggregation, `{"func": "max", "property": "tokens"}`) || !sameJSON(t, u.Filter, wantFilter) {
		t.Errorf("updated = %+v", u)
	}

	var archived struct{ ArchiveMeter meter }
	s.Query(t, org.Token, `mutation($id: UUID!) { archiveMeter(id: $id) { `+meterFields+` } }`, vars{"id": other.ID}, &archived)
	if archived.ArchiveMeter.ArchivedAt == nil {
		t.Fatalf("archived = %+v", archived.ArchiveMeter)
	}

	list := func(filter vars, sorting ...string) []uuid.UUID {
		var out struct {
			Meters struct {
				Items      []struct{ ID uuid.UUID }
				Pagination struct{ TotalCount int }
			}
		}
		s.Query(t, org.Token, `query($f: MeterListFilter, $s: [String!]) { meters(filter: $f, sorting: $s) { items { id } pagination { totalCount } } }`,
			vars{"f": filter, "s": sorting}, &out)
		return itemIDs(out.Meters.Items)
	}
	for _, c := range []struct {
		name    string
		filter  vars
		sorting []string
		want    []uuid.UUID
	}{
		{"by name", nil, nil, []uuid.UUID{created.ID, other.ID}},
		{"by name descending", nil, []string{"-name"}, []uuid.UUID{other.ID, created.ID}},
		{"query", vars{"query": "OKEN"}, nil, []uuid.UUID{created.ID}},
		{"archived", vars{"isArchived": true}, nil, []uuid.UUID{other.ID}},
		{"live", vars{"isArchived": false}, nil, []uuid.UUID{created.ID}},
		{"metadata", vars{"metadata": []any{vars{"key": "team", "values": []any{"core"}}}}, nil, []uuid.UUID{created.ID}},
	} {
		if got := list(c.filter, c.sorting...); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}

	var unarchived struct{ UpdateMeter meter }
	s.Query(t, org.Token, `mutation($id: UUID!) { updateMeter(input: {id: $id, isArchived: false}) { archivedAt name } }`,
		vars{"id": other.ID}, &unarchived)
	if unarchived.UpdateMeter.ArchivedAt != nil || unarchived.UpdateMeter.Name != "Uploads" {
		t.Errorf("unarchived = %+v", unarchived.UpdateMeter)
	}

	stranger := s.NewOrg(t, resolverstest.AllScopes)
	for _, doc := range []string{`query($id: UUID!) { meter(id: $id) { id } }`,
		`mutation($id: UUID!) { archiveMeter(id: $id) { id } }`,
		`mutation($id: UUID!) { updateMeter(input: {id: $id, name: "Mine now"}) { id } }`} {
		wantError(t, s.QueryError(t, stranger.Token, doc, vars{"id": created.ID}), "NOT_FOUND", "ResourceNotFound")
	}
}

func TestMeterValidation(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	cmp := func(property, operator string, value any) vars {
		return vars{"property": property, "operator": operator, "value": value}
	}
	filter := func(clauses ...any) vars { return vars{"conjunction": "and", "clauses": clauses} }
	cases := []struct {
		name string
		in   vars
		typ  string
		loc  []any
	}{
		{"short name", vars{"name": "ab"}, "string_too_short", []any{"input", "name"}},
		{"custom unit without label", vars{"unit": "custom", "customMultiplier": 10}, "missing", []any{"input", "customLabel"}},
		{"custom unit without multiplier", vars{"unit": "custom", "customLabel": "x"}, "missing", []any{"input", "customMultiplier"}},
		{"custom multiplier below 1", vars{"unit": "custom", "customLabel": "x", "customMultiplier": 0}, "greater_than", []any{"input", "customMultiplier"}},
		{"clause of both kinds", vars{"filter": filter(vars{"property": "name", "operator": "eq", "value": "a", "conjunction": "or"})},
			"value_error", []any{"input", "filter", "clauses", 0}},
		{"group without conjunction", vars{"filter": filter(vars{"clauses": []any{}})}, "missing", []any{"input", "filter", "clauses", 0, "conjunction"}},
		{"clause without property", vars{"filter": filter(vars{"operator": "eq", "value": "a"})}, "value_error", []any{"input", "filter", "clauses", 0, "property"}},
		{"clause without operator", vars{"filter": filter(vars{"property": "name", "value": "a"})}, "value_error", []any{"input", "filter", "clauses", 0, "operator"}},
		{"clause without value", vars{"filter": filter(vars{"property": "name", "operator": "eq"})}, "value_error", []any{"input", "filter", "clauses", 0, "value"}},
		{"fractional value", vars{"filter": filter(cmp("n", "eq", 1.5))}, "value_error", []any{"input", "filter", "clauses", 0, "value"}},
		{"object value", vars{"filter": filter(cmp("n", "eq", vars{"a": 1}))}, "value_error", []any{"input", "filter", "clauses", 0, "value"}},
		{"nested error", vars{"filter": filter(cmp("n", "eq", 1), filter(cmp("n", "eq", 1), cmp("n", "eq", 4294967296)))},
			"value_error", []any{"input", "filter", "clauses", 1, "clauses", 1, "value"}},
		{"a filter three levels deep", vars{"filter": filter(filter(filter(cmp("n", "eq", 1))))},
			"value_error", []any{"input", "filter", "clauses", 0, "clauses", 0}},
		{"a group of 26 clauses", vars{"filter": filter(slices.Repeat([]any{cmp("n", "eq", 1)}, 26)...)},
			"value_error", []any{"input", "filter", "clauses"}},
		{"sum without property", vars{"aggregation": vars{"func": "sum"}}, "value_error", []any{"input", "aggregation", "property"}},
		{"metadata too long", vars{"metadata": vars{"a-key-that-is-longer-than-forty-characters!": 1}}, "string_too_long",
			[]any{"input", "metadata", "a-key-that-is-longer-than-forty-characters!"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := s.QueryError(t, org.Token, createMeterDoc, vars{"input": apiCallsInput(c.in)})
			if got.Extensions.Code != "BAD_USER_INPUT" || got.Extensions.Reason != "PolarRequestValidationError" ||
				len(got.Extensions.Fields) != 1 || got.Extensions.Fields[0].Type != c.typ ||
				!reflect.DeepEqual(got.Extensions.Fields[0].Loc, c.loc) {
				t.Errorf("error = %+v, want %s at %v", got, c.typ, c.loc)
			}
		})
	}
	var n int
	s.Get(t, &n, `SELECT count(*) FROM meters`)
	if n != 0 {
		t.Errorf("%d meters stored by invalid creates", n)
	}
}

// TestMeterUpdateRules covers what upstream refuses: archiving a meter a live metered
// price uses, and changing the filter or aggregation once usage has been billed.
func TestMeterUpdateRules(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	m := createMeter(t, s, org.Token, apiCallsInput(nil))
	var p struct{ CreateProduct product }
	s.Query(t, org.Token, `mutation($input: ProductCreateInput!) { createProduct(input: $input) { `+productFields+` } }`,
		vars{"input": vars{"name": "Metered", "recurringInterval": "month", "prices": []any{
			vars{"amountType": "metered_unit", "unitAmount": "0.25", "meterId": m.ID}}}}, &p)
	archiveDoc := `mutation($id: UUID!) { archiveMeter(id: $id) { id } }`
	wantInvalid(t, s.QueryError(t, org.Token, archiveDoc, vars{"id": m.ID}), fieldErr{Type: "value_error",
		Loc: []any{"id"}, Msg: "Cannot archive meter that is still attached to active products", Input: true})
	wantInvalid(t, s.QueryError(t, org.Token, `mutation($id: UUID!) { updateMeter(input: {id: $id, isArchived: true}) { id } }`,
		vars{"id": m.ID}), fieldErr{Type: "value_error", Loc: []any{"input", "isArchived"},
		Msg: "Cannot archive meter that is still attached to active products", Input: true})

	updateFilter := `mutation($id: UUID!) { updateMeter(input: {id: $id, filter: {conjunction: or, clauses: []}}) { filter { conjunction clauses { __typename } } } }`
	var ok struct {
		UpdateMeter struct{ Filter json.RawMessage }
	}
	s.Query(t, org.Token, updateFilter, vars{"id": m.ID}, &ok)
	if !sameJSON(t, ok.UpdateMeter.Filter, `{"conjunction": "or", "clauses": []}`) {
		t.Errorf("filter before billing = %s", ok.UpdateMeter.Filter)
	}
	c := s.NewCustomer(t, org.ID, "")
	s.Exec(t, `INSERT INTO billing_entries (organization_id, type, direction, start_timestamp, end_timestamp, customer_id, product_price_id)
		VALUES ($1, 'metered', 'debit', now(), now(), $2, $3)`, org.ID, c.ID, p.CreateProduct.Prices[0].ID)
	wantInvalid(t, s.QueryError(t, org.Token, updateFilter, vars{"id": m.ID}), fieldErr{Type: "forbidden",
		Loc: []any{"input", "filter"}, Msg: "This field can't be updated because the meter is already aggregating events."})
	s.Query(t, org.Token, `mutation($id: UUID!) { updateMeter(input: {id: $id, name: "Renamed"}) { id } }`, vars{"id": m.ID}, nil)
}

func TestMeterScopes(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	m := createMeter(t, s, org.Token, apiCallsInput(nil))
	readOnly := s.NewToken(t, org.ID, "meters:read")
	customersOnly := s.NewToken(t, org.ID, "customers:read")

	got := s.QueryError(t, readOnly, createMeterDoc, vars{"input": apiCallsInput(nil)})
	if got.Extensions.Code != "FORBIDDEN" || got.Extensions.Reason != "insufficient_scope" ||
		!reflect.DeepEqual(got.Extensions.Scopes, []string{"meters:write"}) {
		t.Errorf("create with meters:read = %+v", got)
	}
	var read struct{ Meter struct{ ID uuid.UUID } }
	s.Query(t, readOnly, `query($id: UUID!) { meter(id: $id) { id } }`, vars{"id": m.ID}, &read)
	if read.Meter.ID != m.ID {
		t.Errorf("read = %+v", read)
	}
	for _, doc := range []string{`{ meters { items { id } } }`,
		`query($id: UUID!) { meterQuantities(id: $id, startTimestamp: "2026-01-01T00:00:00Z", endTimestamp: "2026-01-02T00:00:00Z", interval: day) { total } }`,
		`query($id: UUID!) { meterCosts(ids: [$id], startTimestamp: "2026-01-01T00:00:00Z", endTimestamp: "2026-01-02T00:00:00Z", interval: day) { total } }`} {
		got := s.QueryError(t, customersOnly, doc, vars{"id": m.ID})
		if (got.Extensions.Code != "FORBIDDEN" || got.Extensions.Reason != "insufficient_scope") || !reflect.DeepEqual(got.Extensions.Scopes, []string{"meters:read", "meters:write"}) {
			t.Errorf("%s with customers:read = %+v", doc, got)
		}
	}
}

func TestMeterQuantitiesQuery(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	m := createMeter(t, s, org.Token, apiCallsInput(vars{"aggregation": vars{"func": "sum", "property": "tokens"}}))
	alice, bob := s.NewCustomer(t, org.ID, "alice"), s.NewCustomer(t, org.ID, "bob")
	day := func(d int) time.Time { return time.Date(2026, 2, d, 12, 0, 0, 0, time.UTC) }
	for _, e := range []struct {
		customer *uuid.UUID
		external *string
		at       time.Time
		tokens   int
	}{
		{&alice.ID, nil, day(2), 5},
		{nil, ptr("alice"), day(2), 7},
		{nil, ptr("alice"), day(4), 11},
		{&bob.ID, nil, day(3), 100},
		{nil, ptr("ghost"), day(3), 1000},
	} {
		s.Exec(t, `INSERT INTO events (organization_id, name, customer_id, external_customer_id, "timestamp", metadata)
			VALUES ($1, 'api_call', $2, $3, $4, jsonb_build_object('tokens', $5::int))`, org.ID, e.customer, e.external, e.at, e.tokens)
	}
	doc := `query($id: UUID!, $from: DateTime!, $to: DateTime!, $c: UUID, $x: String) {
		meterQuantities(id: $id, startTimestamp: $from, endTimestamp: $to, interval: day, customerId: $c, externalCustomerId: $x) {
			quantities { timestamp quantity } total } }`
	from, to := "2026-02-02T00:00:00Z", "2026-02-05T00:00:00Z"
	for _, c := range []struct {
		name    string
		vars    vars
		buckets []float64
		total   float64
	}{
		{"everyone", vars{}, []float64{12, 1100, 11}, 1123},
		{"by customer id", vars{"c": alice.ID}, []float64{12, 0, 11}, 23},
		{"by external id", vars{"x": "alice"}, []float64{12, 0, 11}, 23},
		{"by both, agreeing", vars{"c": alice.ID, "x": "alice"}, []float64{12, 0, 11}, 23},
		{"by both, disagreeing", vars{"c": alice.ID, "x": "bob"}, []float64{0, 0, 0}, 0},
		{"external id of no customer", vars{"x": "ghost"}, []float64{0, 1000, 0}, 1000},
		{"unknown customer", vars{"c": uuid.New()}, []float64{0, 0, 0}, 0},
	} {
		v := vars{"id": m.ID, "from": from, "to": to}
		for k, x := range c.vars {
			v[k] = x
		}
		var out struct {
			MeterQuantities struct {
				Quantities []struct {
					Timestamp string
					Quantity  float64
				}
				Total float64
			}
		}
		s.Query(t, org.Token, doc, v, &out)
		got := []float64{}
		for i, q := range out.MeterQuantities.Quantities {
			got = append(got, q.Quantity)
			if want := time.Date(2026, 2, 2+i, 0, 0, 0, 0, time.UTC).Format(time.RFC3339); q.Timestamp != want {
				t.Errorf("%s: bucket %d at %s, want %s", c.name, i, q.Timestamp, want)
			}
		}
		if !reflect.DeepEqual(got, c.buckets) || out.MeterQuantities.Total != c.total {
			t.Errorf("%s: buckets %v total %v, want %v %v", c.name, got, out.MeterQuantities.Total, c.buckets, c.total)
		}
	}

	for _, c := range []struct {
		name, from, to, interval string
		typ                      string
	}{
		{"reversed window", to, from, "day", "value_error"},
		{"too many hours", "2026-02-01T00:00:00Z", "2026-02-09T00:00:00Z", "hour", "value_error"},
	} {
		got := s.QueryError(t, org.Token, `query($id: UUID!, $from: DateTime!, $to: DateTime!, $i: MeterQuantityInterval!) {
			meterQuantities(id: $id, startTimestamp: $from, endTimestamp: $to, interval: $i) { total } }`,
			vars{"id": m.ID, "from": c.from, "to": c.to, "i": c.interval})
		if (got.Extensions.Code != "BAD_USER_INPUT" || got.Extensions.Reason != "PolarRequestValidationError") || len(got.Extensions.Fields) != 1 ||
			!reflect.DeepEqual(got.Extensions.Fields[0].Loc, []any{"endTimestamp"}) {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
	stranger := s.NewOrg(t, resolverstest.AllScopes)
	wantError(t, s.QueryError(t, stranger.Token, doc, vars{"id": m.ID, "from": from, "to": to}), "NOT_FOUND", "ResourceNotFound")
}
