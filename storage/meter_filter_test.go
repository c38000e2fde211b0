package storage_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"till/storage"
	"till/storage/storagetest"
)

// TestMeterFilterCompilation runs filters over five events whose metadata "bit" is a
// distinct power of two, summing it, so each result names exactly the events that matched.
func TestMeterFilterCompilation(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	org := newOrganization(t, db, "acme")
	cust := newMeterCustomer(t, db, org.ID, "ext")
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	hour := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }
	insertEvents(t, db, org.ID,
		usage{name: "api_call", customerID: &cust.ID, at: hour(0), metadata: `{"bit": 1, "tokens": 10, "model": "gpt-4", "beta": true}`},
		usage{name: "api_call", customerID: &cust.ID, at: hour(1), metadata: `{"bit": 2, "tokens": 25.5, "model": "claude", "beta": false}`},
		usage{name: "api_call", source: "system", customerID: &cust.ID, at: hour(2), metadata: `{"bit": 4, "tokens": "10", "model": "gpt-4o"}`},
		usage{name: "upload", customerID: &cust.ID, at: hour(3), metadata: `{"bit": 8, "tokens": 100}`},
		usage{name: "upload_large", customerID: &cust.ID, at: hour(4), metadata: `{"bit": 16}`},
	)
	epoch := func(n int) string { return strconv.FormatInt(hour(n).Unix(), 10) }
	clause := func(property, operator, value string) string {
		return fmt.Sprintf(`{"property": %q, "operator": %q, "value": %s}`, property, operator, value)
	}
	group := func(conjunction string, clauses ...string) string {
		s := `{"conjunction": "` + conjunction + `", "clauses": [`
		for i, c := range clauses {
			if i > 0 {
				s += ", "
			}
			s += c
		}
		return s + "]}"
	}
	cases := []struct {
		name   string
		filter string
		want   float64
	}{
		{"name eq", group("and", clause("name", "eq", `"api_call"`)), 1 + 2 + 4},
		{"name ne", group("and", clause("name", "ne", `"api_call"`)), 8 + 16},
		{"name like is contains", group("and", clause("name", "like", `"load"`)), 8 + 16},
		{"name not_like keeps _ a wildcard", group("and", clause("name", "not_like", `"load_"`)), 1 + 2 + 4 + 8},
		{"name with an integer never matches", group("and", clause("name", "ne", `5`)), 0},
		{"metadata.name is the name column", group("and", clause("metadata.name", "eq", `"upload"`)), 8},
		{"source eq", group("and", clause("source", "eq", `"system"`)), 4},
		{"timestamp gte epoch", group("and", clause("timestamp", "gte", epoch(2))), 4 + 8 + 16},
		{"timestamp lt epoch", group("and", clause("timestamp", "lt", epoch(2))), 1 + 2},
		{"timestamp eq epoch", group("and", clause("timestamp", "eq", epoch(3))), 8},
		{"timestamp with a string never matches", group("and", clause("timestamp", "ne", `"x"`)), 0},
		{"number eq int, string as text", group("and", clause("tokens", "eq", `10`)), 1 + 4},
		{"metadata. prefix", group("and", clause("metadata.tokens", "eq", `10`)), 1 + 4},
		{"number gt", group("and", clause("tokens", "gt", `10`)), 2 + 8},
		{"number gte", group("and", clause("tokens", "gte", `10`)), 1 + 2 + 4 + 8},
		{"number lt, string compares as text", group("and", clause("tokens", "lt", `26`)), 1 + 2 + 4},
		{"number lte", group("and", clause("tokens", "lte", `10`)), 1 + 4},
		{"number ne, missing key never matches", group("and", clause("tokens", "ne", `10`)), 2 + 8},
		{"string value never equals a number", group("and", clause("tokens", "eq", `"10"`)), 4},
		{"string like", group("and", clause("model", "like", `"gpt"`)), 1 + 4},
		{"string not_like", group("and", clause("model", "not_like", `"gpt"`)), 2},
		{"string gt", group("and", clause("model", "gt", `"d"`)), 1 + 4},
		{"boolean eq true", group("and", clause("beta", "eq", `true`)), 1},
		{"boolean eq false", group("and", clause("beta", "eq", `false`)), 2},
		{"boolean ne", group("and", clause("beta", "ne", `true`)), 2},
		{"boolean never equals an integer", group("and", clause("beta", "eq", `1`)), 0},
		{"like on a boolean reads t", group("and", clause("beta", "like", `true`)), 1},
		{"and", group("and", clause("name", "eq", `"api_call"`), clause("tokens", "gt", `20`)), 2},
		{"or", group("or", clause("name", "eq", `"upload"`), clause("source", "eq", `"system"`)), 4 + 8},
		{"nested or in and", group("and",
			group("or", clause("source", "eq", `"system"`), clause("beta", "eq", `true`)),
			clause("name", "like", `"api"`)), 1 + 4},
		{"nested and in or", group("or",
			clause("name", "eq", `"upload"`),
			group("and", clause("name", "eq", `"api_call"`), clause("tokens", "gt", `20`))), 2 + 8},
		{"empty and is everything", group("and"), 31},
		{"empty or is everything", group("or"), 31},
		{"a key full of SQL is only a key", group("and", clause(`x'); DROP TABLE events; --`, "eq", `"1"`)), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := storage.ParseMeterFilter([]byte(c.filter)); err != nil {
				t.Fatalf("%s: %v", c.filter, err)
			}
			m := newMeter(t, db, org.ID, c.filter, `{"func": "sum", "property": "bit"}`)
			got, err := storage.MeterQuantity(ctx, db, m, cust, t0, hour(5))
			if err != nil {
				t.Fatalf("%s: %v", c.filter, err)
			}
			if got != c.want {
				t.Errorf("%s matched %v, want %v", c.filter, got, c.want)
			}
		})
	}
}

