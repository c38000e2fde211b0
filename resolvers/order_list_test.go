package resolvers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/storage"
	"till/storage/storagetest"
)

// listedOrders is a set of orders made to tell the filters and sorts apart: each differs
// from the others in the fields a filter or sort reads.
type listedOrders struct {
	orderFixture
	other        customer // with external id ext-b
	subscription *storage.Subscription
	discount     *storage.Discount
	a, b, c      *storage.Order // a: oldest, c: newest
}

func newListedOrders(t *testing.T) listedOrders {
	t.Helper()
	f := newOrderFixture(t)
	l := listedOrders{orderFixture: f, other: f.s.NewCustomer(t, f.org.ID, "ext-b")}
	ctx := context.Background()
	var err error
	now := time.Now()
	if l.subscription, err = storage.CreateSubscription(ctx, f.s.DB, f.org.ID, now, storage.SubscriptionWrite{
		CustomerID: l.other.ID, ProductID: f.recurring.ID, Status: "active", Amount: 2000, Currency: "usd",
		RecurringInterval: "month", RecurringIntervalCount: 1, CurrentPeriodStart: now,
		CurrentPeriodEnd: now.AddDate(0, 1, 0), StartedAt: &now}); err != nil {
		t.Fatal(err)
	}
	if l.discount, err = storage.CreateDiscount(ctx, f.s.DB, f.org.ID, storage.DiscountWrite{Name: "Launch",
		Type: "percentage", BasisPoints: ptr(1000), Duration: "once"}); err != nil {
		t.Fatal(err)
	}
	spec := f.spec()
	spec.Metadata = storage.JSONMap{"tier": "gold", "n": 1}
	l.a = f.create(t, spec)

	spec = f.spec()
	spec.CustomerID, spec.ProductID, spec.SubscriptionID = l.other.ID, &f.recurring.ID, &l.subscription.ID
	spec.BillingReason, spec.Status, spec.DiscountID, spec.DiscountAmount = "subscription_create", "paid", &l.discount.ID, 150
	spec.Items = []resolvers.OrderItemSpec{{Label: "Pro plan", Amount: 2000}}
	spec.Metadata = storage.JSONMap{"tier": "silver"}
	l.b = f.create(t, spec)

	spec = f.spec()
	spec.ProductID, spec.Items, spec.TaxAmount = nil, []resolvers.OrderItemSpec{{Label: "Custom work", Amount: 100}}, 0
	l.c = f.create(t, spec)
	for i, o := range []*storage.Order{l.a, l.b, l.c} {
		f.s.Exec(t, `UPDATE orders SET created_at = now() - $2::interval WHERE id = $1`, o.ID, fmt.Sprintf("%d hours", 3-i))
	}
	return l
}

// list runs orders(...) and returns the ids in page order and the total count.
func (l listedOrders) list(t *testing.T, sorting []string, filter vars) ([]uuid.UUID, int) {
	t.Helper()
	var out struct {
		Orders struct {
			Items      []struct{ ID uuid.UUID }
			Pagination struct{ TotalCount int }
		}
	}
	l.s.Query(t, l.org.Token, `query($sorting: [String!], $filter: OrderFilter) {
		orders(limit: 100, sorting: $sorting, filter: $filter) { items { id } pagination { totalCount } } }`,
		vars{"sorting": sorting, "filter": filter}, &out)
	return itemIDs(out.Orders.Items), out.Orders.Pagination.TotalCount
}

