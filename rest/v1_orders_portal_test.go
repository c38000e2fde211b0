package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
	"till/storage"
	"till/storage/storagetest"
)

// customerOrderKeys are the keys of the CustomerOrder schema, in the contract's order: no
// metadata, custom fields, platform fee, customer or discount.
var customerOrderKeys = []string{"id", "created_at", "modified_at", "status", "paid", "subtotal_amount",
	"discount_amount", "net_amount", "tax_amount", "total_amount", "applied_balance_amount", "due_amount",
	"refunded_amount", "refunded_tax_amount", "currency", "billing_reason", "billing_name", "billing_address",
	"invoice_number", "is_invoice_generated", "receipt_number", "seats", "customer_id", "product_id", "discount_id",
	"subscription_id", "checkout_id", "next_payment_attempt_at", "product", "subscription", "items", "description",
	"refundable_amount", "refundable_tax_amount"}

func TestPortalListOrdersServesTheContract(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t, newV1(t))
	alice := w.s.NewCustomerSession(t, w.org.ID, w.alice.ID)
	bob := w.s.NewCustomerSession(t, w.org.ID, w.bob.ID)
	const path = "/v1/customer-portal/orders/"

	t.Run("a CustomerOrder has exactly its schema's keys, the product its portal shape", func(t *testing.T) {
		rec := w.s.do(t, call{target: path + "?product_id=" + w.ebook.ID.String(), token: alice})
		want{status: 200}.check(t, rec)
		_, page := orderIDs(t, rec.Body.Bytes())
		if len(page.Items) != 1 {
			t.Fatalf("items = %d", len(page.Items))
		}
		if diff := cmp.Diff(customerOrderKeys, orderedKeys(t, page.Items[0])); diff != "" {
			t.Errorf("keys (-want +got):\n%s", diff)
		}
		var got struct {
			Product struct {
				Prices []struct {
					ID          uuid.UUID `json:"id"`
					AmountType  string    `json:"amount_type"`
					PriceAmount int       `json:"price_amount"`
				}
				Benefits     []json.RawMessage
				Medias       []json.RawMessage
				Organization struct {
					ID   uuid.UUID
					Slug string
				}
			}
		}
		decodeJSON(t, page.Items[0], &got)
		p := got.Product
		if len(p.Prices) != 1 || p.Prices[0].ID != w.ebookPrice.ID || p.Prices[0].PriceAmount != 1000 ||
			len(p.Benefits) != 1 || p.Medias == nil || len(p.Medias) != 0 || p.Organization.ID != w.org.ID ||
			p.Organization.Slug != w.org.Slug {
			t.Errorf("product = %s", page.Items[0])
		}
		var product struct{ Product json.RawMessage }
		decodeJSON(t, page.Items[0], &product)
		if diff := cmp.Diff([]string{"id", "created_at", "modified_at", "trial_interval", "trial_interval_count", "name",
			"description", "visibility", "recurring_interval", "recurring_interval_count", "meter_interval",
			"meter_interval_count", "is_recurring", "is_archived", "organization_id", "prices", "benefits", "medias",
			"organization"}, orderedKeys(t, product.Product)); diff != "" {
			t.Errorf("product keys (-want +got):\n%s", diff)
		}
	})

	tests := []struct {
		name  string
		token string
		query string
		want  []uuid.UUID
	}{
		{"the session customer's orders only, newest first", alice, "", []uuid.UUID{w.c.ID, w.a.ID}},
		{"another customer sees only theirs, with its subscription", bob, "", []uuid.UUID{w.b.ID}},
		{"sorting by amount", alice, "sorting=amount", []uuid.UUID{w.c.ID, w.a.ID}},
		{"sorting by product, none last", alice, "sorting=-product", []uuid.UUID{w.c.ID, w.a.ID}},
		{"query matches the product name", alice, "query=eBOOK", []uuid.UUID{w.a.ID}},
		{"query escapes wildcards", alice, "query=_", []uuid.UUID{}},
		{"product_billing_type", bob, "product_billing_type=recurring", []uuid.UUID{w.b.ID}},
		{"subscription_id of another customer matches nothing", alice, "subscription_id=" + w.subscription.ID.String(), []uuid.UUID{}},
		{"the organization filters are not portal filters and are ignored", alice, "status=paid", []uuid.UUID{w.c.ID, w.a.ID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := w.s.do(t, call{target: path + "?" + tt.query, token: tt.token})
			want{status: 200}.check(t, rec)
			got, _ := orderIDs(t, rec.Body.Bytes())
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
	for _, tt := range []struct {
		name, token, query string
		want               want
	}{
		{"an organization sort is 422 in the portal", alice, "sorting=status",
			validation(item{Type: "enum", Loc: []any{"query", "sorting", 0}, Input: "status",
				Msg: "Input should be 'created_at', '-created_at', 'amount', '-amount', 'net_amount', '-net_amount', 'product', '-product', 'subscription' or '-subscription'"})},
		{"a bad billing type is 422", alice, "product_billing_type=yearly",
			want{status: 422, error: "RequestValidationError"}},
		{"an organization token is downgraded: 401", w.org.Token, "", unauthorized()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.check(t, w.s.do(t, call{target: path + "?" + tt.query, token: tt.token}))
		})
	}
}

func TestPortalUpdateOrderServesTheContract(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t, newV1(t))
	alice := w.s.NewCustomerSession(t, w.org.ID, w.alice.ID)
	patch := func(id uuid.UUID, token, body string) *http.Request {
		return call{method: http.MethodPatch, target: "/v1/customer-portal/orders/" + id.String(), token: token, body: body}.request()
	}
	t.Run("the customer updates an own order and gets a CustomerOrder", func(t *testing.T) {
		rec := w.s.serve(t, patch(w.a.ID, alice, `{"billing_name":"Alice Ltd","billing_address":{"country":"fr","city":"Paris"}}`))
		want{status: 200, has: []string{`"billing_name":"Alice Ltd"`,
			`"billing_address":{"line1":null,"line2":null,"postal_code":null,"city":"Paris","state":null,"country":"FR"}`}}.check(t, rec)
		decoded := map[string]json.RawMessage{}
		decodeJSON(t, rec.Body.Bytes(), &decoded)
		if diff := cmp.Diff(customerOrderKeys, orderedKeys(t, rec.Body.Bytes())); diff != "" {
			t.Errorf("keys (-want +got):\n%s", diff)
		}
		var events int
		if err := w.s.DB.Get(&events, `SELECT count(*) FROM domain_events WHERE object_id = $1 AND type = 'order.updated'`, w.a.ID); err != nil {
			t.Fatal(err)
		}
		if events != 1 {
			t.Errorf("%d order.updated events", events)
		}
	})
	t.Run("the country then stays", func(t *testing.T) {
		polarValidation(item{Type: "value_error", Loc: []any{"body", "billing_address", "country"}, Msg: "Country cannot be changed", Input: "DE"}).
			check(t, w.s.serve(t, patch(w.a.ID, alice, `{"billing_address":{"country":"DE"}}`)))
	})
	t.Run("another customer's order is 404", func(t *testing.T) {
		want{status: 404, body: resourceNotFoundBody}.check(t, w.s.serve(t, patch(w.b.ID, alice, `{"billing_name":"X"}`)))
	})
	t.Run("an organization token is downgraded: 401", func(t *testing.T) {
		unauthorized().check(t, w.s.serve(t, patch(w.a.ID, w.org.Token, `{"billing_name":"X"}`)))
	})
}

