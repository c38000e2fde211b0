package resolvers_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/storage"
)

// orderFixture is an organization with a customer, a one-time and a recurring product, and
// a way to create orders through the createOrder contract the purchase flow uses.
type orderFixture struct {
	s         *resolverstest.Server
	org       resolverstest.Org
	customer  customer
	oneTime   product
	recurring product
}

func newOrderFixture(t *testing.T) orderFixture {
	t.Helper()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	return orderFixture{s: s, org: org, customer: s.NewCustomer(t, org.ID, ""),
		oneTime: s.NewProduct(t, org.ID, "Ebook"),
		recurring: createProduct(t, s, org.Token, vars{"name": "Pro plan", "recurringInterval": "month",
			"prices": []vars{{"amountType": "fixed", "priceAmount": 2000}}})}
}

// spec is a pending purchase of the one-time product: two lines of 1000 and 500 with 150 tax.
func (f orderFixture) spec() resolvers.OrderSpec {
	return resolvers.OrderSpec{OrganizationID: f.org.ID, CustomerID: f.customer.ID, ProductID: &f.oneTime.ID,
		BillingReason: "purchase", Status: "pending", Currency: "usd", TaxAmount: 150,
		Items: []resolvers.OrderItemSpec{
			{Label: "Ebook", Amount: 1000, TaxAmount: 100, ProductPriceID: &f.oneTime.Prices[0].ID},
			{Label: "Extra chapter", Amount: 500, TaxAmount: 50},
		}}
}

// create runs createOrder with spec and fails the test if it fails.
func (f orderFixture) create(t *testing.T, spec resolvers.OrderSpec) *storage.Order {
	t.Helper()
	o, err := f.s.Resolver.CreateOrderForTest(context.Background(), spec)
	if err != nil {
		t.Fatalf("createOrder: %v", err)
	}
	return o
}

// events lists the types of the domain events recorded for an object, oldest first.
func (f orderFixture) events(t *testing.T, objectID uuid.UUID) []string {
	t.Helper()
	var types []string
	if err := f.s.DB.Select(&types, `SELECT type FROM domain_events WHERE object_id = $1 ORDER BY created_at`, objectID); err != nil {
		t.Fatal(err)
	}
	return types
}

// orderFields selects what the tests compare on an order.
const orderFields = `id status paid subtotalAmount discountAmount netAmount taxAmount totalAmount dueAmount
	appliedBalanceAmount refundedAmount currency billingReason billingName
	billingAddress { line1 line2 postalCode city state country } invoiceNumber isInvoiceGenerated receiptNumber
	refundableAmount refundableTaxAmount customerId productId subscriptionId discountId nextPaymentAttemptAt
	metadata customFieldData
	items { label amount taxAmount proration productPriceId }
	customer { id email } product { id name } subscription { id status }
	discount { id name type duration
		... on DiscountFixedOnceForeverDurationBase { amount currency amounts }
		... on DiscountFixedRepeatDurationBase { durationInMonths amount currency amounts }
		... on DiscountPercentageOnceForeverDurationBase { basisPoints }
		... on DiscountPercentageRepeatDurationBase { durationInMonths basisPoints } }`

// gqlOrder is the JSON shape of orderFields.
type gqlOrder struct {
	ID                   uuid.UUID      `json:"id"`
	Status               string         `json:"status"`
	Paid                 bool           `json:"paid"`
	SubtotalAmount       int64          `json:"subtotalAmount"`
	DiscountAmount       int64          `json:"discountAmount"`
	NetAmount            int64          `json:"netAmount"`
	TaxAmount            int64          `json:"taxAmount"`
	TotalAmount          int64          `json:"totalAmount"`
	DueAmount            int64          `json:"dueAmount"`
	AppliedBalanceAmount int64          `json:"appliedBalanceAmount"`
	RefundedAmount       int64          `json:"refundedAmount"`
	Currency             string         `json:"currency"`
	BillingReason        string         `json:"billingReason"`
	BillingName          *string        `json:"billingName"`
	BillingAddress       *address       `json:"billingAddress"`
	InvoiceNumber        *string        `json:"invoiceNumber"`
	IsInvoiceGenerated   bool           `json:"isInvoiceGenerated"`
	ReceiptNumber        *string        `json:"receiptNumber"`
	RefundableAmount     int64          `json:"refundableAmount"`
	RefundableTaxAmount  int64          `json:"refundableTaxAmount"`
	CustomerID           uuid.UUID      `json:"customerId"`
	ProductID            *uuid.UUID     `json:"productId"`
	SubscriptionID       *uuid.UUID     `json:"subscriptionId"`
	DiscountID           *uuid.UUID     `json:"discountId"`
	NextPaymentAttemptAt *string        `json:"nextPaymentAttemptAt"`
	Metadata             map[string]any `json:"metadata"`
	CustomFieldData      map[string]any `json:"customFieldData"`
	Items                []struct {
		Label          string     `json:"label"`
		Amount         int64      `json:"amount"`
		TaxAmount      int64      `json:"taxAmount"`
		Proration      bool       `json:"proration"`
		ProductPriceID *uuid.UUID `json:"productPriceId"`
	} `json:"items"`
	Customer     struct{ ID uuid.UUID }   `json:"customer"`
	Product      *struct{ ID uuid.UUID }  `json:"product"`
	Subscription *struct{ Status string } `json:"subscription"`
	Discount     map[string]any           `json:"discount"`
}