func TestOrdersList(t *testing.T) {
	t.Parallel()
	l := newListedOrders(t)
	a, b, c := l.a.ID, l.b.ID, l.c.ID
	at := func(o *storage.Order) time.Time {
		var ts time.Time
		l.s.Get(t, &ts, `SELECT created_at FROM orders WHERE id = $1`, o.ID)
		return ts
	}
	tests := []struct {
		name    string
		sorting []string
		filter  vars
		want    []uuid.UUID
	}{
		{"the default order is newest first", nil, nil, []uuid.UUID{c, b, a}},
		{"created_at ascending", []string{"created_at"}, nil, []uuid.UUID{a, b, c}},
		{"status ranks pending before paid", []string{"status", "-created_at"}, nil, []uuid.UUID{c, a, b}},
		{"status descending puts paid first", []string{"-status", "created_at"}, nil, []uuid.UUID{b, a, c}},
		{"amount sorts on the net amount", []string{"-amount"}, nil, []uuid.UUID{b, a, c}},
		{"product sorts by name, orders without product last", []string{"product"}, nil, []uuid.UUID{a, b, c}},
		{"invoice_number follows the sequence", []string{"-invoice_number"}, nil, []uuid.UUID{c, b, a}},
		{"a product filter", nil, vars{"productId": []uuid.UUID{l.recurring.ID}}, []uuid.UUID{b}},
		{"recurring billing type", nil, vars{"productBillingType": []string{"recurring"}}, []uuid.UUID{b}},
		{"one-time billing type skips orders without product", nil, vars{"productBillingType": []string{"one_time"}}, []uuid.UUID{a}},
		{"both billing types", nil, vars{"productBillingType": []string{"one_time", "recurring"}}, []uuid.UUID{b, a}},
		{"a discount filter", nil, vars{"discountId": []uuid.UUID{l.discount.ID}}, []uuid.UUID{b}},
		{"customer ids are OR-ed", nil, vars{"customerId": []uuid.UUID{l.customer.ID, uuid.New()}}, []uuid.UUID{c, a}},
		{"an external customer id", nil, vars{"externalCustomerId": []string{"ext-b"}}, []uuid.UUID{b}},
		{"a subscription filter", nil, vars{"subscriptionId": []uuid.UUID{l.subscription.ID}}, []uuid.UUID{b}},
		{"statuses", nil, vars{"status": []string{"pending"}}, []uuid.UUID{c, a}},
		{"created_after is strict", nil, vars{"createdAfter": at(l.b)}, []uuid.UUID{c}},
		{"created_before is strict", nil, vars{"createdBefore": at(l.b)}, []uuid.UUID{a}},
		{"metadata values of one key are OR-ed", nil,
			vars{"metadata": []vars{{"key": "tier", "values": []string{"gold", "silver"}}}}, []uuid.UUID{b, a}},
		{"metadata keys are AND-ed and compared as text", nil,
			vars{"metadata": []vars{{"key": "tier", "values": []string{"gold"}}, {"key": "n", "values": []string{"1"}}}}, []uuid.UUID{a}},
		{"filters are AND-ed", nil, vars{"status": []string{"pending"}, "productId": []uuid.UUID{l.oneTime.ID}}, []uuid.UUID{a}},
		{"the own organization filter", nil, vars{"organizationId": []uuid.UUID{l.org.ID}}, []uuid.UUID{c, b, a}},
		{"another organization filter matches nothing", nil, vars{"organizationId": []uuid.UUID{uuid.New()}}, []uuid.UUID{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, total := l.list(t, tt.sorting, tt.filter)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if total != len(tt.want) {
				t.Errorf("totalCount = %d, want %d", total, len(tt.want))
			}
		})
	}

	t.Run("an unknown sort criterion is bad input", func(t *testing.T) {
		e := l.s.QueryError(t, l.org.Token, `{ orders(sorting: ["email"]) { items { id } } }`, nil)
		wantError(t, e, "BAD_USER_INPUT", "RequestValidationError",
			fieldErr{Type: "enum", Loc: []any{"query", "sorting"}, Msg: "Invalid sorting criterion.", Input: "email"})
	})
	t.Run("the relations of a listed order resolve", func(t *testing.T) {
		var out struct{ Orders struct{ Items []gqlOrder } }
		l.s.Query(t, l.org.Token, `{ orders(filter: {subscriptionId: ["`+l.subscription.ID.String()+`"]}) { items { `+orderFields+` } } }`, nil, &out)
		got := out.Orders.Items[0]
		if got.Subscription == nil || got.Subscription.Status != "active" || got.Discount["basisPoints"] != float64(1000) ||
			got.Discount["type"] != "percentage" || got.Discount["duration"] != "once" {
			t.Errorf("subscription %v, discount %v", got.Subscription, got.Discount)
		}
		if _, has := got.Discount["amount"]; has {
			t.Errorf("a percentage discount has an amount: %v", got.Discount)
		}
	})
}