// TestPortalOrdersFollowTheBillingRole: with the member model, the owner's member session
// sees and edits the customer's orders; a plain member gets upstream's 403 on both routes.
func TestPortalOrdersFollowTheBillingRole(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t, newV1(t))
	w.s.Exec(t, `UPDATE organizations SET feature_settings = '{"member_model_enabled": true}' WHERE id = $1`, w.org.ID)
	w.s.Exec(t, `INSERT INTO members (organization_id, customer_id, email, role, external_id)
		VALUES ($1, $2, 'billing@example.com', 'billing_manager', 'm-billing'), ($1, $2, 'plain@example.com', 'member', 'm-plain')`,
		w.org.ID, w.alice.ID)
	open := func(t *testing.T, body string) string {
		t.Helper()
		rec := w.s.do(t, call{method: http.MethodPost, target: "/v1/customer-sessions/", token: w.org.Token, body: body})
		want{status: 201}.check(t, rec)
		var out struct{ Token string }
		decodeJSON(t, rec.Body.Bytes(), &out)
		return out.Token
	}
	owner := open(t, fmt.Sprintf(`{"customer_id":%q}`, w.alice.ID))
	manager := open(t, fmt.Sprintf(`{"customer_id":%q,"external_member_id":"m-billing"}`, w.alice.ID))
	plain := open(t, fmt.Sprintf(`{"customer_id":%q,"external_member_id":"m-plain"}`, w.alice.ID))
	forbidden := want{status: 403, body: `{"error":"NotPermitted","detail":"Only owners and billing managers can access billing features."}`}
	for _, tt := range []struct {
		name string
		call call
		want want
	}{
		{"the owner lists the customer's orders", call{target: "/v1/customer-portal/orders/", token: owner},
			want{status: 200, has: []string{`"total_count":2`}}},
		{"a billing manager lists them too", call{target: "/v1/customer-portal/orders/", token: manager},
			want{status: 200, has: []string{`"total_count":2`}}},
		{"a billing manager updates one", call{method: http.MethodPatch, target: "/v1/customer-portal/orders/" + w.c.ID.String(),
			token: manager, body: `{"billing_name":"Manager"}`}, want{status: 200, has: []string{`"billing_name":"Manager"`}}},
		{"a plain member may not list them", call{target: "/v1/customer-portal/orders/", token: plain}, forbidden},
		{"a plain member may not update one", call{method: http.MethodPatch, target: "/v1/customer-portal/orders/" + w.c.ID.String(),
			token: plain, body: `{"billing_name":"Member"}`}, forbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.check(t, w.s.do(t, tt.call))
		})
	}
}

