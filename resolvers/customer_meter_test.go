package resolvers_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
	"till/storage"
)

// customerMeterView is a CustomerMeter as the tests read it.
type customerMeterView struct {
	ID            uuid.UUID  `json:"id"`
	CreatedAt     time.Time  `json:"createdAt"`
	ModifiedAt    *time.Time `json:"modifiedAt"`
	CustomerID    uuid.UUID  `json:"customerId"`
	MeterID       uuid.UUID  `json:"meterId"`
	ConsumedUnits float64    `json:"consumedUnits"`
	CreditedUnits int64      `json:"creditedUnits"`
	Balance       float64    `json:"balance"`
	Meter         struct {
		ID   uuid.UUID `json:"id"`
		Name string    `json:"name"`
	} `json:"meter"`
	Customer struct {
		ID uuid.UUID `json:"id"`
	} `json:"customer"`
}

const customerMeterFields = `id createdAt modifiedAt customerId meterId consumedUnits creditedUnits balance
	meter { id name } customer { id }`

// customerMeterWorld is an organization with four live meters (calls counts the events named
// call, tokens sums their tokens over those named completion, idle counts idle events and
// nobody's counts events nobody sends) and an archived one (old calls, also over call). ann
// (external id ann-ext) sent calls by id, by external id and by both, and completions, and
// holds credits on calls and idle; bob sent one call. The grants that must not count are
// there too: a revoked one, a seat member's, a deleted one. Another organization sent a call
// under ann's external id and credits its own meter.
type customerMeterWorld struct {
	s                                     *resolverstest.Server
	org                                   resolverstest.Org
	ann, bob                              customer
	calls, tokens, idle, nobodys, oldCall uuid.UUID
	first, last                           time.Time // the first and the latest change of ann's calls
}

var customerMeterBase = time.Date(2025, time.May, 1, 12, 0, 0, 0, time.UTC)