func TestOrderTenancy(t *testing.T) {
	t.Parallel()
	f := newOrderFixture(t)
	o := f.create(t, f.spec())
	other := f.s.NewOrg(t, resolverstest.AllScopes)

	t.Run("another organization's order is not found", func(t *testing.T) {
		e := f.s.QueryError(t, other.Token, `query($id: UUID!) { order(id: $id) { id } }`, vars{"id": o.ID})
		wantError(t, e, "NOT_FOUND", "ResourceNotFound")
	})
	t.Run("another organization lists none of them", func(t *testing.T) {
		var out struct {
			Orders struct{ Pagination struct{ TotalCount int } }
		}
		f.s.Query(t, other.Token, `{ orders { pagination { totalCount } } }`, nil, &out)
		if out.Orders.Pagination.TotalCount != 0 {
			t.Errorf("totalCount = %d", out.Orders.Pagination.TotalCount)
		}
	})
	t.Run("another organization cannot update it", func(t *testing.T) {
		e := f.s.QueryError(t, other.Token, `mutation($id: UUID!) { updateOrder(id: $id, input: {billingName: "X"}) { id } }`, vars{"id": o.ID})
		wantError(t, e, "NOT_FOUND", "ResourceNotFound")
	})
	t.Run("a token without orders:read is refused", func(t *testing.T) {
		tok := f.s.NewToken(t, f.org.ID, "orders:write")
		e := f.s.QueryError(t, tok, `query($id: UUID!) { order(id: $id) { id } }`, vars{"id": o.ID})
		wantError(t, e, "FORBIDDEN", "insufficient_scope")
	})
	t.Run("a token without orders:write cannot update", func(t *testing.T) {
		tok := f.s.NewToken(t, f.org.ID, "orders:read")
		e := f.s.QueryError(t, tok, `mutation($id: UUID!) { updateOrder(id: $id, input: {billingName: "X"}) { id } }`, vars{"id": o.ID})
		wantError(t, e, "FORBIDDEN", "insufficient_scope")
	})
}

