package resolvers_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/resolvers/resolverstest"
	"till/storage"
)

// orderPageSeed is a customer with every relation an order can have: a subscription to a
// plan, bought with a discount, its order with two lines, and two orders without them.
type orderPageSeed struct {
	customer, plan, ebook, subscription uuid.UUID
	full, ebookOrder, bare              uuid.UUID
}

// seedOrderPage stores an orderPageSeed in the organization, its orders an hour apart (the
// full one newest), and every optional field of the customer set.
func seedOrderPage(tb testing.TB, db *sqlx.DB, orgID uuid.UUID) orderPageSeed {
	tb.Helper()
	ctx := context.Background()
	var s orderPageSeed
	start := time.Now().Add(-3 * time.Hour).UTC()
	err := storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
		address := &storage.Address{Line1: ptr("1 Main St"), PostalCode: ptr("10115"), City: ptr("Berlin"), Country: "DE"}
		c, err := storage.CreateCustomer(ctx, tx, orgID, storage.CustomerWrite{ExternalID: ptr("ann-1"),
			Email: ptr("ann@example.com"), Name: ptr(`Ann "Q" Ünal`), BillingName: ptr("Ann Ltd"), BillingAddress: address,
			TaxID: ptr("DE123456789"), TaxIDFormat: ptr("eu_vat"), Locale: ptr("de"), Metadata: storage.JSONMap{"tier": "gold", "n": 2}})
		if err != nil {
			return err
		}
		plan, err := storage.CreateProduct(ctx, tx, orgID, storage.ProductWrite{Name: "Pro plan", Description: ptr("Everything"),
			Visibility: "public", RecurringInterval: ptr(storage.IntervalMonth), RecurringIntervalCount: ptr(1), Metadata: storage.JSONMap{"k": "v"}})
		if err != nil {
			return err
		}
		price, err := storage.CreatePrice(ctx, tx, orgID, plan.ID, storage.ProductPriceWrite{AmountType: "fixed",
			PriceCurrency: "usd", PriceAmount: ptr(int64(2000))})
		if err != nil {
			return err
		}
		ebook, err := storage.CreateProduct(ctx, tx, orgID, storage.ProductWrite{Name: "Ebook", Visibility: "public"})
		if err != nil {
			return err
		}
		d, err := storage.CreateDiscount(ctx, tx, orgID, storage.DiscountWrite{Name: "Launch", Type: "percentage",
			BasisPoints: ptr(1000), Duration: "once", Code: ptr("LAUNCH"), MaxRedemptions: ptr(50), Metadata: storage.JSONMap{}})
		if err != nil {
			return err
		}
		sub, err := storage.CreateSubscription(ctx, tx, orgID, start, storage.SubscriptionWrite{CustomerID: c.ID,
			ProductID: plan.ID, DiscountID: &d.ID, Status: "active", Amount: 1800, Currency: "usd", RecurringInterval: "month",
			RecurringIntervalCount: 1, CurrentPeriodStart: start, CurrentPeriodEnd: start.AddDate(0, 1, 0), StartedAt: &start,
			Metadata: storage.JSONMap{"src": "test"}})
		if err != nil {
			return err
		}
		s = orderPageSeed{customer: c.ID, plan: plan.ID, ebook: ebook.ID, subscription: sub.ID}
		orders := []struct {
			id    *uuid.UUID
			w     storage.OrderWrite
			items []storage.OrderItemWrite
		}{
			{&s.bare, storage.OrderWrite{Status: "pending", BillingReason: "purchase"}, nil},
			{&s.ebookOrder, storage.OrderWrite{ProductID: &ebook.ID, Status: "paid", BillingReason: "purchase",
				SubtotalAmount: 900, NetAmount: 900, TotalAmount: 900}, []storage.OrderItemWrite{{Label: "Ebook", Amount: 900}}},
			{&s.full, storage.OrderWrite{ProductID: &plan.ID, DiscountID: &d.ID, SubscriptionID: &sub.ID, Status: "paid",
				BillingReason: "subscription_create", BillingName: ptr("Ann Ltd"), SubtotalAmount: 2000, DiscountAmount: 200,
				NetAmount: 1800, TaxAmount: 180, TotalAmount: 1980, Metadata: storage.JSONMap{"ref": "A-1"}},
				[]storage.OrderItemWrite{{Label: "Pro plan", Amount: 2000, TaxAmount: 180, ProductPriceID: &price.ID},
					{Label: "Proration", Amount: 0, Proration: true}}},
		}
		for i, o := range orders {
			o.w.CustomerID, o.w.Currency = c.ID, "usd"
			if o.w.Metadata == nil {
				o.w.Metadata = storage.JSONMap{}
			}
			o.w.CustomFieldData = storage.JSONMap{}
			row, err := storage.InsertOrder(ctx, tx, orgID, start.Add(time.Duration(i)*time.Hour), o.w)
			if err != nil {
				return err
			}
			*o.id = row.ID
			if len(o.items) > 0 {
				if _, err := storage.InsertOrderItems(ctx, tx, orgID, row, o.items); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("seeding the order page: %v", err)
	}
	return s
}

// orderPageFields is what an order page shows of an order: the bench's order page (and
// GET /v1/orders/{id}), every relation with every field.
const orderPageFields = `id createdAt modifiedAt status paid subtotalAmount discountAmount netAmount taxAmount totalAmount
	appliedBalanceAmount dueAmount refundedAmount refundedTaxAmount currency billingReason billingName
	billingAddress { line1 line2 postalCode city state country } invoiceNumber isInvoiceGenerated
	receiptNumber seats customerId productId discountId subscriptionId checkoutId nextPaymentAttemptAt
	metadata customFieldData platformFeeAmount platformFeeCurrency description refundableAmount refundableTaxAmount
	customer { id createdAt modifiedAt metadata externalId email emailVerified type name billingName
		billingAddress { line1 line2 postalCode city state country } taxId locale organizationId
		defaultPaymentMethodId deletedAt firstUserEventAt avatarUrl }
	product { id createdAt modifiedAt trialInterval trialIntervalCount name description visibility
		recurringInterval recurringIntervalCount meterInterval meterIntervalCount isRecurring isArchived
		organizationId metadata prices { id } }
	discount { __typename
		... on DiscountPercentageOnceForeverDurationBase { id duration type basisPoints createdAt modifiedAt
			metadata name code startsAt endsAt maxRedemptions maxRedemptionsPerCustomer redemptionsCount organizationId } }
	subscription { id createdAt modifiedAt amount currency recurringInterval recurringIntervalCount status
		currentPeriodStart currentPeriodEnd currentMeterPeriodStart currentMeterPeriodEnd trialStart trialEnd
		cancelAtPeriodEnd canceledAt startedAt endsAt endedAt pastDueAt pauseAtPeriodEnd pausedAt resumesAt
		customerId productId discountId checkoutId seats customerCancellationReason customerCancellationComment metadata
		product { name } }
	items { id createdAt modifiedAt label amount taxAmount proration productPriceId }`

// itemsByID reads the items of a page at path (data.a.b.items) by their id.
func itemsByID(t *testing.T, data []byte, path ...string) map[string]json.RawMessage {
	t.Helper()
	v := json.RawMessage(data)
	for _, k := range path {
		var m map[string]json.RawMessage
		mustUnmarshal(t, v, &m)
		v = m[k]
	}
	var items []json.RawMessage
	mustUnmarshal(t, v, &items)
	out := map[string]json.RawMessage{}
	for _, it := range items {
		var id struct{ ID string }
		mustUnmarshal(t, it, &id)
		out[id.ID] = it
	}
	return out
}

// TestPrefetchedRelationsAnswerAsTheirLoaders compares, byte for byte, what a field that reads
// its relations with its own statement answers with what the loaders answer for the same
// selection: the root orders and subscriptions lists read no relation ahead.
func TestPrefetchedRelationsAnswerAsTheirLoaders(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	seed := seedOrderPage(t, s.DB, org.ID)
	session := s.NewCustomerSession(t, org.ID, seed.customer)
	ids := []uuid.UUID{seed.full, seed.ebookOrder, seed.bare}

	for _, c := range []struct {
		name, selection, fragments string
	}{
		{name: "every field and relation", selection: orderPageFields},
		{name: "relations selected through fragments and aliases", selection: `id ...Lines buyer: customer { email }
			... on Order { product { name } }`, fragments: `fragment Lines on Order { items { label } sub: subscription { id } }`},
		{name: "relations skipped or included by directives", selection: `id customer @skip(if: true) { id }
			product @include(if: false) { id } items @include(if: true) { label } discount @skip(if: false) { __typename }`},
	} {
		t.Run("order(id) answers as the orders list for "+c.name, func(t *testing.T) {
			list := s.Do(t, org.Token, `{ orders(limit: 100) { items { `+c.selection+` } } } `+c.fragments, nil)
			if len(list.Errors) > 0 {
				t.Fatalf("list: %s", list.Body)
			}
			listed := itemsByID(t, list.Data, "orders", "items")
			for _, id := range ids {
				one := s.Do(t, org.Token, `query($id: UUID!) { order(id: $id) { `+c.selection+` } } `+c.fragments, vars{"id": id})
				if len(one.Errors) > 0 {
					t.Fatalf("order %s: %s", id, one.Body)
				}
				var got struct{ Order json.RawMessage }
				mustUnmarshal(t, one.Data, &got)
				if string(got.Order) != string(listed[id.String()]) {
					t.Errorf("order(id):\n%s\norders list:\n%s", got.Order, listed[id.String()])
				}
			}
		})
	}

	t.Run("the portal's orders answer as the dashboard's orders list", func(t *testing.T) {
		const sel = `items { id createdAt status customer { id email billingAddress { city } } product { id name metadata prices { id } }
			subscription { id status currentPeriodEnd product { name } } items { id label amount productPriceId } }`
		portal := s.Do(t, session, `{ me { orders(limit: 100) { `+sel+` } } }`, nil)
		dashboard := s.Do(t, org.Token, `query($c: [UUID!]) { orders(limit: 100, filter: {customerId: $c}) { `+sel+` } }`,
			vars{"c": []uuid.UUID{seed.customer}})
		requirePagesEqual(t, portal, dashboard, []string{"me", "orders", "items"}, []string{"orders", "items"}, 3)
	})
	t.Run("the portal's subscriptions answer as the dashboard's subscriptions list", func(t *testing.T) {
		const sel = `items { id status amount product { id name description metadata isRecurring prices { id } } }`
		portal := s.Do(t, session, `{ me { subscriptions(limit: 10) { `+sel+` } } }`, nil)
		dashboard := s.Do(t, org.Token, `query($c: [UUID!]) { subscriptions(limit: 10, filter: {customerId: $c}) { `+sel+` } }`,
			vars{"c": []uuid.UUID{seed.customer}})
		requirePagesEqual(t, portal, dashboard, []string{"me", "subscriptions", "items"}, []string{"subscriptions", "items"}, 1)
	})
}

// requirePagesEqual requires two answers without errors whose items (at the paths) are the
// same n objects, byte for byte.
func requirePagesEqual(t *testing.T, a, b *resolverstest.Response, pathA, pathB []string, n int) {
	t.Helper()
	if len(a.Errors) > 0 || len(b.Errors) > 0 {
		t.Fatalf("errors:\n%s\n%s", a.Body, b.Body)
	}
	ia, ib := itemsByID(t, a.Data, pathA...), itemsByID(t, b.Data, pathB...)
	if len(ia) != n || len(ib) != n {
		t.Fatalf("%d and %d items, want %d:\n%s\n%s", len(ia), len(ib), n, a.Data, b.Data)
	}
	for id, it := range ia {
		if string(it) != string(ib[id]) {
			t.Errorf("%s:\n%s\n%s", strings.Join(pathA, "."), it, ib[id])
		}
	}
}

// TestPrefetchedRelationsKeepTheirGuards checks that reading relations ahead hands out
// nothing a guard refuses: the relation fields still run their @relation guard on the parent,
// and a field refused before its resolver runs reads nothing at all.
func TestPrefetchedRelationsKeepTheirGuards(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	seed := seedOrderPage(t, s.DB, org.ID)

	t.Run("orders:read reads the order's relations, but not the subscription's product it has at hand", func(t *testing.T) {
		res := s.Do(t, s.NewToken(t, org.ID, "orders:read"), `query($id: UUID!) { order(id: $id) { id
			customer { id } product { id } discount { __typename } items { id }
			subscription { id customer { id } product { id } } } }`, vars{"id": seed.full})
		requireRefused(t, res, "order.subscription.customer", "order.subscription.product")
		requireForbidden(t, res)
		var out struct {
			Order struct {
				Customer, Product struct{ ID uuid.UUID }
				Subscription      struct{ ID uuid.UUID }
				Items             []struct{ ID uuid.UUID }
			}
		}
		mustUnmarshal(t, res.Data, &out)
		o := out.Order
		if o.Customer.ID != seed.customer || o.Product.ID != seed.plan || o.Subscription.ID != seed.subscription || len(o.Items) != 2 {
			t.Errorf("order %+v", o)
		}
	})
	t.Run("a token without orders:read reads no order", func(t *testing.T) {
		res := s.Do(t, s.NewToken(t, org.ID, "customers:read products:read"), `query($id: UUID!) {
			order(id: $id) { id customer { id } product { id } } }`, vars{"id": seed.full})
		requireRefused(t, res, "order")
		requireForbidden(t, res)
	})
	t.Run("a member without the billing role reads its customer but not its orders", func(t *testing.T) {
		var memberID uuid.UUID
		s.Get(t, &memberID, `INSERT INTO members (organization_id, customer_id, email, role)
			VALUES ($1, $2, 'dev@example.com', 'member') RETURNING id`, org.ID, seed.customer)
		token := s.NewMemberSession(t, org.ID, seed.customer, memberID)
		res := s.Do(t, token, `{ me { customer { id } orders { items { id product { name } } } } }`, nil)
		requireRefused(t, res, "me.orders")
		requireForbidden(t, res)
		var out struct {
			Me struct{ Customer struct{ ID uuid.UUID } }
		}
		mustUnmarshal(t, res.Data, &out)
		if out.Me.Customer.ID != seed.customer {
			t.Errorf("me.customer %s, want %s", out.Me.Customer.ID, seed.customer)
		}
	})
}

// requireForbidden requires every error of res to be a refusal (FORBIDDEN).
func requireForbidden(t *testing.T, res *resolverstest.Response) {
	t.Helper()
	for _, e := range res.Errors {
		if e.Extensions.Code != "FORBIDDEN" {
			t.Errorf("error %q at %v has code %s, want FORBIDDEN", e.Message, e.Path, e.Extensions.Code)
		}
	}
}
