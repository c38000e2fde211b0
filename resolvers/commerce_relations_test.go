package resolvers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/resolvers/resolverstest"
	"till/storage"
)

// purchase is what a succeeded checkout of a recurring product leaves: the checkout, the
// subscription it started and the order it made.
type purchase struct {
	checkout, subscription, order uuid.UUID
	secret                        string
}

// seedPurchase stores a succeeded purchase of product by customer at the given time (the
// checkout's and order's created_at, the subscription's started_at).
func seedPurchase(ctx context.Context, tx *sqlx.Tx, orgID, customerID, productID uuid.UUID, at time.Time) (purchase, error) {
	p := purchase{secret: "till_c_seed_" + uuid.NewString()}
	sub, err := storage.CreateSubscription(ctx, tx, orgID, at, storage.SubscriptionWrite{CustomerID: customerID,
		ProductID: productID, Status: "active", Amount: 1000, Currency: "usd", RecurringInterval: "month",
		RecurringIntervalCount: 1, CurrentPeriodStart: at, CurrentPeriodEnd: at.AddDate(0, 1, 0), StartedAt: &at})
	if err != nil {
		return p, err
	}
	ck, err := storage.CreateCheckout(ctx, tx, storage.CheckoutWrite{OrganizationID: orgID, ClientSecret: p.secret,
		ExpiresAt: at.Add(time.Hour), CheckoutUpdate: storage.CheckoutUpdate{SuccessURL: storage.Set("https://example.com"),
			ProductID: storage.Set(productID), CustomerID: storage.Set(&customerID), SubscriptionID: storage.Set(sub.ID),
			Status: storage.Set(storage.CheckoutStatusSucceeded), Amount: storage.Set[int64](1000), NetAmount: storage.Set[int64](1000),
			TotalAmount: storage.Set[int64](1000)}}, []uuid.UUID{productID}, at)
	if err != nil {
		return p, err
	}
	o, err := storage.InsertOrder(ctx, tx, orgID, at, storage.OrderWrite{CustomerID: customerID, ProductID: &productID,
		SubscriptionID: &sub.ID, CheckoutID: &ck.ID, Status: "paid", BillingReason: "subscription_create",
		Currency: "usd", SubtotalAmount: 1000, NetAmount: 1000, TotalAmount: 1000})
	if err != nil {
		return p, err
	}
	p.checkout, p.subscription, p.order = ck.ID, sub.ID, o.ID
	_, err = tx.ExecContext(ctx, `UPDATE checkouts SET created_at = $2 WHERE id = $1`, ck.ID, at)
	return p, err
}

// commerceWorld is an organization whose customers ann and bob bought a monthly plan: ann
// twice, an hour apart, and she left a checkout open; bob once. Another organization's rows
// were then pointed at ann, her first purchase and the plan, as no use case would write
// them, so that only the organization filters keep them out.
type commerceWorld struct {
	s                 *resolverstest.Server
	org               resolverstest.Org
	plan, ebook       uuid.UUID
	ann, bob          customer
	ann1, ann2, bob1  purchase
	annOpen, ebookBuy uuid.UUID // ann's open checkout; her order of the ebook, bought without checkout
}

var commerceBase = time.Date(2025, time.March, 1, 9, 0, 0, 0, time.UTC)