// TestMeterFilterValidation checks each rule of upstream's Filter schema and that the error
// says where, relative to the filter.
func TestMeterFilterValidation(t *testing.T) {
	cases := []struct {
		filter string
		path   []any
	}{
		{`{"conjunction": "xor", "clauses": []}`, []any{"conjunction"}},
		{`{"conjunction": "and", "clauses": [{"property": "name", "operator": "contains", "value": "a"}]}`, []any{"clauses", 0, "operator"}},
		{`{"conjunction": "and", "clauses": [{"property": "", "operator": "eq", "value": "a"}]}`, []any{"clauses", 0, "property"}},
		{`{"conjunction": "and", "clauses": [{"property": "n", "operator": "eq", "value": 1.5}]}`, []any{"clauses", 0, "value"}},
		{`{"conjunction": "and", "clauses": [{"property": "n", "operator": "eq", "value": 3000000000}]}`, []any{"clauses", 0, "value"}},
		{`{"conjunction": "and", "clauses": [{"property": "n", "operator": "eq", "value": null}]}`, []any{"clauses", 0, "value"}},
		{`{"conjunction": "and", "clauses": [{"property": "n", "operator": "eq"}]}`, []any{"clauses", 0, "value"}},
		{`{"conjunction": "or", "clauses": [{"property": "n", "operator": "eq", "value": 1},
			{"conjunction": "and", "clauses": [{"property": "n", "operator": "between", "value": 1}]}]}`, []any{"clauses", 1, "clauses", 0, "operator"}},
		{nested(storage.MaxMeterFilterDepth + 1), []any{"clauses", 0, "clauses", 0}},
		{wide(storage.MaxMeterFilterClauses + 1), []any{"clauses"}},
		{`{"conjunction": "and", "clauses": [{"property": "n", "operator": "eq", "value": "` + strings.Repeat("é", 1001) + `"}]}`,
			[]any{"clauses", 0, "value"}},
	}
	for _, c := range cases {
		_, err := storage.ParseMeterFilter([]byte(c.filter))
		var fe *storage.MeterFilterError
		if !errors.As(err, &fe) || !reflect.DeepEqual(fe.Path, c.path) {
			t.Errorf("%s: err = %v, want a MeterFilterError at %v", c.filter, err, c.path)
		}
	}
}

