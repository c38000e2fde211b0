package resolvers_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
	"till/storage/storagetest"
)

// customerEventsDoc reads each customer's usage events with the window arguments of the
// root list.
const customerEventsDoc = `query($first: Int, $after: String, $last: Int, $before: String, $sorting: [String!], $filter: UsageEventFilter) {
	customers { items { externalId
		usageEvents(first: $first, after: $after, last: $last, before: $before, sorting: $sorting, filter: $filter) {
			items { id customer { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } } }`

// customerEvents runs customerEventsDoc and returns each customer's window by external id.
func customerEvents(t *testing.T, s *resolverstest.Server, token string, args vars) map[string]usagePage {
	t.Helper()
	var out struct {
		Customers struct {
			Items []struct {
				ExternalID  string
				UsageEvents usagePage
			}
		}
	}
	s.Query(t, token, customerEventsDoc, args, &out)
	windows := map[string]usagePage{}
	for _, c := range out.Customers.Items {
		windows[c.ExternalID] = c.UsageEvents
	}
	return windows
}

func TestCustomerUsageEvents(t *testing.T) {
	w := newUsageWorld(t)
	s := w.s
	admin := s.NewToken(t, w.org.ID, resolverstest.AllScopes)
	for _, tc := range []struct {
		name     string
		args     vars
		ada, bob []uuid.UUID
	}{
		{"sent with the customer's id or its external id, newest first, never another organization's", nil,
			[]uuid.UUID{w.child, w.byID}, []uuid.UUID{w.byExt, w.old}},
		{"filtered as the root list", vars{"filter": vars{"name": []string{"api.call"}}},
			[]uuid.UUID{w.child, w.byID}, []uuid.UUID{w.byExt}},
		{"oldest first", vars{"sorting": []string{"timestamp"}},
			[]uuid.UUID{w.byID, w.child}, []uuid.UUID{w.old, w.byExt}},
		{"the first of each", vars{"first": 1}, []uuid.UUID{w.child}, []uuid.UUID{w.byExt}},
		{"the last of each", vars{"last": 1}, []uuid.UUID{w.byID}, []uuid.UUID{w.old}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := customerEvents(t, s, admin, tc.args)
			for ext, want := range map[string][]uuid.UUID{"ada": tc.ada, "bob": tc.bob} {
				if diff := cmp.Diff(want, usageIDs(got[ext].Items)); diff != "" {
					t.Errorf("%s's events (-want +got):\n%s", ext, diff)
				}
				for _, e := range got[ext].Items {
					if e.Customer == nil || e.Customer.ID != map[string]uuid.UUID{"ada": w.ada.ID, "bob": w.bob.ID}[ext] {
						t.Errorf("%s's event %s has customer %v", ext, e.ID, e.Customer)
					}
				}
			}
		})
	}

	t.Run("a customer's events walk by cursor both ways", func(t *testing.T) {
		const doc = `query($id: UUID!, $first: Int, $after: String, $last: Int, $before: String) { customer(id: $id) {
			usageEvents(first: $first, after: $after, last: $last, before: $before) {
				items { id } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }`
		read := func(v vars) usagePage {
			var out struct {
				Customer struct{ UsageEvents usagePage }
			}
			v["id"] = w.bob.ID
			s.Query(t, admin, doc, v, &out)
			return out.Customer.UsageEvents
		}
		first := read(vars{"first": 1})
		second := read(vars{"first": 1, "after": *first.PageInfo.EndCursor})
		if !first.PageInfo.HasNextPage || second.PageInfo.HasNextPage || !second.PageInfo.HasPreviousPage {
			t.Errorf("forward windows: %+v then %+v", first.PageInfo, second.PageInfo)
		}
		back := read(vars{"last": 1, "before": *second.PageInfo.StartCursor})
		got := slices.Concat(usageIDs(first.Items), usageIDs(second.Items), usageIDs(back.Items))
		if want := []uuid.UUID{w.byExt, w.old, w.byExt}; !slices.Equal(got, want) {
			t.Errorf("walked %v, want %v", got, want)
		}
	})

	t.Run("a deleted customer keeps the events sent with its id, not those sent with its external id", func(t *testing.T) {
		gone := s.NewCustomer(t, w.org.ID, "gone")
		ids := insertUsageEvents(t, s, w.org.ID,
			usageRow{ts: w.now.Add(-2 * time.Hour), name: "n", customer: &gone.ID},
			usageRow{ts: w.now.Add(-time.Hour), name: "n", external: "gone"})
		s.Exec(t, `UPDATE customers SET deleted_at = now() WHERE id = $1`, gone.ID)
		var out struct {
			UsageEvent struct {
				Customer struct{ UsageEvents usagePage }
			}
		}
		s.Query(t, admin, `query($id: UUID!) { usageEvent(id: $id) { customer { usageEvents { items { id } } } } }`,
			vars{"id": ids[0]}, &out)
		if got := usageIDs(out.UsageEvent.Customer.UsageEvents.Items); !slices.Equal(got, ids[:1]) {
			t.Errorf("deleted customer's events %v, want %v", got, ids[:1])
		}
	})

	t.Run("a token without an events scope is refused the relation and keeps the customer", func(t *testing.T) {
		token := s.NewToken(t, w.org.ID, "customers:read")
		requireRefusedRelation(t, s.Do(t, token, `{ customers { items { id usageEvents { items { id } } } } }`, nil),
			"usageEvents", "customers", "items", 0, "id")
	})

	t.Run("a token without a customers scope is refused the customer's payment methods", func(t *testing.T) {
		requireRefusedRelation(t, s.Do(t, w.org.Token, `query($id: UUID!) { usageEvent(id: $id) {
			customer { id paymentMethods { id } } } }`, vars{"id": w.byID}),
			"paymentMethods", "usageEvent", "customer", "id")
	})

	t.Run("a portal session is refused its own customer's usage events", func(t *testing.T) {
		session := s.NewCustomerSession(t, w.org.ID, w.ada.ID)
		requireRefusedRelation(t, s.Do(t, session, `{ me { customer { id usageEvents { items { id } } } } }`, nil),
			"usageEvents", "me", "customer", "id")
	})
}

