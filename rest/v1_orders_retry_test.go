package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/internal/payment"
	"till/resolvers"
	"till/resolvers/resolverstest"
)

// retryWorld is a customer with a plan whose renewals the tests make fail, and a portal
// session; dunning makes a fresh declined renewal order for each case.
type retryWorld struct {
	s      *v1
	org    org
	alice  resolverstest.Customer
	plan   resolverstest.Product
	portal string
}

func newRetryWorld(t *testing.T, opts ...resolverstest.Option) retryWorld {
	t.Helper()
	s := newV1(t, opts...)
	w := retryWorld{s: s, org: s.NewOrg(t, "orders:read customer_sessions:write")}
	w.alice = s.NewCustomer(t, w.org.ID, "")
	w.plan = s.NewProduct(t, w.org.ID, "Pro plan")
	w.portal = s.NewCustomerSession(t, w.org.ID, w.alice.ID)
	return w
}

// declined is a fresh order whose renewal charge the card declined.
func (w retryWorld) declined(t *testing.T) uuid.UUID {
	t.Helper()
	_, order := w.s.NewDunningOrder(t, w.org.ID, w.alice.ID, w.plan.ID, payment.TokenChargeDeclined)
	return order
}

func paymentStatusPath(id uuid.UUID) string {
	return "/v1/customer-portal/orders/" + id.String() + "/payment-status"
}

func confirmPaymentCall(id uuid.UUID, token, body string) call {
	return call{method: http.MethodPost, target: "/v1/customer-portal/orders/" + id.String() + "/confirm-payment", token: token, body: body}
}

func TestPortalOrderPaymentStatusServesTheContract(t *testing.T) {
	t.Parallel()
	w := newRetryWorld(t)
	order := w.declined(t)
	paid := w.s.NewPaidOrder(t, w.org.ID, w.alice.ID, w.plan.ID, nil)
	bob := w.s.NewCustomer(t, w.org.ID, "")
	for _, tt := range []struct {
		name string
		call call
		want want
	}{
		{"the latest payment's status and decline message", call{target: paymentStatusPath(order), token: w.portal},
			want{status: 200, body: `{"status":"failed","error":"Your card was declined."}`}},
		{"an order without payments has none", call{target: paymentStatusPath(paid), token: w.portal},
			want{status: 200, body: `{"status":"no_payment","error":null}`}},
		{"another customer's order is 404", call{target: paymentStatusPath(order), token: w.s.NewCustomerSession(t, w.org.ID, bob.ID)},
			want{status: 404, body: resourceNotFoundBody}},
		{"an organization token is downgraded: 401", call{target: paymentStatusPath(order), token: w.org.Token}, unauthorized()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.check(t, w.s.do(t, tt.call))
		})
	}
}

