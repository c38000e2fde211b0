package resolvers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/resolvers/resolverstest"
	"till/storage"
	"till/storage/storagetest"
)

// Sizes of the dashboard seed: every customer has more orders than the nested window shows,
// so a window is always full and its total is larger than its page.
const (
	dashboardCustomers         = 110
	dashboardOrdersPerCustomer = 6
	dashboardOrderWindow       = 5
	dashboardProducts          = 3
)

// TestDashboardQueriesCostPinnedStatements pins the exact statement count of two 3-level
// dashboard queries: the same number for 10 and for 100 items, on every run. A count fixed
// by the query's shape is what keeps a dashboard's latency flat as its pages grow (DESIGN
// §2); pinning the number, rather than only comparing sizes, also catches a relation that
// starts costing a statement more, or a level that falls apart into two batches.
//
// The queries are chosen so that each loader serves exactly one depth (no record is reachable
// at two depths, where whichever asks first would fill the other's cache), so the count does
// not depend on the order in which the executor happens to resolve fields.
//
// customers(limit: N) { items { orders(limit: 5) { items { product { prices { id } } } } } }
// costs 5 statements:
//  1. the organization token's lookup (every request reads it);
//  2. the customers page with its total (a root list's count rides in its page statement);
//  3. Customer.orders: a window of 5 orders per customer of the page, each with its total, in
//     one statement (OrderWindowsByCustomers);
//  4. Order.product: the distinct products of all those orders (ProductsByIDs);
//  5. Product.prices: the prices of those products (PricesByProducts).
//
// orders(limit: N) { items { customer { email } product { benefits { id } } items { label } } }
// costs 6 statements:
//  1. the organization token's lookup;
//  2. the orders page with its total (ListOrders);
//  3. Order.customer (CustomersByIDs), 4. Order.items (OrderItemsByOrders) and 5. Order.product
//     (ProductsByIDs), one each for the whole page;
//  6. Product.benefits (ProductBenefitsByProducts) for the products of the page.
//
// Not parallel, like the other statement-count tests: the count is of the whole pool.
func TestDashboardQueriesCostPinnedStatements(t *testing.T) {
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	seedDashboard(t, db, org.ID)

	tests := []struct {
		name  string
		query string
		want  int64
		check func(t *testing.T, data []byte, n int)
	}{
		{
			name: "a customers page with each customer's orders, their product and its prices",
			query: `query($n: Int) { customers(limit: $n) { items { id orders(limit: 5) { items { id
				product { id prices { id } } } pagination { totalCount } } } } }`,
			want: 5,
			check: func(t *testing.T, data []byte, n int) {
				var out struct {
					Customers struct {
						Items []struct {
							Orders struct {
								Items []struct {
									Product struct{ Prices []struct{ ID uuid.UUID } }
								}
								Pagination struct{ TotalCount int }
							}
						}
					}
				}
				mustUnmarshal(t, data, &out)
				if len(out.Customers.Items) != n {
					t.Fatalf("got %d customers, want %d", len(out.Customers.Items), n)
				}
				for i, c := range out.Customers.Items {
					if len(c.Orders.Items) != dashboardOrderWindow || c.Orders.Pagination.TotalCount != dashboardOrdersPerCustomer {
						t.Fatalf("customer %d: %d orders of %d, want %d of %d", i, len(c.Orders.Items),
							c.Orders.Pagination.TotalCount, dashboardOrderWindow, dashboardOrdersPerCustomer)
					}
					for _, o := range c.Orders.Items {
						if len(o.Product.Prices) != 2 {
							t.Fatalf("customer %d: an order's product has %d prices, want 2", i, len(o.Product.Prices))
						}
					}
				}
			},
		},
		{
			name: "an orders page with each order's customer, items, product and its benefits",
			query: `query($n: Int) { orders(limit: $n) { items { id customer { email } product { benefits { id } }
				items { label } } pagination { totalCount } } }`,
			want: 6,
			check: func(t *testing.T, data []byte, n int) {
				var out struct {
					Orders struct {
						Items []struct {
							Customer struct{ Email string }
							Product  struct{ Benefits []struct{ ID uuid.UUID } }
							Items    []struct{ Label string }
						}
						Pagination struct{ TotalCount int }
					}
				}
				mustUnmarshal(t, data, &out)
				if len(out.Orders.Items) != n || out.Orders.Pagination.TotalCount != dashboardCustomers*dashboardOrdersPerCustomer {
					t.Fatalf("got %d orders of %d, want %d of %d", len(out.Orders.Items), out.Orders.Pagination.TotalCount,
						n, dashboardCustomers*dashboardOrdersPerCustomer)
				}
				for i, o := range out.Orders.Items {
					if o.Customer.Email == "" || len(o.Product.Benefits) != 2 || len(o.Items) != 2 {
						t.Fatalf("order %d: customer %q, %d benefits, %d items; want an email, 2 and 2", i,
							o.Customer.Email, len(o.Product.Benefits), len(o.Items))
					}
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name+" costs the same pinned statements at 10 and 100 items on every run", func(t *testing.T) {
			for _, n := range []int{10, 100} {
				for run := 1; run <= 3; run++ {
					counter.Reset()
					res := s.Do(t, org.Token, tc.query, vars{"n": n})
					got := counter.Snapshot()
					if len(res.Errors) > 0 {
						t.Fatalf("N=%d: %s", n, res.Body)
					}
					tc.check(t, res.Data, n)
					if got.Statements() != tc.want || got.Begins != 0 {
						t.Errorf("N=%d run %d: %s; want %d statements and no transaction", n, run, got, tc.want)
					}
				}
			}
		})
	}
}

// seedDashboard stores dashboardProducts products (two prices and two benefits each) and
// dashboardCustomers customers with dashboardOrdersPerCustomer paid orders each, spread over
// the products, each order with two items. Orders are an hour apart, so every page and window
// is ordered by created_at alone.
func seedDashboard(tb testing.TB, db *sqlx.DB, orgID uuid.UUID) {
	tb.Helper()
	ctx := context.Background()
	start := time.Now().Add(-time.Duration(dashboardCustomers*dashboardOrdersPerCustomer) * time.Hour)
	err := storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
		var products []uuid.UUID
		for i := range dashboardProducts {
			var benefits []uuid.UUID
			for j := range 2 {
				b, err := storage.CreateBenefit(ctx, tx, orgID, storage.BenefitWrite{Type: "custom",
					Description: fmt.Sprintf("Perk %d-%d", i, j), Visibility: "public", Properties: storage.RawJSON(`{"note": null}`)})
				if err != nil {
					return err
				}
				benefits = append(benefits, b.ID)
			}
			p, _, err := seedPricedProduct(ctx, tx, orgID, storage.ProductWrite{Name: fmt.Sprintf("Plan %d", i),
				Visibility: "public"}, benefits)
			if err != nil {
				return err
			}
			products = append(products, p)
		}
		for i := range dashboardCustomers {
			c, err := storage.CreateCustomer(ctx, tx, orgID, storage.CustomerWrite{Email: ptr(fmt.Sprintf("buyer%03d@example.com", i))})
			if err != nil {
				return err
			}
			for j := range dashboardOrdersPerCustomer {
				n := i*dashboardOrdersPerCustomer + j
				o, err := storage.InsertOrder(ctx, tx, orgID, start.Add(time.Duration(n)*time.Hour), storage.OrderWrite{
					CustomerID: c.ID, ProductID: &products[n%len(products)], Status: "paid", BillingReason: "purchase",
					Currency: "usd", SubtotalAmount: 1500, NetAmount: 1500, TotalAmount: 1500,
					CustomFieldData: storage.JSONMap{}, Metadata: storage.JSONMap{}})
				if err != nil {
					return err
				}
				if _, err := storage.InsertOrderItems(ctx, tx, orgID, o, []storage.OrderItemWrite{
					{Label: "Plan", Amount: 1000}, {Label: "Add-on", Amount: 500}}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("seeding the dashboard: %v", err)
	}
}

// TestPortalHomeCostsPinnedStatements pins the statements of a customer portal's home page,
// the portal case of the dashboard benchmark:
//  1. the customer session's lookup (sessions are not cached), which carries the session's
//     customer;
//  2. the whole home, which PostgreSQL writes (renderedMe): the customer, its orders and
//     subscriptions with their products, and its license keys, each list with its total.
//
// The orders' and the subscriptions' products differ, so a product that either list stopped
// writing would show.
func TestPortalHomeCostsPinnedStatements(t *testing.T) {
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	f := orderFixture{s: s, org: org, customer: s.NewCustomer(t, org.ID, ""),
		oneTime: s.NewProduct(t, org.ID, "Ebook", newBenefit(t, s, org.Token, "Chapter").ID)}
	token := s.NewCustomerSession(t, org.ID, f.customer.ID)
	for range 12 {
		f.create(t, f.spec())
	}
	seedPortalSubscriptions(t, db, org.ID, f.customer.ID, "Pro plan", 3)
	const query = `{ me {
		customer { id email name billingName billingAddress { line1 postalCode city country } }
		orders(limit: 10) { items { id createdAt status netAmount currency product { name } } pagination { totalCount } }
		subscriptions(limit: 10) { items { id status amount currency currentPeriodEnd product { name } } pagination { totalCount } }
		licenseKeys(limit: 10) { items { id displayKey status expiresAt } pagination { totalCount } } } }`
	for run := 1; run <= 3; run++ {
		counter.Reset()
		var out struct {
			Me struct {
				Customer struct{ ID uuid.UUID }
				Orders   struct {
					Items      []struct{ Product struct{ Name string } }
					Pagination struct{ TotalCount int }
				}
				Subscriptions struct {
					Items []struct{ Product struct{ Name string } }
				}
			}
		}
		s.Query(t, token, query, nil, &out)
		got := counter.Snapshot()
		if out.Me.Customer.ID != f.customer.ID {
			t.Fatalf("me.customer %s, want %s", out.Me.Customer.ID, f.customer.ID)
		}
		if len(out.Me.Orders.Items) != 10 || out.Me.Orders.Pagination.TotalCount != 12 || out.Me.Orders.Items[0].Product.Name != "Ebook" {
			t.Fatalf("orders: %+v", out.Me.Orders)
		}
		if subs := out.Me.Subscriptions.Items; len(subs) != 3 || subs[0].Product.Name != "Pro plan" {
			t.Fatalf("subscriptions: %+v", out.Me.Subscriptions)
		}
		if got.Statements() != 2 || got.Begins != 0 {
			t.Errorf("run %d: %s; want 2 statements and no transaction", run, got)
		}
	}
}

// seedPortalSubscriptions stores n started monthly subscriptions of a new product named product for
// the customer.
func seedPortalSubscriptions(tb testing.TB, db *sqlx.DB, orgID, customerID uuid.UUID, product string, n int) {
	tb.Helper()
	ctx := context.Background()
	err := storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
		p, err := storage.CreateProduct(ctx, tx, orgID, storage.ProductWrite{Name: product, Visibility: "public",
			RecurringInterval: ptr(storage.IntervalMonth), RecurringIntervalCount: ptr(1)})
		if err != nil {
			return err
		}
		for i := range n {
			start := time.Now().Add(-time.Duration(i) * time.Hour)
			if _, err := storage.CreateSubscription(ctx, tx, orgID, start, storage.SubscriptionWrite{CustomerID: customerID,
				ProductID: p.ID, Status: "active", Amount: 1000, Currency: "usd", RecurringInterval: "month",
				RecurringIntervalCount: 1, CurrentPeriodStart: start, CurrentPeriodEnd: start.AddDate(0, 1, 0),
				StartedAt: &start}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("seeding subscriptions: %v", err)
	}
}

// TestOrderPageCostsPinnedStatements pins the statements of an order page, the order case of
// the dashboard benchmark and what GET /v1/orders/{id} runs:
//  1. the organization token's lookup;
//  2. the order, carrying the customer, product, discount, subscription and lines the query
//     selects on it.
//
// The relations' own relations are not carried: a product's prices cost a statement (3).
func TestOrderPageCostsPinnedStatements(t *testing.T) {
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	seed := seedOrderPage(t, db, org.ID)
	tests := []struct {
		name, query string
		id          uuid.UUID
		want        int64
	}{
		{"the order page of an order with every relation", resolverstest.OrderPage, seed.full, 2},
		{"the order page of an order with none but its customer", resolverstest.OrderPage, seed.bare, 2},
		{"relations selected through a fragment and an alias", `query($id: UUID!) { order(id: $id) { ...O } }
			fragment O on Order { buyer: customer { email } product { name } ... on Order { items { label } } }`, seed.ebookOrder, 2},
		{"a relation of a relation", `query($id: UUID!) { order(id: $id) { product { name prices { id } } } }`, seed.full, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name+" costs its pinned statements on every run", func(t *testing.T) {
			for run := 1; run <= 3; run++ {
				counter.Reset()
				res := s.Do(t, org.Token, tc.query, vars{"id": tc.id})
				got := counter.Snapshot()
				if len(res.Errors) > 0 {
					t.Fatalf("%s", res.Body)
				}
				var out struct {
					Order struct{ Customer, Buyer *struct{ Email string } }
				}
				mustUnmarshal(t, res.Data, &out)
				if tc.query == resolverstest.OrderPage && (out.Order.Customer == nil || out.Order.Customer.Email != "ann@example.com") {
					t.Fatalf("order %s", res.Data)
				}
				if got.Statements() != tc.want || got.Begins != 0 {
					t.Errorf("run %d: %s; want %d statements and no transaction", run, got, tc.want)
				}
			}
		})
	}
}
