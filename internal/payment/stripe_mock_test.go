package payment_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"till/internal/payment"
	"till/internal/payment/stripemock"
)

// startStripeMock returns a processor talking to stripe-mock through a recording proxy.
func startStripeMock(t *testing.T) (*payment.StripeProcessor, *stripemock.Proxy) {
	t.Helper()
	proxy := stripemock.StartProxy(t)
	p, err := payment.NewStripe(payment.StripeConfig{SecretKey: "sk_test_123", APIURL: proxy.URL})
	if err != nil {
		t.Fatal(err)
	}
	return p, proxy
}

// wantRequest is what a test expects of one request: its route, the form fields it must
// carry (by value), those it must not carry, and its idempotency key ("" for any).
type wantRequest struct {
	route          string
	fields         map[string]string
	absent         []string
	idempotencyKey string
}

// TestStripeProcessorAgainstStripeMock: what the processor sends is what Stripe's API
// accepts (stripe-mock refuses anything else), carries the request's idempotency key, and
// the fixtures it gets back become Till's types.
func TestStripeProcessorAgainstStripeMock(t *testing.T) {
	p, proxy := startStripeMock(t)
	ctx := context.Background()
	link := "link"
	var created string // the customer the first save created
	// charged checks that a charge is named after its charge (ch_…) and leaves the id out.
	charged := func(c payment.Charge, err error) (any, error) {
		if !strings.HasPrefix(c.ID, "ch_") {
			t.Errorf("charge id %q", c.ID)
		}
		c.ID = ""
		return c, err
	}
	tests := []struct {
		name string
		call func() (any, error)
		want any
		sent []wantRequest
		// also checks how the requests sent refer to each other.
		also func(t *testing.T, sent []stripemock.Request)
	}{
		{name: "a token saved for a customer without a record creates one, keyed by the Till customer",
			call: func() (any, error) {
				m, err := p.SavePaymentMethod(ctx, payment.SaveRequest{Token: "tok_visa", Customer: payment.CustomerRef{
					TillID: "6f1c", Email: "ada@example.com", Name: "Ada"}})
				if !strings.HasPrefix(m.ProcessorID, "pm_") || !strings.HasPrefix(m.ProcessorCustomerID, "cus_") {
					t.Errorf("saved %q on %q", m.ProcessorID, m.ProcessorCustomerID)
				}
				created = m.ProcessorCustomerID
				m.ProcessorID, m.ProcessorCustomerID = "", ""
				return m, err
			},
			want: payment.Method{Type: "card", Brand: "visa", Last4: "4242", ExpMonth: 8, ExpYear: 2030, Wallet: &link},
			sent: []wantRequest{
				{route: "POST /v1/payment_methods", fields: map[string]string{"type": "card", "card[token]": "tok_visa"}},
				{route: "POST /v1/customers", fields: map[string]string{"email": "ada@example.com", "name": "Ada",
					"metadata[till_customer_id]": "6f1c"}},
				{route: "POST /v1/setup_intents", fields: map[string]string{"confirm": "true", "usage": "off_session", "payment_method_types[0]": "card"}},
			},
			also: func(t *testing.T, sent []stripemock.Request) {
				if !strings.HasPrefix(sent[1].IdempotencyKey, "till-customer-6f1c-") {
					t.Errorf("customer created under key %q", sent[1].IdempotencyKey)
				}
				if sent[2].Form.Get("customer") != created || sent[2].Form.Get("payment_method") == "" {
					t.Errorf("the setup intent does not set up the method on the customer made: %+v", sent)
				}
			}},
		{name: "a token saved for a customer with a record is set up on it, creating none",
			call: func() (any, error) {
				m, err := p.SavePaymentMethod(ctx, payment.SaveRequest{Token: "tok_visa", Customer: payment.CustomerRef{
					ProcessorID: "cus_known", TillID: "6f1c"}})
				m.ProcessorID = ""
				return m, err
			},
			want: payment.Method{ProcessorCustomerID: "cus_known", Type: "card", Brand: "visa", Last4: "4242", ExpMonth: 8,
				ExpYear: 2030, Wallet: &link},
			sent: []wantRequest{
				{route: "POST /v1/payment_methods"},
				{route: "POST /v1/setup_intents", fields: map[string]string{"customer": "cus_known"}},
			}},
		{name: "a PaymentMethod Stripe.js made is read back and set up on the customer",
			call: func() (any, error) {
				m, err := p.SavePaymentMethod(ctx, payment.SaveRequest{Token: "pm_fromElements", Customer: payment.CustomerRef{
					ProcessorID: "cus_known"}})
				if m.ProcessorID != "pm_fromElements" {
					t.Errorf("saved %q, want the method the token names", m.ProcessorID)
				}
				m.ProcessorID = ""
				return m, err
			},
			want: payment.Method{ProcessorCustomerID: "cus_known", Type: "card", Brand: "visa", Last4: "4242", ExpMonth: 8,
				ExpYear: 2030, Wallet: &link},
			sent: []wantRequest{
				{route: "GET /v1/payment_methods/pm_fromElements"},
				{route: "POST /v1/setup_intents", fields: map[string]string{"customer": "cus_known", "payment_method": "pm_fromElements"}},
			}},
		{name: "a ConfirmationToken confirms the setup itself, which names the method saved",
			call: func() (any, error) {
				m, err := p.SavePaymentMethod(ctx, payment.SaveRequest{Token: "ctoken_fromCheckout", Customer: payment.CustomerRef{
					ProcessorID: "cus_known"}})
				if !strings.HasPrefix(m.ProcessorID, "pm_") {
					t.Errorf("saved %q, want the setup intent's payment method", m.ProcessorID)
				}
				m.ProcessorID = ""
				return m, err
			},
			want: payment.Method{ProcessorCustomerID: "cus_known", Type: "card", Brand: "visa", Last4: "4242", ExpMonth: 8,
				ExpYear: 2030, Wallet: &link},
			sent: []wantRequest{
				{route: "POST /v1/setup_intents", fields: map[string]string{"customer": "cus_known",
					"confirmation_token": "ctoken_fromCheckout", "expand[0]": "payment_method", "usage": "off_session"}},
			}},
		{name: "a charge confirms an off-session payment on the customer it names under the request's key",
			call: func() (any, error) {
				return charged(p.Charge(ctx, payment.ChargeRequest{Amount: 1500, Currency: "EUR", PaymentMethodID: "pm_saved",
					ProcessorCustomerID: "cus_known", MethodType: "card", IdempotencyKey: "order-1-charge", Description: "Order 1"}))
			},
			want: payment.Charge{Amount: 1500},
			sent: []wantRequest{
				{route: "POST /v1/payment_intents", idempotencyKey: "order-1-charge", fields: map[string]string{
					"amount": "1500", "currency": "eur", "customer": "cus_known", "payment_method": "pm_saved",
					"payment_method_types[0]": "card", "off_session": "true", "confirm": "true", "description": "Order 1"}},
			}},
		{name: "a charge of a method saved without its customer reads the method's customer first",
			call: func() (any, error) {
				return charged(p.Charge(ctx, payment.ChargeRequest{Amount: 700, Currency: "eur", PaymentMethodID: "pm_older",
					IdempotencyKey: "order-2-charge"}))
			},
			want: payment.Charge{Amount: 700},
			sent: []wantRequest{
				{route: "GET /v1/payment_methods/pm_older"},
				{route: "POST /v1/payment_intents", idempotencyKey: "order-2-charge", fields: map[string]string{
					"amount": "700", "customer": stripemock.FixtureCustomer, "payment_method": "pm_older"}},
			}},
		{name: "a refund of a charge carries its reason and key",
			call: func() (any, error) {
				r, err := p.Refund(ctx, payment.RefundRequest{ChargeID: "ch_paid", Amount: 500, Currency: "eur",
					IdempotencyKey: "refund-1", Reason: "requested_by_customer"})
				if !strings.HasPrefix(r.ID, "re_") {
					t.Errorf("refund id %q", r.ID)
				}
				r.ID = ""
				return r, err
			},
			want: payment.Refund{Amount: 500, Status: payment.RefundSucceeded},
			sent: []wantRequest{{route: "POST /v1/refunds", idempotencyKey: "refund-1",
				fields: map[string]string{"charge": "ch_paid", "amount": "500", "reason": "requested_by_customer"},
				absent: []string{"payment_intent"}}}},
		{name: "a refund of a payment intent names it, and a reason Stripe lacks is left out",
			call: func() (any, error) {
				r, err := p.Refund(ctx, payment.RefundRequest{ChargeID: "pi_paid", Amount: 200, Currency: "eur",
					IdempotencyKey: "refund-2", Reason: "service_disruption"})
				r.ID = ""
				return r, err
			},
			want: payment.Refund{Amount: 200, Status: payment.RefundSucceeded},
			sent: []wantRequest{{route: "POST /v1/refunds", idempotencyKey: "refund-2",
				fields: map[string]string{"payment_intent": "pi_paid", "amount": "200"}, absent: []string{"charge", "reason"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(proxy.Requests())
			got, err := tt.call()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			sent := proxy.Requests()[before:]
			checkSent(t, sent, tt.sent)
			if tt.also != nil {
				tt.also(t, sent)
			}
		})
	}
}

// checkSent compares the requests sent with those wanted, in order.
func checkSent(t *testing.T, sent []stripemock.Request, want []wantRequest) {
	t.Helper()
	if len(sent) != len(want) {
		t.Fatalf("sent %d requests, want %d: %+v", len(sent), len(want), sent)
	}
	for i, w := range want {
		s := sent[i]
		if route := s.Route(); route != w.route {
			t.Errorf("request %d: %s, want %s", i, route, w.route)
		}
		for k, v := range w.fields {
			if got := s.Form.Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", w.route, k, got, v)
			}
		}
		for _, k := range w.absent {
			if s.Form.Has(k) {
				t.Errorf("%s: sent %s = %q", w.route, k, s.Form.Get(k))
			}
		}
		if w.idempotencyKey != "" && s.IdempotencyKey != w.idempotencyKey {
			t.Errorf("%s: Idempotency-Key %q, want %q", w.route, s.IdempotencyKey, w.idempotencyKey)
		}
	}
}

// TestStripeConcurrentSavesShareOneCustomer: saves racing for one Till customer that has no
// Stripe Customer yet create it under one idempotency key, so Stripe (the proxy replays a
// key's first answer as Stripe does) hands them all one Customer, and every method is set
// up on it.
func TestStripeConcurrentSavesShareOneCustomer(t *testing.T) {
	p, proxy := startStripeMock(t)
	ref := payment.CustomerRef{TillID: "7a2e", Email: "ada@example.com"}
	methods := make([]payment.Method, 8)
	var wg sync.WaitGroup
	for i := range methods {
		wg.Go(func() {
			m, err := p.SavePaymentMethod(context.Background(), payment.SaveRequest{Token: "tok_visa", Customer: ref})
			if err != nil {
				t.Error(err)
			}
			methods[i] = m
		})
	}
	wg.Wait()
	keys, customers := map[string]bool{}, map[string]bool{}
	for _, r := range proxy.Requests() {
		switch r.Route() {
		case "POST /v1/customers":
			keys[r.IdempotencyKey] = true
		case "POST /v1/setup_intents":
			customers[r.Form.Get("customer")] = true
		}
	}
	if len(keys) != 1 || len(customers) != 1 {
		t.Fatalf("customers created under keys %v, methods set up on %v; want one each", keys, customers)
	}
	for _, m := range methods {
		if !customers[m.ProcessorCustomerID] {
			t.Errorf("method %s reports customer %s, set up on %v", m.ProcessorID, m.ProcessorCustomerID, customers)
		}
	}
}
