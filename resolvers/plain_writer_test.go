package resolvers_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"till/graph"
	"till/resolvers/resolverstest"
)

// TestPlainWritersMatchTheExecutor checks the executor's plain writers (graph/*__plain,
// written by internal/gqlexec/rewrite) against gqlgen's own field-by-field execution: a page
// selecting every plain field of a type is written by the plain writer, and the same page
// with one resolver field added at the end is executed field by field; with that field cut
// out, the two answers must be the same bytes. The data has NULLs and values in the nullable
// columns, metadata with keys out of order, and text that needs escaping.
func TestPlainWritersMatchTheExecutor(t *testing.T) {
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	seedDashboard(t, s.DB, org.ID)
	s.Exec(t, `UPDATE orders SET metadata = '{"zeta": "a\"b\\c\n", "alpha": 1, "mid": true, "f": 1.5}',
		billing_name = 'Ann <&> "Quote"', invoice_number = 'INV-' || left(id::text, 8)
		WHERE id IN (SELECT id FROM orders ORDER BY created_at DESC LIMIT 3)`)
	s.Exec(t, `UPDATE customers SET name = E'Tab\there \u00e9\u2028', metadata = '{"b": "2", "a": 1}',
		external_id = 'ext-' || left(id::text, 8) WHERE id IN (SELECT id FROM customers ORDER BY created_at DESC LIMIT 2)`)

	tests := []struct {
		root, typ, extra string
	}{
		{root: "orders", typ: "Order", extra: "paid"},
		{root: "customers", typ: "Customer", extra: "taxId"},
		{root: "products", typ: "Product", extra: "isRecurring"},
		{root: "benefits", typ: "Benefit", extra: "isDeleted"},
	}
	for _, tc := range tests {
		t.Run(tc.typ, func(t *testing.T) {
			plain := slices.Sorted(mapKeys(graph.PlainFields[tc.typ]))
			if len(plain) < 3 || slices.Contains(plain, tc.extra) {
				t.Fatalf("%s: plain fields %v; %q must not be one", tc.typ, plain, tc.extra)
			}
			sel := strings.Join(plain, " ")
			fast := s.Do(t, org.Token, fmt.Sprintf(`{ %s(limit: 20) { items { %s } } }`, tc.root, sel), nil)
			slow := s.Do(t, org.Token, fmt.Sprintf(`{ %s(limit: 20) { items { %s %s } } }`, tc.root, sel, tc.extra), nil)
			if len(fast.Errors) > 0 || len(slow.Errors) > 0 {
				t.Fatalf("errors: %s / %s", fast.Body, slow.Body)
			}
			cut := regexp.MustCompile(`,"` + tc.extra + `":(null|true|false|-?[0-9][0-9.eE+-]*|"(?:[^"\\]|\\.)*"|\[[^\]]*\])}`)
			stripped := cut.ReplaceAllString(string(slow.Body), "}")
			if stripped == string(slow.Body) {
				t.Fatalf("%q is not in the executed answer: %s", tc.extra, slow.Body)
			}
			if stripped != string(fast.Body) {
				t.Errorf("the plain writer and the executor differ:\n plain    %s\n executor %s", fast.Body, stripped)
			}
		})
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
