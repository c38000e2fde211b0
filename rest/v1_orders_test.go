package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"till/resolvers/resolverstest"
	"till/rest/fastapi/fastapitest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/rest/resttest"
	"till/storage"
)

// orderWorld is an organization with customers, products, a subscription, a discount and
// three orders (a oldest, c newest) made so that every filter and sort of GET /v1/orders/
// tells them apart. Orders are written through storage, as the purchase flow would.
type orderWorld struct {
	s            *v1
	org          org
	alice, bob   resolverstest.Customer // bob has external id ext-bob
	ebook, plan  *storage.Product       // one-time, recurring
	ebookPrice   *storage.ProductPrice
	subscription *storage.Subscription
	discount     *storage.Discount
	a, b, c      *storage.Order
}

func newOrderWorld(t *testing.T, s *v1) orderWorld {
	t.Helper()
	ctx := context.Background()
	w := orderWorld{s: s, org: s.NewOrg(t, "orders:read orders:write customer_sessions:write")}
	w.alice, w.bob = s.NewCustomer(t, w.org.ID, ""), s.NewCustomer(t, w.org.ID, "ext-bob")
	benefit, err := storage.CreateBenefit(ctx, s.DB, w.org.ID, storage.BenefitWrite{Type: "custom", Description: "Chapter",
		Visibility: "public", Properties: storage.RawJSON(`{"note": null}`)})
	if err != nil {
		t.Fatal(err)
	}
	var prices []*storage.ProductPrice
	if w.ebook, prices, err = resolverstest.StoreProduct(ctx, s.DB, w.org.ID, storage.ProductWrite{Name: "Ebook", Visibility: "public"},
		[]storage.ProductPriceWrite{{AmountType: "fixed", PriceAmount: ptr(int64(1000))}}, benefit.ID); err != nil {
		t.Fatal(err)
	}
	w.ebookPrice = prices[0]
	if w.plan, err = storage.CreateProduct(ctx, s.DB, w.org.ID, storage.ProductWrite{Name: "Pro plan", Visibility: "public",
		RecurringInterval: ptr(storage.IntervalMonth), RecurringIntervalCount: ptr(1)}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if w.subscription, err = storage.CreateSubscription(ctx, s.DB, w.org.ID, now, storage.SubscriptionWrite{
		CustomerID: w.bob.ID, ProductID: w.plan.ID, Status: "active", Amount: 2000, Currency: "usd",
		RecurringInterval: "month", RecurringIntervalCount: 1, CurrentPeriodStart: now,
		CurrentPeriodEnd: now.AddDate(0, 1, 0), StartedAt: &now}); err != nil {
		t.Fatal(err)
	}
	if w.discount, err = storage.CreateDiscount(ctx, s.DB, w.org.ID, storage.DiscountWrite{Name: "Launch",
		Type: "percentage", BasisPoints: ptr(1000), Duration: "once"}); err != nil {
		t.Fatal(err)
	}
	w.a = w.order(t, storage.OrderWrite{CustomerID: w.alice.ID, ProductID: &w.ebook.ID, Status: "pending",
		BillingReason: "purchase", Metadata: storage.JSONMap{"tier": "gold", "n": 1}}, 1000, 100)
	w.b = w.order(t, storage.OrderWrite{CustomerID: w.bob.ID, ProductID: &w.plan.ID, SubscriptionID: &w.subscription.ID,
		DiscountID: &w.discount.ID, DiscountAmount: 200, Status: "paid", BillingReason: "subscription_create",
		Metadata: storage.JSONMap{"tier": "silver"}}, 2000, 0)
	w.c = w.order(t, storage.OrderWrite{CustomerID: w.alice.ID, Status: "pending", BillingReason: "purchase"}, 100, 0)
	for i, o := range []*storage.Order{w.a, w.b, w.c} {
		s.Exec(t, `UPDATE orders SET created_at = now() - $2::interval WHERE id = $1`, o.ID, fmt.Sprintf("%d hours", 3-i))
	}
	return w
}

// order stores an order of one line of amount (and tax) with the write's other fields.
func (w orderWorld) order(t *testing.T, o storage.OrderWrite, amount, tax int64) *storage.Order {
	t.Helper()
	o.Currency, o.SubtotalAmount, o.TaxAmount = "usd", amount, tax
	o.NetAmount = amount - o.DiscountAmount
	o.TotalAmount = o.NetAmount + tax
	ctx := context.Background()
	stored, err := storage.InsertOrder(ctx, w.s.DB, w.org.ID, time.Now(), o)
	if err != nil {
		t.Fatal(err)
	}
	var price *uuid.UUID
	if o.ProductID != nil && *o.ProductID == w.ebook.ID {
		price = &w.ebookPrice.ID
	}
	if _, err := storage.InsertOrderItems(ctx, w.s.DB, w.org.ID, stored, []storage.OrderItemWrite{
		{Label: "Line", Amount: amount, TaxAmount: tax, ProductPriceID: price}}); err != nil {
		t.Fatal(err)
	}
	return stored
}

// orderPage is a list body, items kept raw.
type orderPage struct {
	Items      []json.RawMessage `json:"items"`
	Pagination struct {
		TotalCount int `json:"total_count"`
		MaxPage    int `json:"max_page"`
	} `json:"pagination"`
}

// ids lists the ids of a list body's items in order.
func orderIDs(t *testing.T, body []byte) ([]uuid.UUID, orderPage) {
	t.Helper()
	var p orderPage
	decodeJSON(t, body, &p)
	ids := []uuid.UUID{}
	for _, raw := range p.Items {
		var it struct{ ID uuid.UUID }
		decodeJSON(t, raw, &it)
		ids = append(ids, it.ID)
	}
	return ids, p
}

func TestListOrdersServesTheContract(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t, newV1(t))
	a, b, c := w.a.ID, w.b.ID, w.c.ID
	var bAt time.Time
	if err := w.s.DB.Get(&bAt, `SELECT created_at FROM orders WHERE id = $1`, b); err != nil {
		t.Fatal(err)
	}
	at := url.QueryEscape(bAt.UTC().Format(time.RFC3339Nano))
	tests := []struct {
		name  string
		query string
		want  []uuid.UUID
	}{
		{"the default order is newest first", "", []uuid.UUID{c, b, a}},
		{"sorting by created_at ascending", "sorting=created_at", []uuid.UUID{a, b, c}},
		{"status sorts by rank: pending before paid", "sorting=status&sorting=-created_at", []uuid.UUID{c, a, b}},
		{"-amount sorts on the net amount", "sorting=-amount", []uuid.UUID{b, a, c}},
		{"net_amount ascending", "sorting=net_amount", []uuid.UUID{c, a, b}},
		{"customer sorts by email", "sorting=customer&sorting=created_at", customerOrder(w)},
		{"product sorts by name, orders without one last", "sorting=product", []uuid.UUID{a, b, c}},
		{"discount sorts by name, orders without one last", "sorting=discount&sorting=created_at", []uuid.UUID{b, a, c}},
		{"invoice_number descending", "sorting=-invoice_number", []uuid.UUID{c, b, a}},
		{"subscription sorts by id, none last", "sorting=subscription&sorting=created_at", []uuid.UUID{b, a, c}},
		{"organization_id", "organization_id=" + w.org.ID.String(), []uuid.UUID{c, b, a}},
		{"product_id repeated is OR-ed", "product_id=" + w.ebook.ID.String() + "&product_id=" + w.plan.ID.String(), []uuid.UUID{b, a}},
		{"product_billing_type recurring", "product_billing_type=recurring", []uuid.UUID{b}},
		{"product_billing_type one_time skips orders without product", "product_billing_type=one_time", []uuid.UUID{a}},
		{"discount_id", "discount_id=" + w.discount.ID.String(), []uuid.UUID{b}},
		{"customer_id", "customer_id=" + w.alice.ID.String(), []uuid.UUID{c, a}},
		{"external_customer_id", "external_customer_id=ext-bob", []uuid.UUID{b}},
		{"external_customer_id of a deleted customer matches nothing", "external_customer_id=ext-gone", []uuid.UUID{}},
		{"checkout_id that no order has", "checkout_id=" + uuid.NewString(), []uuid.UUID{}},
		{"subscription_id", "subscription_id=" + w.subscription.ID.String(), []uuid.UUID{b}},
		{"status repeated", "status=paid&status=void", []uuid.UUID{b}},
		{"created_after is strict", "created_after=" + at, []uuid.UUID{c}},
		{"created_before is strict", "created_before=" + at, []uuid.UUID{a}},
		{"metadata values of a key are OR-ed", "metadata[tier]=gold&metadata[tier]=silver", []uuid.UUID{b, a}},
		{"metadata keys are AND-ed and compare as text", "metadata[tier]=gold&metadata[n]=1", []uuid.UUID{a}},
		{"filters are AND-ed", "customer_id=" + w.alice.ID.String() + "&product_billing_type=one_time", []uuid.UUID{a}},
	}
	w.s.Exec(t, `UPDATE customers SET external_id = 'ext-gone', deleted_at = now() WHERE id = $1`,
		w.s.NewCustomer(t, w.org.ID, "").ID)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := w.s.do(t, call{target: "/v1/orders/?" + tt.query, token: w.org.Token})
			want{status: 200}.check(t, rec)
			got, page := orderIDs(t, rec.Body.Bytes())
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if page.Pagination.TotalCount != len(tt.want) {
				t.Errorf("total_count = %d, want %d", page.Pagination.TotalCount, len(tt.want))
			}
		})
	}

	t.Run("pages split the list and a page past the end is empty", func(t *testing.T) {
		rec := w.s.do(t, call{target: "/v1/orders/?limit=2&page=2", token: w.org.Token})
		want{status: 200}.check(t, rec)
		got, page := orderIDs(t, rec.Body.Bytes())
		if !cmp.Equal(got, []uuid.UUID{a}) || page.Pagination.TotalCount != 3 || page.Pagination.MaxPage != 2 {
			t.Errorf("page 2: %v, %+v", got, page.Pagination)
		}
		rec = w.s.do(t, call{target: "/v1/orders/?limit=2&page=9", token: w.org.Token})
		want{status: 200, has: []string{`"items":[]`, `"max_page":2`}}.check(t, rec)
	})

	for _, tt := range []struct {
		name, query string
		want        want
	}{
		{"an unknown sorting value is 422 enum", "sorting=email",
			validation(item{Type: "enum", Loc: []any{"query", "sorting", 0}, Input: "email"})},
		{"a portal-only filter is ignored, not refused", "query=x", want{status: 200}},
		{"an unknown status is 422", "status=lost",
			validation(item{Type: "enum", Loc: []any{"query", "status", "str-enum[OrderStatus]"}},
				item{Type: "enum", Loc: []any{"query", "status", "json-or-python[json=list[str-enum[OrderStatus]],python=chain[is-instance[Sequence],function-wrap[sequence_validator()]]]", 0}})},
		{"a comma-separated id list is one bad value", "customer_id=" + w.alice.ID.String() + "," + w.bob.ID.String(),
			want{status: 422, error: "RequestValidationError"}},
		{"a UUID of another version is 422", "product_id=" + fastapitest.UUIDV1, want{status: 422, error: "RequestValidationError"}},
		{"page 0 is 422", "page=0", validation(item{Type: "greater_than", Loc: []any{"query", "page"}})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.check(t, w.s.do(t, call{target: "/v1/orders/?" + tt.query, token: w.org.Token}))
		})
	}

	t.Run("another organization sees none of the orders", func(t *testing.T) {
		other := w.s.NewOrg(t, "orders:read")
		rec := w.s.do(t, call{target: "/v1/orders/", token: other.Token})
		want{status: 200, has: []string{`"total_count":0`}}.check(t, rec)
	})
	t.Run("a token without orders:read is 403", func(t *testing.T) {
		tok := w.s.NewToken(t, w.org.ID, "orders:write")
		insufficientScope("orders:read").check(t, w.s.do(t, call{target: "/v1/orders/", token: tok}))
	})
	t.Run("a customer session is downgraded: 401", func(t *testing.T) {
		tok := w.s.NewCustomerSession(t, w.org.ID, w.alice.ID)
		unauthorized().check(t, w.s.do(t, call{target: "/v1/orders/", token: tok}))
	})
}