func TestPortalConfirmPaymentServesTheContract(t *testing.T) {
	t.Parallel()
	w := newRetryWorld(t)
	tests := []struct {
		name string
		// body is the request body for the order, which it may arrange first.
		body func(t *testing.T, order uuid.UUID) string
		want func(order uuid.UUID) want
	}{
		{name: "a new card pays the order",
			body: func(*testing.T, uuid.UUID) string { return `{"confirmation_token_id":"tok_visa"}` },
			want: func(uuid.UUID) want {
				return want{status: 200, body: `{"status":"succeeded","client_secret":null,"error":null}`}
			}},
		{name: "a saved card that declines answers failed with the processor's message",
			body: func(t *testing.T, _ uuid.UUID) string {
				card := w.s.SaveCard(t, w.org.ID, w.alice.ID, payment.TokenChargeDeclined)
				return fmt.Sprintf(`{"payment_method_id":%q,"payment_processor":"stripe"}`, card)
			},
			want: func(uuid.UUID) want {
				return want{status: 200, body: `{"status":"failed","client_secret":null,"error":"Your card was declined."}`}
			}},
		{name: "a card that needs 3-D Secure answers requires_action with the client secret",
			body: func(*testing.T, uuid.UUID) string { return `{"confirmation_token_id":"tok_threeDSecure2Required"}` },
			want: func(uuid.UUID) want {
				return want{status: 200, has: []string{`{"status":"requires_action","client_secret":"pi_`, `"error":null}`}}
			}},
		{name: "a retry while the customer authenticates is 409",
			body: func(t *testing.T, order uuid.UUID) string {
				want{status: 200, has: []string{"requires_action"}}.check(t,
					w.s.do(t, confirmPaymentCall(order, w.portal, `{"confirmation_token_id":"tok_threeDSecure2Required"}`)))
				return `{"confirmation_token_id":"tok_visa"}`
			},
			want: func(order uuid.UUID) want {
				return want{status: 409, body: fmt.Sprintf(`{"error":"PaymentAlreadyInProgress","detail":"Payment for order %s is already in progress"}`, order)}
			}},
		{name: "a paid order is not eligible: 422",
			body: func(t *testing.T, order uuid.UUID) string {
				want{status: 200}.check(t, w.s.do(t, confirmPaymentCall(order, w.portal, `{"confirmation_token_id":"tok_visa"}`)))
				return `{"confirmation_token_id":"tok_visa"}`
			},
			want: func(order uuid.UUID) want {
				return want{status: 422, body: fmt.Sprintf(`{"error":"OrderNotEligibleForRetry","detail":"Order %s is not eligible for payment retry."}`, order)}
			}},
		{name: "neither a card nor a token is PaymentRetryValidationError",
			body: func(*testing.T, uuid.UUID) string { return `{}` },
			want: func(uuid.UUID) want {
				return want{status: 422, body: `{"error":"PaymentRetryValidationError","detail":"Either confirmation_token_id or payment_method_id must be provided"}`}
			}},
		{name: "both are PaymentRetryValidationError",
			body: func(*testing.T, uuid.UUID) string {
				return `{"confirmation_token_id":"tok_visa","payment_method_id":"` + uuid.NewString() + `"}`
			},
			want: func(uuid.UUID) want {
				return want{status: 422, body: `{"error":"PaymentRetryValidationError","detail":"Only one of confirmation_token_id or payment_method_id can be provided"}`}
			}},
		{name: "a payment method that is not the customer's is PaymentRetryValidationError",
			body: func(*testing.T, uuid.UUID) string { return `{"payment_method_id":"` + uuid.NewString() + `"}` },
			want: func(uuid.UUID) want {
				return want{status: 422, body: `{"error":"PaymentRetryValidationError","detail":"Payment method does not belong to customer"}`}
			}},
		{name: "another processor is refused as the enum refuses it",
			body: func(*testing.T, uuid.UUID) string {
				return `{"confirmation_token_id":"tok_visa","payment_processor":"paypal"}`
			},
			want: func(uuid.UUID) want {
				return validation(item{Type: "enum", Loc: []any{"body", "payment_processor"}, Msg: "Input should be 'stripe'", Input: "paypal"})
			}},
		{name: "a payment method id that is no UUID is a validation error",
			body: func(*testing.T, uuid.UUID) string { return `{"payment_method_id":"pm_1"}` },
			want: func(uuid.UUID) want {
				return want{status: 422, error: "RequestValidationError", items: []item{{Type: "uuid_parsing", Loc: []any{"body", "payment_method_id"}}}}
			}},
		{name: "the sixth retry of an order is 429",
			body: func(t *testing.T, order uuid.UUID) string {
				card := w.s.SaveCard(t, w.org.ID, w.alice.ID, payment.TokenChargeDeclined)
				body := fmt.Sprintf(`{"payment_method_id":%q}`, card)
				for range 5 {
					want{status: 200, has: []string{`"status":"failed"`}}.check(t, w.s.do(t, confirmPaymentCall(order, w.portal, body)))
				}
				return body
			},
			want: func(order uuid.UUID) want {
				return want{status: 429, body: fmt.Sprintf(`{"error":"ManualRetryLimitExceeded","detail":"Maximum number of manual payment retry attempts has been reached for order %s."}`, order)}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			order := w.declined(t)
			tt.want(order).check(t, w.s.do(t, confirmPaymentCall(order, w.portal, tt.body(t, order))))
		})
	}
	t.Run("another customer's order is 404", func(t *testing.T) {
		bob := w.s.NewCustomer(t, w.org.ID, "")
		want{status: 404, body: resourceNotFoundBody}.check(t,
			w.s.do(t, confirmPaymentCall(w.declined(t), w.s.NewCustomerSession(t, w.org.ID, bob.ID), `{"confirmation_token_id":"tok_visa"}`)))
	})
	t.Run("an organization token is downgraded: 401", func(t *testing.T) {
		unauthorized().check(t, w.s.do(t, confirmPaymentCall(w.declined(t), w.org.Token, `{"confirmation_token_id":"tok_visa"}`)))
	})
}