// get reads an order through GraphQL with token.
func (f orderFixture) get(t *testing.T, token string, id uuid.UUID) gqlOrder {
	t.Helper()
	var out struct{ Order gqlOrder }
	f.s.Query(t, token, `query($id: UUID!) { order(id: $id) { `+orderFields+` } }`, vars{"id": id}, &out)
	return out.Order
}

func TestCreateOrder(t *testing.T) {
	t.Parallel()
	f := newOrderFixture(t)

	t.Run("amounts come from the items, the discount and the tax", func(t *testing.T) {
		spec := f.spec()
		spec.DiscountAmount = 300
		spec.BillingName, spec.Seats, spec.Description = ptr("Ada Ltd"), ptr(3), "Ebook and extra"
		spec.Metadata, spec.CustomFieldData = storage.JSONMap{"ref": "a1"}, storage.JSONMap{"company": "Ada"}
		o := f.create(t, spec)
		got := f.get(t, f.org.Token, o.ID)
		if got.SubtotalAmount != 1500 || got.DiscountAmount != 300 || got.NetAmount != 1200 || got.TaxAmount != 150 ||
			got.TotalAmount != 1350 || got.DueAmount != 1350 || got.AppliedBalanceAmount != 0 {
			t.Errorf("amounts: subtotal %d discount %d net %d tax %d total %d due %d", got.SubtotalAmount,
				got.DiscountAmount, got.NetAmount, got.TaxAmount, got.TotalAmount, got.DueAmount)
		}
		if got.Status != "pending" || got.Paid || got.IsInvoiceGenerated || got.ReceiptNumber != nil {
			t.Errorf("a pending order: status %s, paid %v, invoice generated %v, receipt %v", got.Status, got.Paid,
				got.IsInvoiceGenerated, got.ReceiptNumber)
		}
		if got.RefundableAmount != 1200 || got.RefundableTaxAmount != 150 {
			t.Errorf("refundable %d, tax %d; want 1200 and 150", got.RefundableAmount, got.RefundableTaxAmount)
		}
		if len(got.Items) != 2 || got.Items[0].Label != "Ebook" || got.Items[1].Label != "Extra chapter" ||
			got.Items[0].ProductPriceID == nil || *got.Items[0].ProductPriceID != f.oneTime.Prices[0].ID ||
			got.Items[1].ProductPriceID != nil || got.Items[1].TaxAmount != 50 {
			t.Errorf("items = %+v", got.Items)
		}
		if got.Customer.ID != f.customer.ID || got.Product == nil || got.Product.ID != f.oneTime.ID ||
			got.Subscription != nil || got.Discount != nil {
			t.Errorf("relations: customer %v product %v subscription %v discount %v", got.Customer, got.Product,
				got.Subscription, got.Discount)
		}
		if got.Metadata["ref"] != "a1" || got.CustomFieldData["company"] != "Ada" || *got.BillingName != "Ada Ltd" {
			t.Errorf("metadata %v, custom fields %v, billing name %v", got.Metadata, got.CustomFieldData, got.BillingName)
		}
		if diff := cmp.Diff([]string{"order.created"}, f.events(t, o.ID)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})

	t.Run("invoice numbers follow the organization's sequence and slug", func(t *testing.T) {
		s := resolverstest.New(t)
		org := s.NewOrg(t, resolverstest.AllScopes)
		g := orderFixture{s: s, org: org, customer: s.NewCustomer(t, org.ID, ""), oneTime: s.NewProduct(t, org.ID, "Ebook")}
		upper := strings.ToUpper(org.Slug)
		var got []string
		for range 3 {
			got = append(got, *g.create(t, g.spec()).InvoiceNumber)
		}
		s.Exec(t, `UPDATE order_numbers SET invoice_last = 12344 WHERE organization_id = $1`, org.ID)
		got = append(got, *g.create(t, g.spec()).InvoiceNumber)
		want := []string{upper + "-0001", upper + "-0002", upper + "-0003", upper + "-12345"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("invoice numbers (-want +got):\n%s", diff)
		}
	})

	t.Run("an order created paid gets a receipt number and order.paid", func(t *testing.T) {
		spec := f.spec()
		spec.Status = "paid"
		o := f.create(t, spec)
		got := f.get(t, f.org.Token, o.ID)
		if !got.Paid || got.ReceiptNumber == nil || !strings.HasPrefix(*got.ReceiptNumber, "RCPT-"+strings.ToUpper(f.org.Slug)+"-") {
			t.Errorf("paid %v, receipt number %v", got.Paid, got.ReceiptNumber)
		}
		if diff := cmp.Diff([]string{"order.created", "order.paid"}, f.events(t, o.ID)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})

	t.Run("an order without items or product is allowed and totals zero", func(t *testing.T) {
		spec := f.spec()
		spec.Items, spec.ProductID, spec.TaxAmount = nil, nil, 0
		got := f.get(t, f.org.Token, f.create(t, spec).ID)
		if got.TotalAmount != 0 || len(got.Items) != 0 || got.Product != nil || got.ProductID != nil {
			t.Errorf("got %+v", got)
		}
	})

	other := f.s.NewOrg(t, resolverstest.AllScopes)
	stranger := f.s.NewCustomer(t, other.ID, "")
	strangersProduct := f.s.NewProduct(t, other.ID, "Other ebook")
	for _, tc := range []struct {
		name   string
		mutate func(*resolvers.OrderSpec)
	}{
		{"a draft status is refused", func(s *resolvers.OrderSpec) { s.Status = "draft" }},
		{"an unknown billing reason is refused", func(s *resolvers.OrderSpec) { s.BillingReason = "gift" }},
		{"a discount above the subtotal is refused", func(s *resolvers.OrderSpec) { s.DiscountAmount = 1501 }},
		{"a missing currency is refused", func(s *resolvers.OrderSpec) { s.Currency = "" }},
		{"an unknown organization is refused", func(s *resolvers.OrderSpec) { s.OrganizationID = uuid.New() }},
		{"a customer of another organization is refused", func(s *resolvers.OrderSpec) { s.CustomerID = stranger.ID }},
		{"a product of another organization is refused", func(s *resolvers.OrderSpec) { s.ProductID = &strangersProduct.ID }},
	} {
		t.Run(tc.name+" and nothing is written", func(t *testing.T) {
			var before int
			f.s.Get(t, &before, `SELECT count(*) FROM orders WHERE organization_id = $1`, f.org.ID)
			spec := f.spec()
			tc.mutate(&spec)
			if _, err := f.s.Resolver.CreateOrderForTest(context.Background(), spec); err == nil {
				t.Fatal("createOrder succeeded")
			}
			var after int
			f.s.Get(t, &after, `SELECT count(*) FROM orders WHERE organization_id = $1`, f.org.ID)
			if after != before {
				t.Errorf("orders went from %d to %d", before, after)
			}
			var next int
			f.s.Get(t, &next, `SELECT coalesce(max(invoice_last), 0) + 1 FROM order_numbers WHERE organization_id = $1`, f.org.ID)
			if next != after+1 {
				t.Errorf("next invoice number %d after %d orders: a refused order took a number", next, after)
			}
		})
	}
}

// TestOrderNumbersAreRaceFree creates 50 orders of one organization at once: each gets its
// own invoice number and together they are exactly 0001..0050, because each transaction
// draws its numbers under the organization's row lock as it commits.
func TestOrderNumbersAreRaceFree(t *testing.T) {
	t.Parallel()
	f := newOrderFixture(t)
	const n = 50
	numbers := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			spec := f.spec()
			spec.Status = []storage.OrderStatus{storage.OrderStatusPending, storage.OrderStatusPaid}[i%2]
			o, err := f.s.Resolver.CreateOrderForTest(context.Background(), spec)
			if errs[i] = err; err == nil {
				numbers[i] = *o.InvoiceNumber
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("createOrder: %v", err)
		}
	}
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("%s-%04d", strings.ToUpper(f.org.Slug), i+1)
	}
	slices.Sort(numbers)
	if diff := cmp.Diff(want, numbers); diff != "" {
		t.Errorf("invoice numbers (-want +got):\n%s", diff)
	}
	var receipts []string
	if err := f.s.DB.Select(&receipts, `SELECT receipt_number FROM orders WHERE organization_id = $1 AND receipt_number IS NOT NULL
		ORDER BY receipt_number`, f.org.ID); err != nil {
		t.Fatal(err)
	}
	wantReceipts := make([]string, n/2)
	for i := range wantReceipts {
		wantReceipts[i] = fmt.Sprintf("RCPT-%s-%04d", strings.ToUpper(f.org.Slug), i+1)
	}
	if diff := cmp.Diff(wantReceipts, receipts); diff != "" {
		t.Errorf("receipt numbers of the paid half (-want +got):\n%s", diff)
	}
}