// ambiguousDiscount GETs an order whose discount repeats. The published document cannot
// validate such an order: its discount is a oneOf whose *OnceForeverDurationBase members
// accept duration "repeating" and ignore extra keys, so a repeating discount in exactly
// upstream's shape matches two members. The response is checked against everything else
// of the contract: the only complaint must be that ambiguity.
func ambiguousDiscount(t *testing.T, w orderWorld, target string) *httptest.ResponseRecorder {
	t.Helper()
	req := call{target: target, token: w.org.Token}.request()
	rec := httptest.NewRecorder()
	w.s.h.ServeHTTP(rec, req)
	recordCoverage(req, rec.Code)
	err := resttest.Check(resttest.Contract(t), req, rec.Code, rec.Header(), rec.Body.Bytes())
	if err == nil || !strings.Contains(err.Error(), "'oneOf' failed, subschemas") ||
		strings.Count(err.Error(), `error at "`) != strings.Count(err.Error(), `error at "/discount/discount"`) {
		t.Errorf("want only the contract's oneOf ambiguity on the discount, got: %v", err)
	}
	return rec
}

// customerOrder is the list sorted by customer email, then oldest first.
func customerOrder(w orderWorld) []uuid.UUID {
	if *w.alice.Email < *w.bob.Email {
		return []uuid.UUID{w.a.ID, w.c.ID, w.b.ID}
	}
	return []uuid.UUID{w.b.ID, w.a.ID, w.c.ID}
}