func newCustomerMeterWorld(t *testing.T) customerMeterWorld {
	t.Helper()
	s := resolverstest.New(t)
	w := customerMeterWorld{s: s, org: s.NewOrg(t, resolverstest.AllScopes)}
	other := s.NewOrg(t, resolverstest.AllScopes)
	w.ann = s.NewCustomer(t, w.org.ID, "ann-ext")
	w.bob = s.NewCustomer(t, w.org.ID, "")
	meter := func(org uuid.UUID, name, event, aggregation string) uuid.UUID {
		var id uuid.UUID
		s.Get(t, &id, `INSERT INTO meters (organization_id, name, filter, aggregation, created_at) VALUES ($1, $2,
			jsonb_build_object('conjunction', 'and', 'clauses', jsonb_build_array(
				jsonb_build_object('property', 'name', 'operator', 'eq', 'value', $3::text))), $4, $5) RETURNING id`,
			org, name, event, aggregation, customerMeterBase)
		return id
	}
	w.calls = meter(w.org.ID, "Calls", "call", `{"func": "count"}`)
	w.tokens = meter(w.org.ID, "Tokens", "completion", `{"func": "sum", "property": "tokens"}`)
	w.idle = meter(w.org.ID, "Idle", "idle", `{"func": "count"}`)
	w.nobodys = meter(w.org.ID, "Nobody's", "never", `{"func": "count"}`)
	w.oldCall = meter(w.org.ID, "Old calls", "call", `{"func": "count"}`)
	s.Exec(t, `UPDATE meters SET archived_at = now() WHERE id = $1`, w.oldCall)
	foreignMeter := meter(other.ID, "Foreign calls", "call", `{"func": "count"}`)

	at := func(h int) time.Time { return customerMeterBase.Add(time.Duration(h) * time.Hour) }
	event := func(org uuid.UUID, name string, customer *uuid.UUID, external *string, metadata string, h int) {
		s.Exec(t, `INSERT INTO events (organization_id, name, customer_id, external_customer_id, "timestamp", created_at, metadata)
			VALUES ($1, $2, $3, $4, $5, $5, $6)`, org, name, customer, external, at(h), metadata)
	}
	ext := "ann-ext"
	event(w.org.ID, "call", &w.ann.ID, nil, `{}`, 2)
	event(w.org.ID, "call", &w.ann.ID, nil, `{}`, 3)
	event(w.org.ID, "call", &w.ann.ID, nil, `{}`, 4)
	event(w.org.ID, "call", nil, &ext, `{}`, 5)
	event(w.org.ID, "call", &w.ann.ID, &ext, `{}`, 6)
	event(w.org.ID, "completion", &w.ann.ID, nil, `{"tokens": 1.5}`, 7)
	event(w.org.ID, "completion", nil, &ext, `{"tokens": 2}`, 8)
	event(w.org.ID, "completion", &w.ann.ID, nil, `{"tokens": "many"}`, 9)
	event(w.org.ID, "call", &w.bob.ID, nil, `{}`, 10)
	event(other.ID, "call", nil, &ext, `{}`, 11)

	credit := func(org, meter uuid.UUID, units int) uuid.UUID {
		var id uuid.UUID
		s.Get(t, &id, `INSERT INTO benefits (organization_id, type, description, properties)
			VALUES ($1, 'meter_credit', 'Credits', jsonb_build_object('units', $2::int, 'rollover', false, 'meter_id', $3::text))
			RETURNING id`, org, units, meter)
		return id
	}
	grant := func(org, benefit, customer uuid.UUID, h int, extra string) {
		s.Exec(t, `INSERT INTO benefit_grants (organization_id, benefit_id, customer_id, granted_at) VALUES ($1, $2, $3, $4)`,
			org, benefit, customer, at(h))
		if extra != "" {
			s.Exec(t, `UPDATE benefit_grants SET `+extra+` WHERE benefit_id = $1`, benefit)
		}
	}
	var member uuid.UUID
	s.Get(t, &member, `INSERT INTO members (organization_id, customer_id, email) VALUES ($1, $2, 'dev@example.com') RETURNING id`,
		w.org.ID, w.ann.ID)
	grant(w.org.ID, credit(w.org.ID, w.calls, 10), w.ann.ID, 1, "")
	grant(w.org.ID, credit(w.org.ID, w.calls, 5), w.ann.ID, 12, "")
	grant(w.org.ID, credit(w.org.ID, w.calls, 100), w.ann.ID, 13, "granted_at = NULL, revoked_at = now()")
	grant(w.org.ID, credit(w.org.ID, w.calls, 1000), w.ann.ID, 13, "deleted_at = now()")
	grant(w.org.ID, credit(w.org.ID, w.calls, 7), w.ann.ID, 13, "member_id = '"+member.String()+"'")
	grant(w.org.ID, credit(w.org.ID, w.idle, 4), w.ann.ID, 14, "")
	grant(other.ID, credit(other.ID, foreignMeter, 3), w.ann.ID, 15, "")
	w.first, w.last = at(1), at(12)
	return w
}

// annsMeters reads ann's meters with the given arguments (a GraphQL argument list, or "").
func (w customerMeterWorld) annsMeters(t *testing.T, token, args string) []customerMeterView {
	t.Helper()
	if args != "" {
		args = "(" + args + ")"
	}
	var out struct {
		Customer struct {
			Meters struct{ Items []customerMeterView }
		}
	}
	w.s.Query(t, token, `query($id: UUID!) { customer(id: $id) { meters`+args+` { items { `+customerMeterFields+` } } } }`,
		vars{"id": w.ann.ID}, &out)
	return out.Customer.Meters.Items
}

// figures are what a test compares of a customer meter.
type figures struct {
	Meter             uuid.UUID
	Consumed, Balance float64
	Credited          int64
}

func figuresOf(ms []customerMeterView) []figures {
	out := []figures{}
	for _, m := range ms {
		out = append(out, figures{m.MeterID, m.ConsumedUnits, m.Balance, m.CreditedUnits})
	}
	return out
}