// TestPortalOrdersStatementsPerRequest measures GET /v1/customer-portal/orders/?limit=100
// through the real /v1 handler on a counting connection: the SQL statements of a request
// are the same for a page of 10 orders and a page of 100, each with product (prices,
// benefits, organization), subscription and items.
//
// Not parallel, so the loaders' batch windows are not disturbed by other tests.
func TestPortalOrdersStatementsPerRequest(t *testing.T) {
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := newV1On(t, db)
	w := newOrderWorld(t, s)
	for i := range 120 {
		o := storage.OrderWrite{CustomerID: w.bob.ID, ProductID: &w.ebook.ID, Status: "paid", BillingReason: "purchase"}
		if i%2 == 0 {
			o.ProductID, o.SubscriptionID = &w.plan.ID, &w.subscription.ID
		}
		w.order(t, o, 1000, 0)
	}
	token := s.NewCustomerSession(t, w.org.ID, w.bob.ID)
	cost := func(limit int) int64 {
		counter.Reset()
		rec := s.do(t, call{target: fmt.Sprintf("/v1/customer-portal/orders/?limit=%d", limit), token: token})
		want{status: 200}.check(t, rec)
		if _, page := orderIDs(t, rec.Body.Bytes()); len(page.Items) != limit {
			t.Fatalf("%d items, want %d", len(page.Items), limit)
		}
		return counter.Snapshot().Statements()
	}
	ten, hundred := cost(10), cost(100)
	t.Logf("GET /v1/customer-portal/orders/: %d SQL statements for limit=10, %d for limit=100", ten, hundred)
	if ten != hundred {
		t.Errorf("statements grow with the page: %d for 10, %d for 100", ten, hundred)
	}
}