// orderKeys are the keys of the Order schema, in the contract's order.
var orderKeys = []string{"id", "created_at", "modified_at", "status", "paid", "subtotal_amount", "discount_amount",
	"net_amount", "tax_amount", "total_amount", "applied_balance_amount", "due_amount", "refunded_amount",
	"refunded_tax_amount", "currency", "billing_reason", "billing_name", "billing_address", "invoice_number",
	"is_invoice_generated", "receipt_number", "seats", "customer_id", "product_id", "discount_id", "subscription_id",
	"checkout_id", "next_payment_attempt_at", "metadata", "custom_field_data", "platform_fee_amount",
	"platform_fee_currency", "customer", "product", "discount", "subscription", "items", "description",
	"refundable_amount", "refundable_tax_amount"}

// orderedKeys returns a JSON object's keys in document order.
func orderedKeys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestGetOrderServesTheContract(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t, newV1(t))
	path := func(id uuid.UUID) string { return "/v1/orders/" + id.String() }

	t.Run("every field of Order is present, in the contract's order", func(t *testing.T) {
		rec := w.s.do(t, call{target: path(w.b.ID), token: w.org.Token})
		want{status: 200}.check(t, rec)
		body := rec.Body.Bytes()
		if diff := cmp.Diff(orderKeys, orderedKeys(t, body)); diff != "" {
			t.Errorf("keys (-want +got):\n%s", diff)
		}
		var got struct {
			Status, Currency string
			Paid             bool
			InvoiceNumber    string          `json:"invoice_number"`
			ReceiptNumber    string          `json:"receipt_number"`
			NetAmount        int64           `json:"net_amount"`
			RefundableAmount int64           `json:"refundable_amount"`
			Customer         json.RawMessage `json:"customer"`
			Product          json.RawMessage `json:"product"`
			Discount         json.RawMessage `json:"discount"`
			Subscription     json.RawMessage `json:"subscription"`
			Items            []json.RawMessage
		}
		decodeJSON(t, body, &got)
		prefix := strings.ToUpper(w.org.Slug)
		if got.Status != "paid" || !got.Paid || got.NetAmount != 1800 || got.RefundableAmount != 1800 ||
			!strings.HasPrefix(got.InvoiceNumber, prefix+"-") || !strings.HasPrefix(got.ReceiptNumber, "RCPT-"+prefix+"-") {
			t.Errorf("order = %s", body)
		}
		wantKeys := map[string][]string{
			"customer": {"id", "created_at", "modified_at", "metadata", "external_id", "email", "email_verified", "type",
				"name", "billing_name", "billing_address", "tax_id", "locale", "organization_id", "default_payment_method_id",
				"deleted_at", "first_user_event_at", "avatar_url"},
			"product": {"metadata", "id", "created_at", "modified_at", "trial_interval", "trial_interval_count", "name",
				"description", "visibility", "recurring_interval", "recurring_interval_count", "meter_interval",
				"meter_interval_count", "is_recurring", "is_archived", "organization_id"},
			"discount": {"duration", "type", "basis_points", "created_at", "modified_at", "id", "metadata", "name", "code",
				"starts_at", "ends_at", "max_redemptions", "max_redemptions_per_customer", "redemptions_count", "organization_id"},
			"subscription": {"metadata", "created_at", "modified_at", "id", "amount", "currency", "recurring_interval",
				"recurring_interval_count", "status", "current_period_start", "current_period_end",
				"current_meter_period_start", "current_meter_period_end", "trial_start", "trial_end",
				"cancel_at_period_end", "canceled_at", "started_at", "ends_at", "ended_at", "past_due_at",
				"pause_at_period_end", "paused_at", "resumes_at", "customer_id", "product_id", "discount_id",
				"checkout_id", "seats", "customer_cancellation_reason", "customer_cancellation_comment"},
		}
		for name, raw := range map[string]json.RawMessage{"customer": got.Customer, "product": got.Product,
			"discount": got.Discount, "subscription": got.Subscription} {
			if diff := cmp.Diff(wantKeys[name], orderedKeys(t, raw)); diff != "" {
				t.Errorf("%s keys (-want +got):\n%s", name, diff)
			}
		}
		if len(got.Items) != 1 {
			t.Fatalf("items = %v", got.Items)
		}
		if diff := cmp.Diff([]string{"created_at", "modified_at", "id", "label", "amount", "tax_amount", "proration",
			"product_price_id"}, orderedKeys(t, got.Items[0])); diff != "" {
			t.Errorf("item keys (-want +got):\n%s", diff)
		}
	})

	t.Run("an order without relations has them null", func(t *testing.T) {
		rec := w.s.do(t, call{target: path(w.c.ID), token: w.org.Token})
		want{status: 200, has: []string{`"product":null`, `"discount":null`, `"subscription":null`,
			`"receipt_number":null`, `"is_invoice_generated":false`, `"custom_field_data":{}`, `"seats":null`}}.check(t, rec)
	})

	t.Run("each discount kind has exactly its schema's keys", func(t *testing.T) {
		common := []string{"created_at", "modified_at", "id", "metadata", "name", "code", "starts_at", "ends_at",
			"max_redemptions", "max_redemptions_per_customer", "redemptions_count", "organization_id"}
		for _, tc := range []struct {
			write storage.DiscountWrite
			head  []string
			has   string
		}{
			{storage.DiscountWrite{Name: "Ten off", Type: "fixed", Amount: ptr(int64(1000)), Currency: ptr("usd"), Duration: "forever"},
				[]string{"duration", "type", "amount", "currency", "amounts"}, `"amounts":{"usd":1000}`},
			{storage.DiscountWrite{Name: "Half", Type: "percentage", BasisPoints: ptr(5000), Duration: "once"},
				[]string{"duration", "type", "basis_points"}, `"basis_points":5000`},
			{storage.DiscountWrite{Name: "Three months", Type: "percentage", BasisPoints: ptr(2500), Duration: "repeating", DurationInMonths: ptr(3)},
				[]string{"duration", "duration_in_months", "type", "basis_points"}, `"duration_in_months":3`},
			{storage.DiscountWrite{Name: "Five off", Type: "fixed", Amount: ptr(int64(500)), Currency: ptr("eur"), Duration: "repeating", DurationInMonths: ptr(2)},
				[]string{"duration", "duration_in_months", "type", "amount", "currency", "amounts"}, `"amounts":{"eur":500}`},
		} {
			d, err := storage.CreateDiscount(context.Background(), w.s.DB, w.org.ID, tc.write)
			if err != nil {
				t.Fatal(err)
			}
			o := w.order(t, storage.OrderWrite{CustomerID: w.alice.ID, DiscountID: &d.ID, DiscountAmount: 10, Status: "pending",
				BillingReason: "purchase"}, 100, 0)
			var rec *httptest.ResponseRecorder
			if tc.write.Duration == "repeating" {
				rec = ambiguousDiscount(t, w, path(o.ID))
			} else {
				rec = w.s.do(t, call{target: path(o.ID), token: w.org.Token})
			}
			want{status: 200, has: []string{tc.has}}.check(t, rec)
			var body struct{ Discount json.RawMessage }
			decodeJSON(t, rec.Body.Bytes(), &body)
			if diff := cmp.Diff(append(tc.head, common...), orderedKeys(t, body.Discount)); diff != "" {
				t.Errorf("%s discount keys (-want +got):\n%s", tc.write.Type, diff)
			}
		}
	})

	for _, tt := range []struct {
		name  string
		token func() string
		id    string
		want  want
	}{
		{"an unknown order is 404", func() string { return w.org.Token }, uuid.NewString(),
			want{status: 404, body: resourceNotFoundBody}},
		{"another organization's order is 404, not 403", func() string { return w.s.NewOrg(t, "orders:read").Token },
			w.a.ID.String(), want{status: 404, body: resourceNotFoundBody}},
		{"an id of another UUID version is 422", func() string { return w.org.Token }, fastapitest.UUIDV1,
			validation(item{Type: "uuid_version", Loc: []any{"path", "id"}})},
		{"a token with orders:write only is 403", func() string { return w.s.NewToken(t, w.org.ID, "orders:write") },
			w.a.ID.String(), insufficientScope("orders:read")},
		{"no token is 401", func() string { return "" }, w.a.ID.String(), unauthorized()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.check(t, w.s.do(t, call{target: "/v1/orders/" + tt.id, token: tt.token()}))
		})
	}
}
