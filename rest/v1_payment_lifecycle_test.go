package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/lib/pq"

	"till/internal/payment"
	"till/internal/payment/stripemock"
	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/rest"
)

// lifecycleProcessor builds the application on one payment processor. declineRenewals makes
// the processor decline renewal charges where the card token alone does not.
type lifecycleProcessor func(t *testing.T) (s *v1, declineRenewals func())

// onTestProcessor is the built-in test processor: a tok_chargeCustomerFail card declines
// every charge after its first.
func onTestProcessor(t *testing.T) (*v1, func()) {
	return newV1(t, withEventRenderer(t)), func() {}
}

// onStripeMock is the Stripe processor over stripe-mock, where every charge succeeds: its
// proxy answers renewal charges with Stripe's card_declined when asked to.
func onStripeMock(t *testing.T) (*v1, func()) {
	withStripe, proxy := resolverstest.WithStripeMock(t)
	return newV1(t, withStripe, withEventRenderer(t)), func() {
		proxy.Answer(func(r stripemock.Request) bool {
			return r.Route() == "POST /v1/payment_intents" && r.Form.Get("description") == "Subscription renewal"
		}, stripemock.CardDeclined("generic_decline", "Your card was declined."))
	}
}

// withEventRenderer renders domain events into webhook payloads as till serve does, so
// RenderEvents queues them for the organization's endpoints.
func withEventRenderer(tb testing.TB) resolverstest.Option {
	tb.Helper()
	docs, err := rest.LoadDocuments(rest.Operations())
	if err != nil {
		tb.Fatal(err)
	}
	return func(d *resolvers.Deps) {
		d.Renderer = func(e *resolvers.Executor) resolvers.EventRenderer { return rest.EventRenderer(e, docs) }
	}
}

// lifecycleHookTypes are the events the test organization's endpoint takes.
var lifecycleHookTypes = []string{"order.created", "order.updated", "order.paid", "order.refunded", "refund.created",
	"subscription.cycled", "subscription.past_due"}

// TestPaymentLifecycleOnEveryProcessor buys a monthly plan through checkout with a card
// token, renews it on the organization's test clock and refunds the renewal in two halves
// through /v1, on the test processor and on Stripe over stripe-mock alike, checking the
// orders, the refunds the processor made and the webhook events queued at each step; a card
// that stops working leaves the renewal unpaid and the subscription past_due on both.
func TestPaymentLifecycleOnEveryProcessor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		processor lifecycleProcessor
		token     string
		declined  bool // the renewal charge is declined
	}{
		{"the test processor buys, renews and refunds", onTestProcessor, payment.TokenVisa, false},
		{"Stripe over stripe-mock buys, renews and refunds", onStripeMock, payment.TokenVisa, false},
		{"the test processor declines a card that stopped working at renewal", onTestProcessor, payment.TokenChargeCustomerFail, true},
		{"Stripe over stripe-mock declines a card that stopped working at renewal", onStripeMock, payment.TokenChargeCustomerFail, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, declineRenewals := tt.processor(t)
			l := newLifecycle(t, s)
			sub := l.buy(t, tt.token)
			l.checkHooks(t, "the purchase", "order.created subscription_create paid refunded=0",
				"order.paid subscription_create paid refunded=0")
			var records []string
			if err := s.DB.Select(&records, `SELECT DISTINCT c.processor_customer_id FROM subscriptions s
				JOIN customers c ON c.id = s.customer_id JOIN payment_methods pm ON pm.customer_id = c.id
				WHERE s.id = $1 AND pm.processor_customer_id = c.processor_customer_id`, sub); err != nil {
				t.Fatal(err)
			}
			if len(records) != 1 || !allPrefixed(records, "cus_") {
				t.Errorf("the buyer and its card share processor records %v, want one", records)
			}
			if tt.declined {
				declineRenewals()
			}
			l.advance(t, time.Date(2030, time.February, 28, 12, 0, 0, 0, time.UTC))
			renewal := l.renewal(t, sub)
			if tt.declined {
				l.checkOrder(t, renewal, lifecycleOrder{Status: "pending"})
				var got struct {
					Status string `db:"status"`
					Reason string `db:"decline_reason"`
				}
				s.Get(t, &got, `SELECT s.status, p.decline_reason FROM subscriptions s
					JOIN payments p ON p.order_id = $2 WHERE s.id = $1`, sub, renewal)
				if got.Status != "past_due" || got.Reason != "generic_decline" {
					t.Errorf("subscription %s after a renewal declined for %q; want past_due, generic_decline", got.Status, got.Reason)
				}
				l.checkHooks(t, "the declined renewal", "order.created subscription_cycle pending refunded=0",
					"order.updated subscription_cycle pending refunded=0", "subscription.cycled past_due",
					"subscription.past_due past_due")
				return
			}
			l.checkOrder(t, renewal, lifecycleOrder{Status: "paid"})
			l.checkHooks(t, "the renewal", "order.created subscription_cycle paid refunded=0",
				"order.paid subscription_cycle paid refunded=0", "order.updated subscription_cycle paid refunded=0",
				"subscription.cycled active")
			var charges []string
			if err := s.DB.Select(&charges, `SELECT p.processor_id FROM payments p JOIN orders o ON o.id = p.order_id
				WHERE o.subscription_id = $1 AND p.status = 'succeeded'`, sub); err != nil {
				t.Fatal(err)
			}
			if len(charges) != 2 || charges[0] == charges[1] || !allPrefixed(charges, "ch_") {
				t.Errorf("charges %v, want one of its own for each order", charges)
			}

			l.refund(t, renewal, 500)
			l.checkOrder(t, renewal, lifecycleOrder{Status: "partially_refunded", RefundedAmount: 500})
			l.checkHooks(t, "the first refund", "order.refunded subscription_cycle partially_refunded refunded=500",
				"order.updated subscription_cycle partially_refunded refunded=500", "refund.created succeeded amount=500")
			l.refund(t, renewal, 500)
			l.checkOrder(t, renewal, lifecycleOrder{Status: "refunded", RefundedAmount: 1000})
			l.checkHooks(t, "the second refund", "order.refunded subscription_cycle refunded refunded=1000",
				"order.updated subscription_cycle refunded refunded=1000", "refund.created succeeded amount=500")
			var refunds []string
			if err := s.DB.Select(&refunds, `SELECT processor_id FROM refunds WHERE order_id = $1 AND status = 'succeeded'
				AND processor = $2`, renewal, "stripe"); err != nil {
				t.Fatal(err)
			}
			if len(refunds) != 2 || refunds[0] == refunds[1] || !allPrefixed(refunds, "re_") {
				t.Errorf("refunds recorded under %v, want the processor's two", refunds)
			}
		})
	}
}

