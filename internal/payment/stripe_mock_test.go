package payment_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"till/internal/payment"
	"till/internal/payment/stripemock"
)

// sentRequest is one request the processor sent, as stripe-mock received it.
type sentRequest struct {
	Method, Path   string
	Form           url.Values
	IdempotencyKey string
}

// recordingProxy stands between the processor and stripe-mock: it keeps every request,
// and sets in answers what stripe-mock's fixtures leave as a new object has it (intents
// awaiting a payment method, a method on no customer) to what a real account answers a
// confirmed request with; everything else comes from the fixtures.
type recordingProxy struct {
	mu   sync.Mutex
	sent []sentRequest
}

// answerPatches are the fields the proxy sets in stripe-mock's answers, by method and
// path prefix.
var answerPatches = map[string]map[string]any{
	"POST /v1/setup_intents":   {"status": "succeeded"},
	"POST /v1/payment_intents": {"status": "succeeded", "latest_charge": "ch_fixture"},
	"GET /v1/payment_methods/": {"customer": "cus_fixture"},
}

func (rp *recordingProxy) requests() []sentRequest {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return append([]sentRequest(nil), rp.sent...)
}

// startStripeMock returns a processor talking to stripe-mock through a recording proxy.
func startStripeMock(t *testing.T) (*payment.StripeProcessor, *recordingProxy) {
	t.Helper()
	target, err := url.Parse(stripemock.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	rp := &recordingProxy{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = patchAnswer
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := url.ParseQuery(string(body))
		if r.Method == http.MethodGet {
			form = r.URL.Query()
		}
		rp.mu.Lock()
		rp.sent = append(rp.sent, sentRequest{Method: r.Method, Path: r.URL.Path, Form: form, IdempotencyKey: r.Header.Get("Idempotency-Key")})
		rp.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p, err := payment.NewStripe(payment.StripeConfig{SecretKey: "sk_test_123", APIURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return p, rp
}

// patchAnswer applies answerPatches to a successful JSON answer.
func patchAnswer(resp *http.Response) error {
	var patch map[string]any
	for route, p := range answerPatches {
		if strings.HasPrefix(resp.Request.Method+" "+resp.Request.URL.Path, route) {
			patch = p
		}
	}
	if patch == nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var object map[string]any
	if err := json.Unmarshal(body, &object); err != nil {
		return err
	}
	for k, v := range patch {
		object[k] = v
	}
	if body, err = json.Marshal(object); err != nil {
		return err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return nil
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
	p, rp := startStripeMock(t)
	ctx := context.Background()
	link := "link"
	tests := []struct {
		name string
		call func() (any, error)
		want any
		sent []wantRequest
		// also checks how the requests sent refer to each other.
		also func(t *testing.T, sent []sentRequest)
	}{
		{name: "a token is saved for off-session use on a customer of its own",
			call: func() (any, error) {
				m, err := p.SavePaymentMethod(ctx, "tok_visa")
				if !strings.HasPrefix(m.ProcessorID, "pm_") {
					t.Errorf("processor id %q", m.ProcessorID)
				}
				m.ProcessorID = ""
				return m, err
			},
			want: payment.Method{Type: "card", Brand: "visa", Last4: "4242", ExpMonth: 8, ExpYear: 2030, Wallet: &link},
			sent: []wantRequest{
				{route: "POST /v1/payment_methods", fields: map[string]string{"type": "card", "card[token]": "tok_visa"}},
				{route: "POST /v1/customers"},
				{route: "POST /v1/setup_intents", fields: map[string]string{"confirm": "true", "usage": "off_session", "payment_method_types[0]": "card"}},
			},
			also: func(t *testing.T, sent []sentRequest) {
				method := sent[1].Form.Get("metadata[till_payment_method]")
				if method == "" || sent[2].Form.Get("payment_method") != method || sent[2].Form.Get("customer") == "" {
					t.Errorf("the setup intent does not set up the method made on a customer: %+v", sent)
				}
			}},
		{name: "a charge confirms an off-session payment on the method's customer under the request's key",
			call: func() (any, error) {
				return p.Charge(ctx, payment.ChargeRequest{Amount: 1500, Currency: "EUR", PaymentMethodID: "pm_saved",
					IdempotencyKey: "order-1-charge", Description: "Order 1"})
			},
			want: payment.Charge{ID: "ch_fixture", Amount: 1500},
			sent: []wantRequest{
				{route: "GET /v1/payment_methods/pm_saved"},
				{route: "POST /v1/payment_intents", idempotencyKey: "order-1-charge", fields: map[string]string{
					"amount": "1500", "currency": "eur", "customer": "cus_fixture", "payment_method": "pm_saved",
					"off_session": "true", "confirm": "true", "description": "Order 1"}},
			}},
		{name: "a refund of a charge carries its reason and key",
			call: func() (any, error) {
				r, err := p.Refund(ctx, payment.RefundRequest{ChargeID: "ch_fixture", Amount: 500, Currency: "eur",
					IdempotencyKey: "refund-1", Reason: "requested_by_customer"})
				if !strings.HasPrefix(r.ID, "re_") {
					t.Errorf("refund id %q", r.ID)
				}
				r.ID = ""
				return r, err
			},
			want: payment.Refund{Amount: 500, Status: payment.RefundSucceeded},
			sent: []wantRequest{{route: "POST /v1/refunds", idempotencyKey: "refund-1",
				fields: map[string]string{"charge": "ch_fixture", "amount": "500", "reason": "requested_by_customer"},
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
			before := len(rp.requests())
			got, err := tt.call()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			sent := rp.requests()[before:]
			checkSent(t, sent, tt.sent)
			if tt.also != nil {
				tt.also(t, sent)
			}
		})
	}
}

// checkSent compares the requests sent with those wanted, in order.
func checkSent(t *testing.T, sent []sentRequest, want []wantRequest) {
	t.Helper()
	if len(sent) != len(want) {
		t.Fatalf("sent %d requests, want %d: %+v", len(sent), len(want), sent)
	}
	for i, w := range want {
		s := sent[i]
		if route := s.Method + " " + s.Path; route != w.route {
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