// gatedProcessor is the test processor whose charges, once gated, wait at a gate: each
// counts itself, announces itself on entered, then waits until open is closed.
type gatedProcessor struct {
	payment.Processor
	gated   atomic.Bool
	entered chan struct{}
	open    chan struct{}
	charges atomic.Int32
}

// Charge implements payment.Processor.
func (p *gatedProcessor) Charge(ctx context.Context, req payment.ChargeRequest) (payment.Charge, error) {
	if p.gated.Load() {
		p.charges.Add(1)
		p.entered <- struct{}{}
		<-p.open
	}
	return p.Processor.Charge(ctx, req)
}

// TestPortalConfirmPaymentRace retries one order's payment from concurrent requests: the
// order is charged at most once, and the requests that lose answer as upstream, 409 while
// the winner's charge is under way.
func TestPortalConfirmPaymentRace(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		losers int
	}{
		{"two requests: the second is 409 while the first charges", 1},
		{"a crowd: every other request is 409", 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			gate := &gatedProcessor{Processor: payment.NewTestProcessor(), entered: make(chan struct{}, tt.losers+1),
				open: make(chan struct{})}
			w := newRetryWorld(t, func(d *resolvers.Deps) { d.Payments = gate })
			order := w.declined(t)
			card := w.s.SaveCard(t, w.org.ID, w.alice.ID, payment.TokenVisa)
			body := fmt.Sprintf(`{"payment_method_id":%q}`, card)
			gate.gated.Store(true)

			winner := make(chan int, 1)
			go func() { winner <- w.s.do(t, confirmPaymentCall(order, w.portal, body)).Code }()
			select {
			case <-gate.entered: // the first request is charging
			case <-time.After(30 * time.Second):
				t.Fatal("the first request never reached the processor")
			}
			var wg sync.WaitGroup
			codes := make(chan int, tt.losers)
			for range tt.losers {
				wg.Go(func() {
					rec := w.s.do(t, confirmPaymentCall(order, w.portal, body))
					if rec.Code == http.StatusConflict {
						want{error: "PaymentAlreadyInProgress"}.check(t, rec)
					}
					codes <- rec.Code
				})
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second): // a loser is charging too: let every charge through, to count them
			}
			close(gate.open)
			<-done
			if got := <-winner; got != http.StatusOK {
				t.Errorf("the first request answered %d", got)
			}
			close(codes)
			for code := range codes {
				if code != http.StatusConflict {
					t.Errorf("a request made during the charge answered %d, want 409", code)
				}
			}
			if n := gate.charges.Load(); n != 1 {
				t.Errorf("the processor charged %d times, want once", n)
			}
			want{status: 200, body: `{"status":"succeeded","error":null}`}.check(t,
				w.s.do(t, call{target: paymentStatusPath(order), token: w.portal}))
		})
	}
}