func TestMarkOrderPaid(t *testing.T) {
	t.Parallel()
	f := newOrderFixture(t)
	ctx := context.Background()

	t.Run("a pending order becomes paid once, with one receipt number, even when raced", func(t *testing.T) {
		o := f.create(t, f.spec())
		next := time.Now().Add(48 * time.Hour)
		if err := f.s.Resolver.ScheduleOrderPaymentForTest(ctx, o.ID, &next); err != nil {
			t.Fatal(err)
		}
		const n = 10
		receipts := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				paid, err := f.s.Resolver.MarkOrderPaidForTest(ctx, o.ID)
				if err != nil {
					t.Errorf("markOrderPaid: %v", err)
					return
				}
				receipts[i] = *paid.ReceiptNumber
			})
		}
		wg.Wait()
		for _, r := range receipts {
			if r != receipts[0] {
				t.Fatalf("receipt numbers differ: %v", receipts)
			}
		}
		got := f.get(t, f.org.Token, o.ID)
		if got.Status != "paid" || !got.Paid || got.ReceiptNumber == nil || *got.ReceiptNumber != receipts[0] ||
			got.NextPaymentAttemptAt != nil {
			t.Errorf("status %s paid %v receipt %v next attempt %v", got.Status, got.Paid, got.ReceiptNumber, got.NextPaymentAttemptAt)
		}
		want := []string{"order.created", "order.updated", "order.updated", "order.paid"}
		if diff := cmp.Diff(want, f.events(t, o.ID)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})

	t.Run("paying takes the next receipt number of the organization", func(t *testing.T) {
		spec := f.spec()
		spec.Status = "paid"
		first := f.create(t, spec)
		second, err := f.s.Resolver.MarkOrderPaidForTest(ctx, f.create(t, f.spec()).ID)
		if err != nil {
			t.Fatal(err)
		}
		var n1, n2 int
		fmt.Sscanf((*first.ReceiptNumber)[len(*first.ReceiptNumber)-4:], "%d", &n1)
		fmt.Sscanf((*second.ReceiptNumber)[len(*second.ReceiptNumber)-4:], "%d", &n2)
		if n2 != n1+1 {
			t.Errorf("receipt numbers %s then %s, want consecutive", *first.ReceiptNumber, *second.ReceiptNumber)
		}
	})

	t.Run("a void order cannot be paid", func(t *testing.T) {
		o := f.create(t, f.spec())
		f.s.Exec(t, `UPDATE orders SET status = 'void' WHERE id = $1`, o.ID)
		if _, err := f.s.Resolver.MarkOrderPaidForTest(ctx, o.ID); err == nil {
			t.Fatal("a void order was paid")
		}
	})
}

