package resolvers_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/graph"
	"till/resolvers/resolverstest"
	"till/storage"
)

// TestPlainWritersMatchTheExecutor checks the writers that bypass gqlgen's field-by-field
// execution (graph/*__plain and the records PostgreSQL writes, storage.Window.Render)
// against the executor: a page selecting plain fields of a type is written by one of them,
// and the same page with one resolver field added at the end goes through the executor's
// field switch; with that field cut out, the two answers must be the same bytes. For a
// relation (Customer.orders), the first query also reads only the columns of those fields
// (storage.Window.Columns) or has PostgreSQL write the items, and the second reads every
// column. The data has NULLs and values in the nullable columns, date-times with and
// without microseconds, metadata with keys out of order, and text that needs escaping.
func TestPlainWritersMatchTheExecutor(t *testing.T) {
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	seedDashboard(t, s.DB, org.ID)
	s.Exec(t, `UPDATE orders SET metadata = '{"zeta": "a\"b\\c\n", "alpha": 1, "mid": true, "f": 1.5}',
		billing_name = 'Ann <&> "Quote"', invoice_number = 'INV-' || left(id::text, 8)
		WHERE id IN (SELECT id FROM orders ORDER BY created_at DESC LIMIT 3)`)
	s.Exec(t, `UPDATE orders SET billing_name = 'back' || chr(8) || 'feed' || chr(12) || 'unit' || chr(31) || 'tab' || chr(9) || '\b\"'
		WHERE id = (SELECT id FROM orders ORDER BY created_at DESC OFFSET 4 LIMIT 1)`)
	s.Exec(t, `UPDATE orders SET next_payment_attempt_at = CASE WHEN billing_name IS NULL
		THEN '0001-06-01 00:00:00.25+00 BC'::timestamptz ELSE '0002-12-31 23:30:00+00 BC'::timestamptz END
		WHERE id IN (SELECT id FROM orders ORDER BY created_at DESC OFFSET 1 LIMIT 4)`)
	s.Exec(t, `UPDATE orders SET created_at = date_trunc('second', created_at), modified_at = now()
		WHERE id IN (SELECT id FROM orders ORDER BY created_at DESC OFFSET 1 LIMIT 4)`)
	// The customer of the newest orders (those changed above) comes first on a customers page.
	s.Exec(t, `UPDATE customers SET created_at = now() + interval '1 day'
		WHERE id = (SELECT customer_id FROM orders ORDER BY created_at DESC LIMIT 1)`)
	s.Exec(t, `INSERT INTO benefit_grants (organization_id, benefit_id, customer_id, granted_at, revoked_at)
		SELECT b.organization_id, b.id, c.id, CASE WHEN c.n % 2 = 0 THEN now() END, CASE WHEN c.n = 1 THEN now() END
		FROM benefits b CROSS JOIN (SELECT id, row_number() OVER (ORDER BY created_at DESC, id DESC) AS n FROM customers) c
		WHERE c.n <= 4`)
	s.Exec(t, `UPDATE customers SET name = E'Tab\there \u00e9\u2028', metadata = '{"b": "2", "a": 1}',
		external_id = 'ext-' || left(id::text, 8) WHERE id IN (SELECT id FROM customers ORDER BY created_at DESC LIMIT 2)`)

	tests := []struct {
		name, query, typ, extra string
		fields                  string // the plain fields to select; all of them when empty
		getters                 string // plain fields read through a method, not in PlainFields
		rendered                bool   // select the fields PostgreSQL can write (PlainObject.Kinds)
	}{
		{name: "orders", query: `{ orders(limit: 20) { items { %s } } }`, typ: "Order", extra: "paid"},
		{name: "orders, written by PostgreSQL", query: `{ orders(limit: 20) { items { __typename %s } } }`, typ: "Order",
			extra: "paid", rendered: true},
		{name: "customers", query: `{ customers(limit: 20) { items { %s } } }`, typ: "Customer", extra: "taxId"},
		{name: "customers, written by PostgreSQL", query: `{ customers(limit: 20) { items { __typename %s } } }`, typ: "Customer",
			extra: "taxId", rendered: true},
		{name: "products", query: `{ products(limit: 20) { items { %s } } }`, typ: "Product", extra: "medias { id }", getters: "isRecurring"},
		{name: "benefits", query: `{ benefits(limit: 20) { items { %s } } }`, typ: "Benefit", extra: "organization { id }",
			getters: "isDeleted visibilityConfigurable"},
		{name: "Customer.orders", typ: "Order", extra: "paid",
			query: `{ customers(limit: 5) { items { id orders(limit: 4, sorting: ["-created_at"]) { items { %s } pagination { totalCount } } } } }`},
		{name: "Customer.orders, written by PostgreSQL", typ: "Order", extra: "paid", rendered: true,
			query: `{ customers(limit: 8) { items { id orders(limit: 6) { items { __typename %s } pagination { totalCount } } } } }`},
		{name: "Customer.benefitGrants, getters", typ: "BenefitGrant", extra: "benefit { id }", fields: "id", getters: "isGranted isRevoked",
			query: `{ customers(limit: 3) { items { id benefitGrants(limit: 10) { items { %s } } } } }`},
		{name: "Customer.orders, two columns", typ: "Order", extra: "paid", fields: "status netAmount",
			query: `{ customers(limit: 5) { items { id orders(limit: 4) { items { %s } } } } }`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plain := slices.Sorted(mapKeys(graph.PlainFields[tc.typ].Fields))
			key := strings.Fields(tc.extra)[0]
			if len(plain) < 3 || slices.Contains(plain, key) {
				t.Fatalf("%s: plain fields %v; %q must not be one", tc.typ, plain, tc.extra)
			}
			sel := strings.Join(plain, " ")
			if tc.fields != "" {
				sel = tc.fields
			}
			if tc.rendered {
				sel = strings.Join(slices.Sorted(mapKeys(graph.PlainFields[tc.typ].Kinds)), " ")
			}
			sel += " " + tc.getters
			fast := s.Do(t, org.Token, fmt.Sprintf(tc.query, sel), nil)
			slow := s.Do(t, org.Token, fmt.Sprintf(tc.query, sel+" "+tc.extra), nil)
			if len(fast.Errors) > 0 || len(slow.Errors) > 0 {
				t.Fatalf("errors: %s / %s", fast.Body, slow.Body)
			}
			cut := regexp.MustCompile(`,"` + key + `":(null|true|false|-?[0-9][0-9.eE+-]*|"(?:[^"\\]|\\.)*"|\[[^\]]*\]|\{"id":"[^"]*"\})}`)
			fastData, stripped := dataWithout(t, fast, slow, func(b string) string { return cut.ReplaceAllString(b, "}") })
			if stripped != fastData {
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

// TestProjectedWindowsReadOnlyTheirColumns shows that a relation whose items select only
// plain fields reads only their columns (and the keys storage keeps), and that the same
// relation selected elsewhere in the document with a field that needs the whole record
// (a relation) gets whole records of its own.
func TestProjectedWindowsReadOnlyTheirColumns(t *testing.T) {
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	seedDashboard(t, s.DB, org.ID)

	var customer uuid.UUID
	if err := s.DB.Get(&customer, `SELECT id FROM customers WHERE organization_id = $1 LIMIT 1`, org.ID); err != nil {
		t.Fatal(err)
	}
	pages, err := storage.OrderWindowsByCustomers(context.Background(), s.DB, []uuid.UUID{org.ID}, []uuid.UUID{customer},
		storage.OrderListFilter{}, nil, storage.Window{Page: 1, Limit: 3, Columns: []string{"status"}})
	if err != nil || len(pages) != 1 || len(pages[0].Items) != 3 {
		t.Fatalf("windows: %v %+v", err, pages)
	}
	for _, o := range pages[0].Items {
		if o.Status != "paid" || o.CustomerID != customer || o.OrganizationID != org.ID || o.ID == uuid.Nil {
			t.Errorf("a projected order lacks a column it needs: %+v", o)
		}
		if o.NetAmount != 0 || o.Currency != "" || !o.CreatedAt.IsZero() || o.JSON != nil {
			t.Errorf("a projected order carries columns nobody asked for: %+v", o)
		}
	}
	rendered, err := storage.OrderWindowsByCustomers(context.Background(), s.DB, []uuid.UUID{org.ID}, []uuid.UUID{customer},
		storage.OrderListFilter{}, nil, storage.Window{Page: 1, Limit: 1, Columns: []string{"status", "net_amount"},
			Render: []storage.RenderField{{Key: "s", Column: "status", Kind: "text"}, {Key: "n", Column: "net_amount", Kind: "number"},
				{Key: "__typename", Literal: "Order"}}})
	if err != nil || len(rendered) != 1 || len(rendered[0].Items) != 1 {
		t.Fatalf("rendered windows: %v %+v", err, rendered)
	}
	if o := rendered[0].Items[0]; string(o.JSON) != `{"s":"paid","n":1500,"__typename":"Order"}` || o.Status != "" {
		t.Errorf("a rendered order is %s with status %q; want its JSON and no columns", o.JSON, o.Status)
	}

	var out struct {
		Customers struct {
			Items []struct {
				Plain, Full struct {
					Items []struct {
						Status    string
						NetAmount int
						Product   *struct{ Name string }
					}
				}
			}
		}
	}
	s.Query(t, org.Token, `{ customers(limit: 3) { items {
		plain: orders(limit: 3) { items { status netAmount } }
		full: orders(limit: 3) { items { status netAmount product { name } } } } } }`, nil, &out)
	for _, c := range out.Customers.Items {
		if len(c.Plain.Items) != 3 || len(c.Full.Items) != 3 {
			t.Fatalf("windows: %+v", c)
		}
		for i, o := range c.Full.Items {
			if o.Product == nil || o.Product.Name == "" || o.NetAmount != 1500 || c.Plain.Items[i].NetAmount != 1500 ||
				c.Plain.Items[i].Status != o.Status {
				t.Errorf("the two selections of one relation disagree: %+v / %+v", c.Plain.Items[i], o)
			}
		}
	}
}

// TestOneFragmentAtTwoPlacesKeepsEachSelection spreads a fragment with a relation at two
// places where it merges with different siblings: each place reads (or has PostgreSQL
// write) what its own merged selection shows, whichever place the executor reaches first.
func TestOneFragmentAtTwoPlacesKeepsEachSelection(t *testing.T) {
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	seedDashboard(t, s.DB, org.ID)
	var customer uuid.UUID
	if err := s.DB.Get(&customer, `SELECT id FROM customers WHERE organization_id = $1 LIMIT 1`, org.ID); err != nil {
		t.Fatal(err)
	}
	queries := []string{
		// whole columns at one place (metadata has no SQL kind), PostgreSQL's JSON at the other
		`query($id: UUID!) { b: customer(id: $id) { ...F } a: customer(id: $id) { ...F orders(first: 5) { items { status totalAmount createdAt } } } }
		fragment F on Customer { orders(first: 5) { items { id metadata } } }`,
		`query($id: UUID!) { a: customer(id: $id) { ...F orders(first: 5) { items { status totalAmount createdAt } } } b: customer(id: $id) { ...F } }
		fragment F on Customer { orders(first: 5) { items { id metadata } } }`,
		// PostgreSQL's JSON at both places, with different keys
		`query($id: UUID!) { a: customer(id: $id) { ...G orders(first: 5) { items { status totalAmount createdAt } } } b: customer(id: $id) { ...G } }
		fragment G on Customer { orders(first: 5) { items { id } } }`,
	}
	for i, q := range queries {
		for run := range 5 {
			var out struct {
				A, B struct {
					Orders struct{ Items []map[string]any }
				}
			}
			s.Query(t, org.Token, q, map[string]any{"id": customer}, &out)
			if len(out.A.Orders.Items) != 5 || len(out.B.Orders.Items) != 5 {
				t.Fatalf("query %d run %d: %+v", i, run, out)
			}
			for j, o := range out.A.Orders.Items {
				if o["status"] != "paid" || o["totalAmount"] != float64(1500) || o["createdAt"] == "0001-01-01T00:00:00Z" ||
					o["id"] != out.B.Orders.Items[j]["id"] {
					t.Errorf("query %d run %d: a's order %d is %v", i, run, j, o)
				}
			}
			for j, o := range out.B.Orders.Items {
				if _, extra := o["status"]; extra {
					t.Errorf("query %d run %d: b's order %d shows a field b did not select: %v", i, run, j, o)
				}
			}
		}
	}
}