func TestCustomerMetersBalanceUsageAgainstCredits(t *testing.T) {
	t.Parallel()
	w := newCustomerMeterWorld(t)
	ann := w.annsMeters(t, w.org.Token, `sorting: ["meter_name"]`)

	t.Run("each meter with events or credits, consumed over all events against live credits", func(t *testing.T) {
		want := []figures{
			{w.calls, 5, 10, 15},     // 3 by id, 1 by external id, 1 by both; 10 + 5 credited
			{w.idle, 0, 4, 4},        // credited, never used
			{w.tokens, 3.5, -3.5, 0}, // 1.5 + 2; the event whose tokens are no number is left out
		}
		if diff := cmp.Diff(want, figuresOf(ann)); diff != "" {
			t.Errorf("ann's meters (-want +got):\n%s", diff)
		}
	})
	t.Run("a meter names its meter and customer, and its dates are its first and latest change", func(t *testing.T) {
		calls := ann[0]
		if calls.Meter.ID != w.calls || calls.Meter.Name != "Calls" || calls.CustomerID != w.ann.ID || calls.Customer.ID != w.ann.ID {
			t.Errorf("calls %+v", calls)
		}
		if !calls.CreatedAt.Equal(w.first) || calls.ModifiedAt == nil || !calls.ModifiedAt.Equal(w.last) {
			t.Errorf("calls created %v modified %v, want %v and %v", calls.CreatedAt, calls.ModifiedAt, w.first, w.last)
		}
	})
	t.Run("ids are derived from the customer and the meter: stable, distinct, version 4", func(t *testing.T) {
		again := w.annsMeters(t, w.org.Token, `sorting: ["meter_name"]`)
		seen := map[uuid.UUID]bool{}
		for i, m := range ann {
			if m.ID != again[i].ID || m.ID != storage.CustomerMeterID(w.ann.ID, m.MeterID) || m.ID.Version() != 4 || seen[m.ID] {
				t.Errorf("meter %d: id %s, read again %s", i, m.ID, again[i].ID)
			}
			seen[m.ID] = true
		}
	})
	t.Run("each customer of a page gets its own meters", func(t *testing.T) {
		var out struct {
			Customers struct {
				Items []struct {
					ID     uuid.UUID
					Meters struct {
						Items      []customerMeterView
						Pagination struct{ TotalCount int }
					}
				}
			}
		}
		w.s.Query(t, w.org.Token, `{ customers(limit: 100) { items { id meters(sorting: ["meter_name"]) {
			items { `+customerMeterFields+` } pagination { totalCount } } } } }`, nil, &out)
		want := map[uuid.UUID][]figures{w.ann.ID: figuresOf(ann), w.bob.ID: {{w.calls, 1, -1, 0}}}
		for _, c := range out.Customers.Items {
			if diff := cmp.Diff(want[c.ID], figuresOf(c.Meters.Items)); diff != "" || c.Meters.Pagination.TotalCount != len(want[c.ID]) {
				t.Errorf("customer %s (total %d) (-want +got):\n%s", c.ID, c.Meters.Pagination.TotalCount, diff)
			}
			for _, m := range c.Meters.Items {
				if m.CustomerID != c.ID || m.Customer.ID != c.ID {
					t.Errorf("customer %s shows a meter of %s", c.ID, m.CustomerID)
				}
			}
		}
	})
	t.Run("archived meters are left out unless asked for by id", func(t *testing.T) {
		got := figuresOf(w.annsMeters(t, w.org.Token, `filter: {meterId: [`+quoted(w.oldCall, w.idle)+`]}, sorting: ["meter_name"]`))
		want := []figures{{w.idle, 0, 4, 4}, {w.oldCall, 5, -5, 0}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("the query filter matches meter names", func(t *testing.T) {
		if got := figuresOf(w.annsMeters(t, w.org.Token, `filter: {query: "TOK"}`)); len(got) != 1 || got[0].Meter != w.tokens {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("sorting by balance and paging by cursor walk the same order", func(t *testing.T) {
		byBalance := figuresOf(w.annsMeters(t, w.org.Token, `sorting: ["-balance"]`))
		if len(byBalance) != 3 || byBalance[0].Meter != w.calls || byBalance[2].Meter != w.tokens {
			t.Fatalf("by balance %+v", byBalance)
		}
		const doc = `query($id: UUID!, $after: String) { customer(id: $id) { meters(sorting: ["-balance"], first: 1, after: $after) {
			items { id meterId } pagination { totalCount } pageInfo { hasNextPage endCursor } } } }`
		var walked []uuid.UUID
		var after *string
		for range 5 {
			var out struct {
				Customer struct {
					Meters struct {
						Items      []struct{ MeterID uuid.UUID }
						Pagination struct{ TotalCount int }
						PageInfo   struct {
							HasNextPage bool
							EndCursor   *string
						}
					}
				}
			}
			w.s.Query(t, w.org.Token, doc, vars{"id": w.ann.ID, "after": after}, &out)
			m := out.Customer.Meters
			if m.Pagination.TotalCount != 3 {
				t.Fatalf("total %d, want 3", m.Pagination.TotalCount)
			}
			for _, it := range m.Items {
				walked = append(walked, it.MeterID)
			}
			if !m.PageInfo.HasNextPage {
				break
			}
			after = m.PageInfo.EndCursor
		}
		if diff := cmp.Diff([]uuid.UUID{w.calls, w.idle, w.tokens}, walked); diff != "" {
			t.Errorf("walked (-want +got):\n%s", diff)
		}
	})
	t.Run("an unknown sorting is the client's error", func(t *testing.T) {
		res := w.s.Do(t, w.org.Token, `query($id: UUID!) { customer(id: $id) { meters(sorting: ["amount"]) { items { id } } } }`,
			vars{"id": w.ann.ID})
		if len(res.Errors) == 0 || reason(res.Errors[0]) != "RequestValidationError" {
			t.Errorf("got %s", res.Body)
		}
	})
}

func TestCustomerMetersAreGuarded(t *testing.T) {
	t.Parallel()
	w := newCustomerMeterWorld(t)
	const doc = `query($id: UUID!) { customer(id: $id) { id meters { items { meterId consumedUnits } } } }`
	for _, scope := range []string{"customers:read", "customers:write"} {
		t.Run("a token with "+scope+" reads them", func(t *testing.T) {
			res := w.s.Do(t, w.s.NewToken(t, w.org.ID, scope), doc, vars{"id": w.ann.ID})
			if len(res.Errors) > 0 || len(pageIDsOf(t, res.Data, "customer")) != 3 {
				t.Errorf("got %s", res.Body)
			}
		})
	}
	// Without a customers scope, a token reaches a customer through one of its orders.
	var order uuid.UUID
	w.s.Get(t, &order, `INSERT INTO orders (organization_id, customer_id, status, billing_reason, currency,
			subtotal_amount, net_amount, total_amount)
		VALUES ($1, $2, 'paid', 'purchase', 'usd', 0, 0, 0) RETURNING id`, w.org.ID, w.ann.ID)
	const viaOrder = `query($id: UUID!) { order(id: $id) { customer { id meters { items { meterId } } } } }`
	t.Run("customer_meters:read reads them without a customers scope", func(t *testing.T) {
		res := w.s.Do(t, w.s.NewToken(t, w.org.ID, "orders:read customer_meters:read"), viaOrder, vars{"id": order})
		var out struct{ Order json.RawMessage }
		mustUnmarshal(t, res.Data, &out)
		if len(res.Errors) > 0 || len(pageIDsOf(t, out.Order, "customer")) != 3 {
			t.Errorf("got %s", res.Body)
		}
	})
	t.Run("a token without any of the scopes is refused them alone", func(t *testing.T) {
		res := w.s.Do(t, w.s.NewToken(t, w.org.ID, "orders:read meters:read"), viaOrder, vars{"id": order})
		requireRefused(t, res, "order.customer.meters")
	})
	t.Run("a customer session reads its own, as through the dashboard", func(t *testing.T) {
		var out struct {
			Me struct {
				Customer struct {
					Meters struct{ Items []customerMeterView }
				}
			}
		}
		w.s.Query(t, w.s.NewCustomerSession(t, w.org.ID, w.ann.ID), `{ me { customer { meters(sorting: ["meter_name"]) {
			items { `+customerMeterFields+` } } } } }`, nil, &out)
		if diff := cmp.Diff(figuresOf(w.annsMeters(t, w.org.Token, `sorting: ["meter_name"]`)),
			figuresOf(out.Me.Customer.Meters.Items)); diff != "" {
			t.Errorf("(-dashboard +portal):\n%s", diff)
		}
	})
}

// quoted writes ids as a GraphQL list's elements.
func quoted(ids ...uuid.UUID) string {
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += ", "
		}
		out += `"` + id.String() + `"`
	}
	return out
}

// pageIDsOf reads the meter ids of field.meters.items in data.
func pageIDsOf(t *testing.T, data []byte, field string) []uuid.UUID {
	t.Helper()
	var outer map[string]json.RawMessage
	mustUnmarshal(t, data, &outer)
	var out struct {
		Meters struct{ Items []struct{ MeterID uuid.UUID } }
	}
	mustUnmarshal(t, outer[field], &out)
	ids := []uuid.UUID{}
	for _, it := range out.Meters.Items {
		ids = append(ids, it.MeterID)
	}
	return ids
}