// lifecycle is one organization on a test clock, with a webhook endpoint taking the
// lifecycleHookTypes, selling a monthly plan of 1000.
type lifecycle struct {
	s     *v1
	org   org
	plan  uuid.UUID
	hooks map[uuid.UUID]bool // the webhook events seen
}

func newLifecycle(t *testing.T, s *v1) *lifecycle {
	t.Helper()
	l := &lifecycle{s: s, org: s.NewOrg(t, resolverstest.AllScopes), hooks: map[uuid.UUID]bool{}}
	l.advance(t, time.Date(2030, time.January, 31, 12, 0, 0, 0, time.UTC))
	s.Exec(t, `INSERT INTO webhook_endpoints (organization_id, url, format, secret, events)
		VALUES ($1, 'https://hooks.example/in', 'raw', 'whsec_test', $2)`, l.org.ID, pq.Array(lifecycleHookTypes))
	var p struct{ CreateProduct struct{ ID uuid.UUID } }
	s.Run(t, l.org.ID, `mutation { createProduct(input: {name: "Pro plan", recurringInterval: month,
		prices: [{amountType: fixed, priceAmount: 1000}]}) { id } }`, nil, &p)
	l.plan = p.CreateProduct.ID
	return l
}

// advance moves the organization's test clock, which renews what falls due.
func (l *lifecycle) advance(t *testing.T, to time.Time) {
	t.Helper()
	l.s.Run(t, l.org.ID, `mutation($to: DateTime!) { advanceTestClock(input: {to: $to}) { renewals } }`,
		resolverstest.Vars{"to": to}, nil)
}

