package rest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// refundsFixture is an organization selling a one-time product and a subscription to one
// customer, with a read-only token beside its all-scopes one.
type refundsFixture struct {
	s        *v1
	org      org
	read     string
	customer resolverstest.Customer
	product  resolverstest.Product
	sub      uuid.UUID
}

func newRefundsFixture(t *testing.T) refundsFixture {
	t.Helper()
	s := newV1(t)
	f := refundsFixture{s: s, org: s.NewOrg(t, resolverstest.AllScopes)}
	f.read = s.NewToken(t, f.org.ID, "refunds:read")
	f.customer = s.NewCustomer(t, f.org.ID, "ext-1")
	f.product = s.NewProduct(t, f.org.ID, "Ebook")
	f.sub = s.NewSubscription(t, f.org.ID, f.customer.ID, f.product.ID, nil)
	return f
}

// order stores a paid, charged one-time purchase of net and tax.
func (f refundsFixture) order(t *testing.T, net, tax int64) uuid.UUID {
	t.Helper()
	return f.s.NewChargedOrder(t, f.org.ID, f.customer.ID, resolverstest.ChargedOrder{ProductID: &f.product.ID,
		NetAmount: net, TaxAmount: tax})
}

// refund creates a refund through /v1 and returns its id.
func (f refundsFixture) refund(t *testing.T, order uuid.UUID, amount int64) uuid.UUID {
	t.Helper()
	rec := f.s.do(t, call{method: http.MethodPost, target: "/v1/refunds/", token: f.org.Token,
		body: fmt.Sprintf(`{"order_id":%q,"reason":"customer_request","amount":%d}`, order, amount)})
	if rec.Code != http.StatusCreated {
		t.Fatalf("creating a refund: %d %s", rec.Code, rec.Body)
	}
	var out struct{ ID uuid.UUID }
	decodeJSON(t, rec.Body.Bytes(), &out)
	return out.ID
}

func TestRefundCreateServesTheContract(t *testing.T) {
	t.Parallel()
	f := newRefundsFixture(t)
	refunded := f.order(t, 1000, 0)
	f.refund(t, refunded, 1000)
	subOrder := f.s.NewChargedOrder(t, f.org.ID, f.customer.ID, resolverstest.ChargedOrder{SubscriptionID: &f.sub, NetAmount: 500})
	missing := uuid.New()
	post := func(token, body string) call {
		return call{method: http.MethodPost, target: "/v1/refunds/", token: token, body: body}
	}
	body := func(order uuid.UUID, rest string) string { return fmt.Sprintf(`{"order_id":%q,%s}`, order, rest) }
	fresh := f.order(t, 1000, 250)
	tests := []struct {
		name string
		call call
		want want
	}{
		{"a partial refund is created with its proportional tax",
			post(f.org.Token, body(fresh, `"reason":"duplicate","amount":400,"comment":"twice","metadata":{"ticket":"T-1","n":2}`)),
			want{status: 201, has: []string{`"status":"succeeded"`, `"reason":"duplicate"`, `"amount":400`, `"tax_amount":100`,
				`"currency":"usd"`, `"order_id":"` + fresh.String() + `"`, `"subscription_id":null`,
				`"customer_id":"` + f.customer.ID.String() + `"`, `"revoke_benefits":false`, `"dispute":null`,
				`"metadata":{"n":2,"ticket":"T-1"}`, `"modified_at":null`}}},
		{"a fully refunded order is RefundedAlready", post(f.org.Token, body(refunded, `"reason":"other","amount":1`)),
			want{status: 403, body: `{"error":"RefundedAlready","detail":"Order is already fully refunded: ` + refunded.String() + `"}`}},
		{"an amount above what is left is refused at body.amount", post(f.org.Token, body(fresh, `"reason":"other","amount":601`)),
			polarValidation(item{Type: "value_error", Loc: []any{"body", "amount"}, Msg: "Refund amount exceeds refundable amount", Input: float64(601)})},
		{"an amount of 0 is refused before the order is read", post(f.org.Token, body(missing, `"reason":"other","amount":0`)),
			validation(item{Type: "greater_than", Loc: []any{"body", "amount"}, Msg: "Input should be greater than 0",
				Input: float64(0), Ctx: map[string]any{"gt": float64(0)}})},
		{"dispute_prevention is not a reason a caller gives", post(f.org.Token, body(fresh, `"reason":"dispute_prevention","amount":1`)),
			validation(item{Type: "enum", Loc: []any{"body", "reason"}})},
		{"order_id and reason and amount are required", post(f.org.Token, `{}`),
			validation(item{Type: "missing", Loc: []any{"body", "order_id"}}, item{Type: "missing", Loc: []any{"body", "reason"}},
				item{Type: "missing", Loc: []any{"body", "amount"}})},
		{"an unknown order is refused at body.order_id", post(f.org.Token, body(missing, `"reason":"other","amount":1`)),
			polarValidation(item{Type: "value_error", Loc: []any{"body", "order_id"}, Msg: "Order not found", Input: missing.String()})},
		{"benefits of a subscription's order are not revoked by a refund",
			post(f.org.Token, body(subOrder, `"reason":"other","amount":1,"revoke_benefits":true`)),
			want{status: 400, body: `{"error":"RevokeSubscriptionBenefitsProhibited","detail":"Subscription benefits can only be revoked upon cancellation"}`}},
		{"a read token may not refund", post(f.read, body(fresh, `"reason":"other","amount":1`)), insufficientScope("refunds:write")},
		{"an anonymous caller may not refund", post("", body(fresh, `"reason":"other","amount":1`)), unauthorized()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.check(t, f.s.do(t, tt.call))
		})
	}
	t.Run("the order shows the refunds", func(t *testing.T) {
		rec := f.s.do(t, call{target: "/v1/orders/" + fresh.String(), token: f.org.Token})
		want{status: 200, has: []string{`"status":"partially_refunded"`, `"refunded_amount":400`, `"refunded_tax_amount":100`,
			`"refundable_amount":600`, `"refundable_tax_amount":150`}}.check(t, rec)
	})
}