func newCommerceWorld(t *testing.T) commerceWorld {
	t.Helper()
	s := resolverstest.New(t)
	w := commerceWorld{s: s, org: s.NewOrg(t, resolverstest.AllScopes)}
	other := s.NewOrg(t, resolverstest.AllScopes)
	w.ann = createCustomer(t, s, w.org.Token, vars{"email": "ann@example.com"})
	w.bob = createCustomer(t, s, w.org.Token, vars{"email": "bob@example.com"})
	stranger := createCustomer(t, s, other.Token, vars{"email": "stranger@example.com"})
	ctx := context.Background()
	err := storage.InTx(ctx, s.DB, func(tx *sqlx.Tx) error {
		month := storage.IntervalMonth
		plan, err := storage.CreateProduct(ctx, tx, w.org.ID, storage.ProductWrite{Name: "Plan", Visibility: "public",
			RecurringInterval: &month, RecurringIntervalCount: ptr(1)})
		if err != nil {
			return err
		}
		ebook, err := storage.CreateProduct(ctx, tx, w.org.ID, storage.ProductWrite{Name: "Ebook", Visibility: "public"})
		if err != nil {
			return err
		}
		w.plan, w.ebook = plan.ID, ebook.ID
		if w.ann1, err = seedPurchase(ctx, tx, w.org.ID, w.ann.ID, w.plan, commerceBase); err != nil {
			return err
		}
		if w.ann2, err = seedPurchase(ctx, tx, w.org.ID, w.ann.ID, w.plan, commerceBase.Add(time.Hour)); err != nil {
			return err
		}
		if w.bob1, err = seedPurchase(ctx, tx, w.org.ID, w.bob.ID, w.plan, commerceBase.Add(2*time.Hour)); err != nil {
			return err
		}
		open, err := storage.CreateCheckout(ctx, tx, storage.CheckoutWrite{OrganizationID: w.org.ID,
			ClientSecret: "till_c_open_" + uuid.NewString(), ExpiresAt: time.Now().Add(time.Hour),
			CheckoutUpdate: storage.CheckoutUpdate{SuccessURL: storage.Set("https://example.com"), ProductID: storage.Set(w.ebook),
				CustomerID: storage.Set(&w.ann.ID)}}, []uuid.UUID{w.ebook}, time.Now())
		if err != nil {
			return err
		}
		w.annOpen = open.ID
		o, err := storage.InsertOrder(ctx, tx, w.org.ID, commerceBase.Add(3*time.Hour), storage.OrderWrite{CustomerID: w.ann.ID,
			ProductID: &w.ebook, Status: "paid", BillingReason: "purchase", Currency: "usd"})
		if err != nil {
			return err
		}
		w.ebookBuy = o.ID

		foreignProduct, err := storage.CreateProduct(ctx, tx, other.ID, storage.ProductWrite{Name: "Foreign plan",
			Visibility: "public", RecurringInterval: &month, RecurringIntervalCount: ptr(1)})
		if err != nil {
			return err
		}
		foreign, err := seedPurchase(ctx, tx, other.ID, stranger.ID, foreignProduct.ID, commerceBase.Add(-time.Hour))
		if err != nil {
			return err
		}
		forged := []struct {
			query string
			args  []any
		}{
			{`UPDATE subscriptions SET customer_id = $2, product_id = $3 WHERE id = $1`,
				[]any{foreign.subscription, w.ann.ID, w.plan}},
			{`UPDATE checkouts SET customer_id = $2, product_id = $3, subscription_id = $4 WHERE id = $1`,
				[]any{foreign.checkout, w.ann.ID, w.plan, w.ann1.subscription}},
			{`UPDATE orders SET customer_id = $2, product_id = $3, subscription_id = $4, checkout_id = $5 WHERE id = $1`,
				[]any{foreign.order, w.ann.ID, w.plan, w.ann1.subscription, w.ann1.checkout}},
		}
		for _, f := range forged {
			if _, err := tx.ExecContext(ctx, f.query, f.args...); err != nil {
				return fmt.Errorf("%s: %w", f.query, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("seeding: %v", err)
	}
	return w
}

// pageIDs reads the ids of a page at path in a response, in page order; nil when the page
// is null.
func pageIDs(t *testing.T, data json.RawMessage, path ...string) []uuid.UUID {
	t.Helper()
	var v any
	mustUnmarshal(t, data, &v)
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("no %q in %s", k, data)
		}
		v = m[k]
	}
	if v == nil {
		return nil
	}
	out := []uuid.UUID{}
	for _, it := range v.([]any) {
		out = append(out, uuid.MustParse(it.(map[string]any)["id"].(string)))
	}
	return out
}

func TestCommerceRelationsReachTheirRows(t *testing.T) {
	t.Parallel()
	w := newCommerceWorld(t)
	tests := []struct {
		name  string
		query string
		v     vars
		path  []string
		want  []uuid.UUID
	}{
		{"a customer's subscriptions are its own, newest started first, never another organization's",
			`query($id: UUID!) { customer(id: $id) { subscriptions { items { id } } } }`, vars{"id": w.ann.ID},
			[]string{"customer", "subscriptions", "items"}, []uuid.UUID{w.ann2.subscription, w.ann1.subscription}},
		{"a customer's subscriptions take the root list's sorting",
			`query($id: UUID!) { customer(id: $id) { subscriptions(sorting: ["started_at"]) { items { id } } } }`, vars{"id": w.ann.ID},
			[]string{"customer", "subscriptions", "items"}, []uuid.UUID{w.ann1.subscription, w.ann2.subscription}},
		{"a customer's subscriptions take the root list's filter",
			`query($id: UUID!, $after: DateTime) { customer(id: $id) { subscriptions(filter: {startedAfter: $after}) { items { id } } } }`,
			vars{"id": w.ann.ID, "after": commerceBase.Add(time.Minute)},
			[]string{"customer", "subscriptions", "items"}, []uuid.UUID{w.ann2.subscription}},
		{"a customer's checkouts are its own, never another organization's",
			`query($id: UUID!) { customer(id: $id) { checkouts(sorting: ["created_at"]) { items { id } } } }`, vars{"id": w.ann.ID},
			[]string{"customer", "checkouts", "items"}, []uuid.UUID{w.ann1.checkout, w.ann2.checkout, w.annOpen}},
		{"a customer's checkouts filter by their status as of now",
			`query($id: UUID!) { customer(id: $id) { checkouts(filter: {status: [open]}) { items { id } } } }`, vars{"id": w.ann.ID},
			[]string{"customer", "checkouts", "items"}, []uuid.UUID{w.annOpen}},
		{"a subscription's orders are the ones it billed, never another organization's",
			`query($id: UUID!) { subscription(id: $id) { orders { items { id } } } }`, vars{"id": w.ann1.subscription},
			[]string{"subscription", "orders", "items"}, []uuid.UUID{w.ann1.order}},
		{"a product's orders are every customer's, newest first",
			`query($id: UUID!) { product(id: $id) { orders { items { id } } } }`, vars{"id": w.plan},
			[]string{"product", "orders", "items"}, []uuid.UUID{w.bob1.order, w.ann2.order, w.ann1.order}},
		{"a product's orders take the root list's filter",
			`query($id: UUID!, $c: [UUID!]) { product(id: $id) { orders(filter: {customerId: $c}) { items { id } } } }`,
			vars{"id": w.plan, "c": []uuid.UUID{w.bob.ID}}, []string{"product", "orders", "items"}, []uuid.UUID{w.bob1.order}},
		{"a product's subscriptions are every customer's",
			`query($id: UUID!) { product(id: $id) { subscriptions(sorting: ["customer", "-started_at"]) { items { id } } } }`,
			vars{"id": w.plan}, []string{"product", "subscriptions", "items"},
			[]uuid.UUID{w.ann2.subscription, w.ann1.subscription, w.bob1.subscription}},
		{"a product nobody subscribed to has no subscriptions",
			`query($id: UUID!) { product(id: $id) { subscriptions { items { id } } } }`, vars{"id": w.ebook},
			[]string{"product", "subscriptions", "items"}, []uuid.UUID{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := w.s.Do(t, w.org.Token, tt.query, tt.v)
			if len(res.Errors) > 0 {
				t.Fatalf("errors: %s", res.Body)
			}
			if diff := cmp.Diff(tt.want, pageIDs(t, res.Data, tt.path...)); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("an order and its checkout point at each other, with the checkout's subscription and customer", func(t *testing.T) {
		var out struct {
			Order struct {
				Checkout struct {
					ID           uuid.UUID
					Order        struct{ ID uuid.UUID }
					Subscription struct{ ID uuid.UUID }
					Customer     struct{ ID uuid.UUID }
				}
			}
		}
		w.s.Query(t, w.org.Token, `query($id: UUID!) { order(id: $id) { checkout { id order { id }
			subscription { id } customer { id } } } }`, vars{"id": w.ann1.order}, &out)
		c := out.Order.Checkout
		if c.ID != w.ann1.checkout || c.Order.ID != w.ann1.order || c.Subscription.ID != w.ann1.subscription || c.Customer.ID != w.ann.ID {
			t.Errorf("checkout %+v, want %v with order %v, subscription %v, customer %v", c, w.ann1.checkout,
				w.ann1.order, w.ann1.subscription, w.ann.ID)
		}
	})
	t.Run("what a checkout or order lacks is null, not an error", func(t *testing.T) {
		res := w.s.Do(t, w.org.Token, `query($k: UUID!, $o: UUID!) { checkout(id: $k) { order { id } subscription { id } }
			order(id: $o) { checkout { id } isReceiptGenerated } }`, vars{"k": w.annOpen, "o": w.ebookBuy})
		want := `{"checkout":{"order":null,"subscription":null},"order":{"checkout":null,"isReceiptGenerated":false}}`
		if len(res.Errors) > 0 || string(res.Data) != want {
			t.Errorf("got %s, want data %s", res.Body, want)
		}
	})
	t.Run("an order tells whether its receipt is rendered", func(t *testing.T) {
		w.s.Exec(t, `UPDATE orders SET receipt_path = 'receipts/x.pdf' WHERE id = $1`, w.ann1.order)
		var out struct {
			Order struct{ IsReceiptGenerated bool }
		}
		w.s.Query(t, w.org.Token, `query($id: UUID!) { order(id: $id) { isReceiptGenerated } }`, vars{"id": w.ann1.order}, &out)
		if !out.Order.IsReceiptGenerated {
			t.Error("isReceiptGenerated = false for an order with a rendered receipt")
		}
	})
	t.Run("nested subscriptions page by cursor per customer", func(t *testing.T) {
		const doc = `query($after: String) { customers(sorting: ["email"]) { items { id
			subscriptions(first: 1, after: $after) { items { id } pagination { totalCount }
				pageInfo { hasNextPage endCursor } } } } }`
		type window struct {
			Items      []struct{ ID uuid.UUID }
			Pagination struct{ TotalCount int }
			PageInfo   struct {
				HasNextPage bool
				EndCursor   *string
			}
		}
		var first struct {
			Customers struct {
				Items []struct {
					ID            uuid.UUID
					Subscriptions window
				}
			}
		}
		w.s.Query(t, w.org.Token, doc, nil, &first)
		ann, bob := first.Customers.Items[0].Subscriptions, first.Customers.Items[1].Subscriptions
		if len(ann.Items) != 1 || ann.Items[0].ID != w.ann2.subscription || !ann.PageInfo.HasNextPage || ann.Pagination.TotalCount != 2 {
			t.Fatalf("ann's first window %+v", ann)
		}
		if len(bob.Items) != 1 || bob.Items[0].ID != w.bob1.subscription || bob.PageInfo.HasNextPage || bob.Pagination.TotalCount != 1 {
			t.Fatalf("bob's first window %+v", bob)
		}
		var next struct {
			Customer struct{ Subscriptions window }
		}
		w.s.Query(t, w.org.Token, `query($id: UUID!, $after: String) { customer(id: $id) {
			subscriptions(first: 1, after: $after) { items { id } pagination { totalCount } pageInfo { hasNextPage endCursor } } } }`,
			vars{"id": w.ann.ID, "after": ann.PageInfo.EndCursor}, &next)
		got := next.Customer.Subscriptions
		if len(got.Items) != 1 || got.Items[0].ID != w.ann1.subscription || got.PageInfo.HasNextPage || got.Pagination.TotalCount != 2 {
			t.Errorf("ann's window after the cursor %+v", got)
		}
	})
	t.Run("a token without the related scope cannot follow the relation", func(t *testing.T) {
		tok := w.s.NewToken(t, w.org.ID, "customers:read orders:read")
		res := w.s.Do(t, tok, `query($id: UUID!) { customer(id: $id) { id orders { pagination { totalCount } }
			subscriptions { items { id } } checkouts { items { id } } } }`, vars{"id": w.ann.ID})
		requireRefused(t, res, "customer.subscriptions", "customer.checkouts")
		var out struct {
			Customer struct {
				Orders struct{ Pagination struct{ TotalCount int } }
			}
		}
		mustUnmarshal(t, res.Data, &out)
		if out.Customer.Orders.Pagination.TotalCount != 3 {
			t.Errorf("the allowed relation did not survive: %s", res.Data)
		}
	})
	t.Run("nested lists refuse a window above 100", func(t *testing.T) {
		res := w.s.Do(t, w.org.Token, `query($id: UUID!) { product(id: $id) { orders(first: 101) { items { id } } } }`,
			vars{"id": w.plan})
		if len(res.Errors) == 0 || res.Errors[0].Extensions.Code != "BAD_USER_INPUT" {
			t.Errorf("want the client's error, got %s", res.Body)
		}
	})
}