// buy confirms a checkout of the plan from the buyer's page with a card token and returns
// the subscription it created.
func (l *lifecycle) buy(t *testing.T, token string) uuid.UUID {
	t.Helper()
	var c struct{ CreateCheckout struct{ ClientSecret string } }
	l.s.Run(t, l.org.ID, `mutation($p: UUID!) { createCheckout(input: {products: [$p]}) { clientSecret } }`,
		resolverstest.Vars{"p": l.plan}, &c)
	var out struct {
		ConfirmCheckout struct {
			Status         string
			SubscriptionID *uuid.UUID
		}
	}
	l.s.Query(t, "", `mutation($in: CheckoutConfirmInput!) { confirmCheckout(input: $in) { status subscriptionId } }`,
		resolverstest.Vars{"in": resolverstest.Vars{"clientSecret": c.CreateCheckout.ClientSecret,
			"customerEmail": "buyer@example.com", "paymentToken": token}}, &out)
	if out.ConfirmCheckout.Status != "succeeded" || out.ConfirmCheckout.SubscriptionID == nil {
		t.Fatalf("checkout: %+v", out.ConfirmCheckout)
	}
	return *out.ConfirmCheckout.SubscriptionID
}

// renewal is the subscription's renewal order.
func (l *lifecycle) renewal(t *testing.T, sub uuid.UUID) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	l.s.Get(t, &id, `SELECT id FROM orders WHERE subscription_id = $1 AND billing_reason = 'subscription_cycle'`, sub)
	return id
}

// refund refunds part of an order through /v1.
func (l *lifecycle) refund(t *testing.T, order uuid.UUID, amount int64) {
	t.Helper()
	rec := l.s.do(t, call{method: http.MethodPost, target: "/v1/refunds/", token: l.org.Token,
		body: fmt.Sprintf(`{"order_id":%q,"reason":"customer_request","amount":%d}`, order, amount)})
	if rec.Code != http.StatusCreated || !strings.Contains(rec.Body.String(), `"status":"succeeded"`) {
		t.Fatalf("refunding %d: %d %s", amount, rec.Code, rec.Body)
	}
}

// lifecycleOrder is what /v1 says of an order's payment.
type lifecycleOrder struct {
	Status         string `json:"status"`
	TotalAmount    int64  `json:"total_amount"`
	RefundedAmount int64  `json:"refunded_amount"`
}

// checkOrder reads an order of 1000 through /v1.
func (l *lifecycle) checkOrder(t *testing.T, id uuid.UUID, want lifecycleOrder) {
	t.Helper()
	rec := l.s.do(t, call{target: "/v1/orders/" + id.String(), token: l.org.Token})
	var got lifecycleOrder
	decodeJSON(t, rec.Body.Bytes(), &got)
	if want.TotalAmount = 1000; got != want {
		t.Errorf("order %+v, want %+v", got, want)
	}
}

// checkHooks renders the events recorded since the last check into the webhook events of
// the organization's endpoint, as till serve does, and compares them (in any order) with
// want, each as "type billing_reason status refunded=N" for orders, "type status amount=N"
// for refunds and "type status" for subscriptions: payloads render the object as it is.
func (l *lifecycle) checkHooks(t *testing.T, step string, want ...string) {
	t.Helper()
	for {
		n, err := l.s.Resolver.RenderEvents(t.Context(), 100)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	var rows []struct {
		ID      uuid.UUID `db:"id"`
		Type    string    `db:"type"`
		Payload string    `db:"payload"`
	}
	if err := l.s.DB.Select(&rows, `SELECT id, type, payload FROM webhook_events WHERE organization_id = $1`, l.org.ID); err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, r := range rows {
		if l.hooks[r.ID] {
			continue
		}
		l.hooks[r.ID] = true
		var p struct {
			Data struct {
				Status         string `json:"status"`
				BillingReason  string `json:"billing_reason"`
				RefundedAmount int64  `json:"refunded_amount"`
				Amount         int64  `json:"amount"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(r.Payload), &p); err != nil {
			t.Fatalf("%s payload: %v", r.Type, err)
		}
		d := p.Data
		switch {
		case strings.HasPrefix(r.Type, "order."):
			got = append(got, fmt.Sprintf("%s %s %s refunded=%d", r.Type, d.BillingReason, d.Status, d.RefundedAmount))
		case strings.HasPrefix(r.Type, "refund."):
			got = append(got, fmt.Sprintf("%s %s amount=%d", r.Type, d.Status, d.Amount))
		default:
			got = append(got, r.Type+" "+d.Status)
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("webhook events of %s (-want +got):\n%s", step, diff)
	}
}

// allPrefixed reports whether every id starts with prefix.
func allPrefixed(ids []string, prefix string) bool {
	for _, id := range ids {
		if !strings.HasPrefix(id, prefix) {
			return false
		}
	}
	return true
}