func TestRefundListServesTheContract(t *testing.T) {
	t.Parallel()
	f := newRefundsFixture(t)
	first, second := f.order(t, 1000, 0), f.order(t, 1000, 0)
	small := f.refund(t, first, 100)
	large := f.refund(t, first, 300)
	other := f.refund(t, second, 200)
	f.s.Exec(t, `UPDATE refunds SET status = 'pending' WHERE id = $1`, other)
	list := func(query string) call { return call{target: "/v1/refunds/" + query, token: f.read} }
	tests := []struct {
		name  string
		call  call
		want  []uuid.UUID
		total int
	}{
		{"newest first by default", list(""), []uuid.UUID{other, large, small}, 3},
		{"sorted by amount", list("?sorting=amount"), []uuid.UUID{small, other, large}, 3},
		{"by order", list("?order_id=" + second.String()), []uuid.UUID{other}, 1},
		{"by several ids", list("?id=" + small.String() + "&id=" + other.String()), []uuid.UUID{other, small}, 2},
		{"succeeded only", list("?succeeded=true"), []uuid.UUID{large, small}, 2},
		{"not succeeded", list("?succeeded=false"), []uuid.UUID{other}, 1},
		{"by customer external id", list("?external_customer_id=ext-1&limit=1"), []uuid.UUID{other}, 3},
		{"by another customer external id", list("?external_customer_id=nobody"), []uuid.UUID{}, 0},
		{"by organization", list("?organization_id=" + f.org.ID.String() + "&customer_id=" + f.customer.ID.String()),
			[]uuid.UUID{other, large, small}, 3},
		{"by subscription", list("?subscription_id=" + f.sub.String()), []uuid.UUID{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkListed(t, f.s.do(t, tt.call), tt.want, tt.total)
		})
	}
	refusals := []struct {
		name string
		call call
		want want
	}{
		{"an unknown sort is refused", list("?sorting=status"), validation(item{Type: "enum", Loc: []any{"query", "sorting", 0}})},
		{"a malformed id is refused", list("?order_id=nope"), validation(item{Type: "uuid_type", Loc: []any{"query", "order_id", "uuid"}},
			item{Type: "uuid_parsing", Loc: []any{"query", "order_id", "json-or-python[json=list[uuid],python=chain[is-instance[Sequence],function-wrap[sequence_validator()]]]", 0}})},
		{"a token without a refunds scope is refused",
			call{target: "/v1/refunds/", token: f.s.NewToken(t, f.org.ID, "orders:read")}, insufficientScope("refunds:read refunds:write")},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) { tt.want.check(t, f.s.do(t, tt.call)) })
	}
}

func TestRefundWebhookPayloads(t *testing.T) {
	t.Parallel()
	f := newRefundsFixture(t)
	o := f.order(t, 1000, 100)
	r := f.refund(t, o, 500)
	for _, tc := range []struct {
		typ, schema string
		object      uuid.UUID
		has         string
	}{
		{"refund.created", "WebhookRefundCreatedPayload", r, `"amount":500`},
		{"refund.updated", "WebhookRefundUpdatedPayload", r, `"tax_amount":50`},
		{"order.refunded", "WebhookOrderRefundedPayload", o, `"refunded_amount":500`},
		{"order.updated", "WebhookOrderUpdatedPayload", o, `"status":"partially_refunded"`},
	} {
		t.Run(tc.typ+" matches "+tc.schema, func(t *testing.T) {
			typ, data := f.s.webhookPayload(t, f.org.ID, tc.typ, tc.schema, tc.object)
			if typ != tc.typ {
				t.Errorf("type = %q, want %q", typ, tc.typ)
			}
			if !strings.Contains(string(data), tc.has) {
				t.Errorf("data lacks %s: %s", tc.has, data)
			}
		})
	}
}