func TestScheduleOrderPayment(t *testing.T) {
	t.Parallel()
	f := newOrderFixture(t)
	ctx := context.Background()
	o := f.create(t, f.spec())
	next := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)

	t.Run("the next attempt is recorded with order.updated", func(t *testing.T) {
		if err := f.s.Resolver.ScheduleOrderPaymentForTest(ctx, o.ID, &next); err != nil {
			t.Fatal(err)
		}
		if got := f.get(t, f.org.Token, o.ID); got.NextPaymentAttemptAt == nil || *got.NextPaymentAttemptAt != "2031-01-02T03:04:05Z" {
			t.Errorf("nextPaymentAttemptAt = %v", got.NextPaymentAttemptAt)
		}
		if diff := cmp.Diff([]string{"order.created", "order.updated"}, f.events(t, o.ID)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})
	t.Run("nil means no more retries", func(t *testing.T) {
		if err := f.s.Resolver.ScheduleOrderPaymentForTest(ctx, o.ID, nil); err != nil {
			t.Fatal(err)
		}
		if got := f.get(t, f.org.Token, o.ID); got.NextPaymentAttemptAt != nil {
			t.Errorf("nextPaymentAttemptAt = %v", *got.NextPaymentAttemptAt)
		}
	})
	t.Run("a paid order has nothing to retry", func(t *testing.T) {
		if _, err := f.s.Resolver.MarkOrderPaidForTest(ctx, o.ID); err != nil {
			t.Fatal(err)
		}
		if err := f.s.Resolver.ScheduleOrderPaymentForTest(ctx, o.ID, &next); err == nil {
			t.Error("a paid order got a payment retry")
		}
	})
}
