package storage

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
)

func TestRenumberShiftsParametersOutsideQuotes(t *testing.T) {
	tests := []struct {
		sql  string
		base int
		want string
	}{
		{"o.a = $1 AND o.b = ANY($2)", 3, "o.a = $4 AND o.b = ANY($5)"},
		{"x = $1", 0, "x = $1"},
		{`'$1' || "$2" || $10`, 2, `'$1' || "$2" || $12`},
		{`'it''s $1' = $1`, 1, `'it''s $1' = $2`},
		{`to_char(t, 'YYYY"T"') || $3`, 7, `to_char(t, 'YYYY"T"') || $10`},
	}
	for _, tc := range tests {
		if got := renumber(tc.sql, tc.base); got != tc.want {
			t.Errorf("renumber(%q, %d) = %q, want %q", tc.sql, tc.base, got, tc.want)
		}
	}
}

// TestNestedPageRefusesWhatItCannotWrite: a nested relation is written only as an offset
// window with keys that are names; anything else leaves the page to be read as columns.
func TestNestedPageRefusesWhatItCannotWrite(t *testing.T) {
	items := []RenderField{{Key: "id", Column: "id", Kind: "uuid"}}
	page := func(key string) []RenderField {
		return []RenderField{{Key: key, Kind: "items"}, {Key: "pagination", Kind: "object",
			Fields: []RenderField{{Key: "totalCount", Kind: "totalCount"}}}}
	}
	after := &Cursor{}
	tests := []struct {
		name string
		n    *Nested
		ok   bool
	}{
		{"an offset window", NestOrdersOfCustomers(nil, OrderListFilter{}, nil, Window{Page: 2, Limit: 5, Render: items}, page("items")), true},
		{"a cursor window", NestOrdersOfCustomers(nil, OrderListFilter{}, nil, Window{Limit: 5, After: after, Render: items}, page("items")), false},
		{"a key that is not a name", NestOrdersOfCustomers(nil, OrderListFilter{}, nil, Window{Page: 1, Limit: 5, Render: items}, page("it ems")), false},
		{"items nobody can write", NestOrdersOfCustomers(nil, OrderListFilter{}, nil,
			Window{Page: 1, Limit: 5, Render: []RenderField{{Key: "x", Column: "no_such_column", Kind: "text"}}}, page("items")), false},
	}
	for _, tc := range tests {
		l := customerList(nil, CustomerListFilter{}, nil)
		w := Window{Page: 1, Limit: 10, Render: []RenderField{{Key: "id", Column: "id", Kind: "uuid"}, {Key: "orders", Kind: "nested", Nested: tc.n}}}
		_, _, ok := nestedPage(l, w, "SELECT 1", nil)
		if ok != tc.ok {
			t.Errorf("%s: written %v, want %v", tc.name, ok, tc.ok)
		}
	}
}

// TestNestedTextsAreBuiltOncePerShape: a statement of a shape already built is the same
// text with the arguments of this call, in the order the text numbers them; shapes that
// differ in anything the text is built from get texts of their own.
func TestNestedTextsAreBuiltOncePerShape(t *testing.T) {
	items := []RenderField{{Key: "id", Column: "id", Kind: "uuid"}}
	page := []RenderField{{Key: "items", Kind: "items"}, {Key: "pagination", Kind: "object",
		Fields: []RenderField{{Key: "totalCount", Kind: "totalCount"}}}}
	org, other := uuid.New(), uuid.New()
	shape := func(orgs []uuid.UUID, customer uuid.UUID, limit int) []RenderField {
		w := Window{Page: 1, Limit: limit, Render: items}
		return []RenderField{
			{Key: "id", Column: "id", Kind: "uuid"},
			{Key: "orders", Kind: "nested", Nested: NestOrdersOfCustomers(orgs, OrderListFilter{CustomerID: &customer}, nil, w, page)},
			{Key: "inner", Kind: "object", Fields: []RenderField{
				{Key: "keys", Kind: "nested", Nested: NestLicenseKeysOfCustomers(orgs, LicenseKeyListFilter{}, nil, w, page)}}},
		}
	}
	l := customerList([]uuid.UUID{org}, CustomerListFilter{}, nil)
	build := func(orgs []uuid.UUID, customer uuid.UUID, limit int) (string, []any) {
		w := Window{Render: shape(orgs, customer, limit)}
		text, args, ok := nestedSelect(l, w, "SELECT * FROM customers", []any{"root"}, "")
		built, builtArgs, builtOK := buildNestedSelect(l, w, "SELECT * FROM customers", []any{"root"}, "")
		if !ok || !builtOK || text != built || fmt.Sprint(args) != fmt.Sprint(builtArgs) {
			t.Fatalf("remembered %q %v, built %q %v", text, args, built, builtArgs)
		}
		return text, args
	}
	first, args := build([]uuid.UUID{org}, org, 5)
	again, againArgs := build([]uuid.UUID{other}, other, 5) // another caller, same shape
	if first != again || fmt.Sprint(args) == fmt.Sprint(againArgs) {
		t.Errorf("one shape, two callers: texts equal %v, arguments %v and %v", first == again, args, againArgs)
	}
	if want := fmt.Sprint([]any{"root", org, org, org}); fmt.Sprint(args) != want {
		t.Errorf("arguments %v, want %s (the root's, then each list's in field order)", args, want)
	}
	if two, _ := build([]uuid.UUID{org, other}, org, 5); two == first {
		t.Error("two organizations (= ANY) share the text of one (=)")
	}
	if six, _ := build([]uuid.UUID{org}, org, 6); six == first {
		t.Error("another window shares the text")
	}
}