func TestPortalOrders(t *testing.T) {
	t.Parallel()
	l := newListedOrders(t)
	f := l.orderFixture
	f.s.Exec(t, `UPDATE organizations SET feature_settings = '{"member_model_enabled": true}' WHERE id = $1`, f.org.ID)
	draft := f.create(t, f.spec())
	f.s.Exec(t, `UPDATE orders SET status = 'draft' WHERE id = $1`, draft.ID)
	own := f.s.NewCustomerSession(t, f.org.ID, f.customer.ID) // an owner member session
	var memberID uuid.UUID
	f.s.Get(t, &memberID, `INSERT INTO members (organization_id, customer_id, email, role) VALUES ($1, $2, 'm@example.com', 'member') RETURNING id`,
		f.org.ID, f.customer.ID)
	var plain struct{ CreateCustomerSession struct{ Token string } }
	f.s.Query(t, f.org.Token, `mutation($c: UUID!, $m: UUID!) { createCustomerSession(input: {customerId: $c, memberId: $m}) { token } }`,
		vars{"c": f.customer.ID, "m": memberID}, &plain)
	const list = `query($sorting: [String!], $filter: PortalOrderFilter) { me { orders(sorting: $sorting, filter: $filter) {
		items { id product { name prices { id } benefits { id } organization { id } medias { id } } }
		pagination { totalCount } } } }`
	ids := func(t *testing.T, token string, sorting []string, filter vars) []uuid.UUID {
		t.Helper()
		var out struct {
			Me struct {
				Orders struct{ Items []struct{ ID uuid.UUID } }
			}
		}
		f.s.Query(t, token, list, vars{"sorting": sorting, "filter": filter}, &out)
		got := []uuid.UUID{}
		for _, it := range out.Me.Orders.Items {
			got = append(got, it.ID)
		}
		return got
	}
	tests := []struct {
		name    string
		sorting []string
		filter  vars
		want    []uuid.UUID
	}{
		{"only the session customer's orders, drafts included, newest first", nil, nil, []uuid.UUID{draft.ID, l.c.ID, l.a.ID}},
		{"amount ascending", []string{"amount", "created_at"}, nil, []uuid.UUID{l.c.ID, l.a.ID, draft.ID}},
		{"query matches the product name", nil, vars{"query": "book"}, []uuid.UUID{draft.ID, l.a.ID}},
		{"query escapes wildcards", nil, vars{"query": "%"}, []uuid.UUID{}},
		{"product billing type", nil, vars{"productBillingType": []string{"one_time"}}, []uuid.UUID{draft.ID, l.a.ID}},
		{"another customer's subscription matches nothing", nil, vars{"subscriptionId": []uuid.UUID{l.subscription.ID}}, []uuid.UUID{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ids(t, own, tt.sorting, tt.filter)); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("an organization-only sort is bad input", func(t *testing.T) {
		e := f.s.QueryError(t, own, `{ me { orders(sorting: ["status"]) { items { id } } } }`, nil)
		wantError(t, e, "BAD_USER_INPUT", "RequestValidationError",
			fieldErr{Type: "enum", Loc: []any{"query", "sorting"}, Msg: "Invalid sorting criterion.", Input: "status"})
	})
	t.Run("a plain member may not list orders", func(t *testing.T) {
		e := f.s.QueryError(t, plain.CreateCustomerSession.Token, `{ me { orders { items { id } } } }`, nil)
		wantError(t, e, "FORBIDDEN", "NotPermitted")
		if e.Message != "Only owners and billing managers can access billing features." {
			t.Errorf("message = %q", e.Message)
		}
	})
	t.Run("a plain member may not update an order", func(t *testing.T) {
		e := f.s.QueryError(t, plain.CreateCustomerSession.Token,
			`mutation($id: UUID!) { portalUpdateOrder(id: $id, input: {billingName: "M"}) { id } }`, vars{"id": l.a.ID})
		wantError(t, e, "FORBIDDEN", "NotPermitted")
	})
	t.Run("another customer's order is not found in the portal", func(t *testing.T) {
		e := f.s.QueryError(t, own, `mutation($id: UUID!) { portalUpdateOrder(id: $id, input: {billingName: "M"}) { id } }`,
			vars{"id": l.b.ID})
		wantError(t, e, "NOT_FOUND", "ResourceNotFound")
	})
	t.Run("the owner updates an own order", func(t *testing.T) {
		var out struct{ PortalUpdateOrder struct{ BillingName string } }
		f.s.Query(t, own, `mutation($id: UUID!) { portalUpdateOrder(id: $id, input: {billingName: "Owner"}) { billingName } }`,
			vars{"id": l.a.ID}, &out)
		if out.PortalUpdateOrder.BillingName != "Owner" {
			t.Errorf("billingName = %q", out.PortalUpdateOrder.BillingName)
		}
	})
	t.Run("organization tokens cannot use the portal", func(t *testing.T) {
		e := f.s.QueryError(t, f.org.Token, `{ me { orders { items { id } } } }`, nil)
		wantError(t, e, "FORBIDDEN", "Unauthorized")
	})
}

// TestPortalOrdersCostConstantStatements proves the portal list loads each relation of a
// page with one statement: 10 and 100 orders with product (prices, benefits, organization),
// subscription and items cost the same.
//
// Not parallel, like the other statement-count tests, so the batch windows are undisturbed.
func TestPortalOrdersCostConstantStatements(t *testing.T) {
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	f := orderFixture{s: s, org: org, customer: s.NewCustomer(t, org.ID, ""),
		oneTime: s.NewProduct(t, org.ID, "Ebook", newBenefit(t, s, org.Token, "Chapter").ID)}
	token := s.NewCustomerSession(t, org.ID, f.customer.ID)
	for range 110 {
		f.create(t, f.spec())
	}
	const query = `query($n: Int) { me { orders(limit: $n) { items { id customer { id } discount { id }
		product { id prices { id } benefits { id } organization { id } medias { id } } subscription { id } items { id } }
		pagination { totalCount } } } }`
	cost := func(n int) int64 {
		counter.Reset()
		var out struct {
			Me struct {
				Orders struct {
					Items []struct{ Items []struct{ ID uuid.UUID } }
				}
			}
		}
		s.Query(t, token, query, vars{"n": n}, &out)
		if len(out.Me.Orders.Items) != n || len(out.Me.Orders.Items[n-1].Items) != 2 {
			t.Fatalf("got %d orders", len(out.Me.Orders.Items))
		}
		return counter.Snapshot().Statements()
	}
	ten, hundred := cost(10), cost(100)
	t.Logf("me.orders with every relation: %d statements for 10 orders, %d for 100", ten, hundred)
	if ten != hundred {
		t.Errorf("statements grow with the page: %d for 10, %d for 100", ten, hundred)
	}
}