// requireRefusedRelation checks that a response refused one relation field (named last in
// its error path) as a permission error, and that the sibling at keep still has its value.
func requireRefusedRelation(t *testing.T, res *resolverstest.Response, field string, keep ...any) {
	t.Helper()
	if len(res.Errors) == 0 {
		t.Fatalf("the relation was not refused: %s", res.Body)
	}
	for _, e := range res.Errors {
		refusal := e.Extensions.Code == "NotPermitted" || e.Extensions.Code == "insufficient_scope" || e.Extensions.Code == "FORBIDDEN"
		if !refusal || len(e.Path) == 0 || e.Path[len(e.Path)-1] != field {
			t.Errorf("error %q (%s) at %v, want a refusal of %s", e.Message, e.Extensions.Code, e.Path, field)
		}
	}
	var data any
	if err := json.Unmarshal(res.Data, &data); err != nil {
		t.Fatal(err)
	}
	for _, k := range keep {
		switch k := k.(type) {
		case string:
			m, _ := data.(map[string]any)
			data = m[k]
		case int:
			l, _ := data.([]any)
			if k >= len(l) {
				t.Fatalf("no item %d in %s", k, res.Data)
			}
			data = l[k]
		}
	}
	if data == nil {
		t.Errorf("the refusal took %v with it: %s", keep, res.Data)
	}
}

// TestCustomerUsageEventsCostConstantStatements proves the relation is read per level: a
// page of customers with a window of their events, and those events' customers, costs the
// same statements for 10 customers as for 100.
func TestCustomerUsageEventsCostConstantStatements(t *testing.T) {
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	s.Exec(t, `SELECT ensure_event_partitions(now() - interval '3 months', 6)`)
	org := s.NewOrg(t, resolverstest.AllScopes)
	s.Exec(t, `INSERT INTO customers (organization_id, email, external_id)
		SELECT $1, 'c' || i || '@example.com', 'ext-' || i FROM generate_series(1, 110) i`, org.ID)
	s.Exec(t, `INSERT INTO events (organization_id, "timestamp", name, customer_id, external_customer_id)
		SELECT c.organization_id, now() - k * interval '1 minute', 'n',
			CASE WHEN k < 3 THEN c.id END, CASE WHEN k = 3 THEN c.external_id END
		FROM customers c CROSS JOIN generate_series(0, 3) k WHERE c.organization_id = $1`, org.ID)
	const doc = `query($n: Int) { customers(limit: $n) { items { id
		usageEvents(first: 3, filter: {name: ["n"]}) { items { id customer { id } } pageInfo { hasNextPage } } } } }`
	requireConstantStatements(t, counter, func(n int) *resolverstest.Response {
		return s.Do(t, org.Token, doc, vars{"n": n})
	}, func(t *testing.T, data []byte, n int) {
		var out struct {
			Customers struct {
				Items []struct {
					ID          uuid.UUID
					UsageEvents usagePage
				}
			}
		}
		mustUnmarshal(t, data, &out)
		if len(out.Customers.Items) != n {
			t.Fatalf("%d customers, want %d", len(out.Customers.Items), n)
		}
		for _, c := range out.Customers.Items {
			if len(c.UsageEvents.Items) != 3 || !c.UsageEvents.PageInfo.HasNextPage {
				t.Fatalf("customer %s: %d events, next page %v; want 3 of 4", c.ID, len(c.UsageEvents.Items), c.UsageEvents.PageInfo.HasNextPage)
			}
			for _, e := range c.UsageEvents.Items {
				if e.Customer == nil || e.Customer.ID != c.ID {
					t.Fatalf("customer %s lists event %s of %v", c.ID, e.ID, e.Customer)
				}
			}
		}
	})
}