// nested is a filter of depth levels: groups each holding the next, the innermost one comparison.
func nested(depth int) string {
	f := `{"property": "name", "operator": "eq", "value": "a"}`
	for range depth {
		f = `{"conjunction": "and", "clauses": [` + f + `]}`
	}
	return f
}

// wide is a filter of n comparisons.
func wide(n int) string {
	f := `{"conjunction": "or", "clauses": [`
	for i := range n {
		if i > 0 {
			f += ", "
		}
		f += `{"property": "name", "operator": "eq", "value": "a"}`
	}
	return f + `]}`
}

// TestMeterFilterBounds checks that filters nest up to MaxMeterFilterDepth levels and hold
// up to MaxMeterFilterClauses clauses per group, and compare strings of up to 1000 characters
// (TestMeterFilterValidation refuses one more of each).
func TestMeterFilterBounds(t *testing.T) {
	for name, f := range map[string]string{
		"a filter " + strconv.Itoa(storage.MaxMeterFilterDepth) + " levels deep": nested(storage.MaxMeterFilterDepth),
		"a group of " + strconv.Itoa(storage.MaxMeterFilterClauses) + " clauses": wide(storage.MaxMeterFilterClauses),
		"a value of 1000 characters": `{"conjunction": "and", "clauses": [{"property": "n", "operator": "eq", "value": "` +
			strings.Repeat("é", 1000) + `"}]}`,
	} {
		t.Run(name+" is accepted", func(t *testing.T) {
			if _, err := storage.ParseMeterFilter([]byte(f)); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestMeterFilterJSON checks that a filter is stored in upstream's shape, with the
// metadata. prefix dropped and integers kept exact.
func TestMeterFilterJSON(t *testing.T) {
	in := `{"conjunction": "or", "clauses": [{"property": "metadata.tokens", "operator": "gte", "value": 2147483647},
		{"conjunction": "and", "clauses": [{"property": "name", "operator": "eq", "value": "a"}, {"property": "beta", "operator": "eq", "value": true}]}]}`
	f, err := storage.ParseMeterFilter([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"conjunction":"or","clauses":[{"property":"tokens","operator":"gte","value":2147483647},` +
		`{"conjunction":"and","clauses":[{"property":"name","operator":"eq","value":"a"},{"property":"beta","operator":"eq","value":true}]}]}`
	if string(out) != want {
		t.Errorf("marshal = %s\nwant %s", out, want)
	}
}

// TestMeterAggregationValidation checks upstream's aggregation shapes.
func TestMeterAggregationValidation(t *testing.T) {
	cases := []struct {
		in, want string
		path     []any
	}{
		{`{"func": "count"}`, `{"func":"count"}`, nil},
		{`{"func": "count", "property": "x"}`, `{"func":"count"}`, nil},
		{`{"func": "sum", "property": "metadata.tokens"}`, `{"func":"sum","property":"tokens"}`, nil},
		{`{"func": "unique", "property": "user"}`, `{"func":"unique","property":"user"}`, nil},
		{`{"func": "median", "property": "x"}`, "", []any{"func"}},
		{`{"func": "avg"}`, "", []any{"property"}},
		{`{"func": "max", "property": "metadata."}`, "", []any{"property"}},
	}
	for _, c := range cases {
		a, err := storage.ParseMeterAggregation([]byte(c.in))
		if c.path != nil {
			var fe *storage.MeterFilterError
			if !errors.As(err, &fe) || !reflect.DeepEqual(fe.Path, c.path) {
				t.Errorf("%s: err = %v, want an error at %v", c.in, err, c.path)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if out, _ := json.Marshal(a); string(out) != c.want {
			t.Errorf("%s stored as %s, want %s", c.in, out, c.want)
		}
	}
}
