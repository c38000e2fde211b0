package storage

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"testing"
)

// TestCursorStringIsTheMarshalledForm keeps cursors handed out before and after the
// reflection-free encoding the same bytes, so a client's saved cursor still reads.
func TestCursorStringIsTheMarshalledForm(t *testing.T) {
	keys := []string{
		`["2026-11-26T13:28:12.123456+00:00", "0b6c2d9e-7d0f-4b7e-9a39-3c1c7c0f2e11"]`,
		`[null, 12, "a<b>&c", "é\u2028"]`,
		`[{"nested": [1, 2]}, true]`,
	}
	for _, k := range keys {
		c := Cursor{order: 4242, key: k}
		want, err := json.Marshal(struct {
			O uint32          `json:"o"`
			K json.RawMessage `json:"k"`
		}{c.order, json.RawMessage(k)})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.String(); got != base64.RawURLEncoding.EncodeToString(want) {
			t.Errorf("key %s: got %s, want %s", k, got, base64.RawURLEncoding.EncodeToString(want))
		}
		back, err := ParseCursor(c.String())
		if err != nil || back.order != c.order {
			t.Errorf("key %s: does not read back: %v", k, err)
		}
	}
}

func TestProjected(t *testing.T) {
	const orders = "o.id, o.created_at, o.organization_id, o.customer_id, o.status, o.metadata"
	tests := []struct {
		name, columns string
		want, keep    []string
		out           string
	}{
		{name: "nil reads every column", columns: orders, want: nil, out: orders},
		{name: "the wanted and the always-read columns, in list order", columns: orders,
			want: []string{"status"}, out: "o.id, o.organization_id, o.customer_id, o.status"},
		{name: "keep adds the parent's column", columns: "k.id, k.benefit_id, k.display_key",
			want: []string{"display_key"}, keep: []string{"benefit_id"}, out: "k.id, k.benefit_id, k.display_key"},
		{name: "an expression is kept by its alias, commas inside it do not split",
			columns: "c.id, coalesce(c.a, c.b) AS total, to_char(c.x, 'a,b') AS label",
			want:    []string{"label"}, out: "c.id, to_char(c.x, 'a,b') AS label"},
		{name: "a wanted column the list lacks reads everything", columns: orders,
			want: []string{"status", "secret"}, out: orders},
		{name: "a star cannot be narrowed", columns: "cm.*", want: []string{"balance"}, out: "cm.*"},
		{name: "an unnamed expression cannot be narrowed", columns: "id, now() - created_at",
			want: []string{"id"}, out: "id, now() - created_at"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := projected(tc.columns, tc.want, tc.keep...); got != tc.out {
				t.Errorf("projected = %q, want %q", got, tc.out)
			}
		})
	}
}

func TestColumnOf(t *testing.T) {
	for field, want := range map[string]string{"ID": "id", "CreatedAt": "created_at", "NetAmount": "net_amount"} {
		if got, ok := ColumnOf(reflect.TypeFor[*Order](), field); !ok || got != want {
			t.Errorf("ColumnOf(Order, %s) = %q, %v; want %q", field, got, ok, want)
		}
	}
	if _, ok := ColumnOf(reflect.TypeFor[*Order](), "NoSuchField"); ok {
		t.Error("a field that does not exist has a column")
	}
}
