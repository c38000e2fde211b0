package payment_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"till/internal/payment"
)

// stripeAnswer is what the fake Stripe answers one route with.
type stripeAnswer struct {
	status int
	body   string
}

// Bodies the fake answers with, shaped as Stripe's.
const (
	savedMethodJSON  = `{"id":"pm_1","object":"payment_method","type":"card","customer":"cus_1","card":{"brand":"visa","last4":"4242","exp_month":12,"exp_year":2034}}`
	customerJSON     = `{"id":"cus_1","object":"customer"}`
	setupSucceeded   = `{"id":"seti_1","object":"setup_intent","status":"succeeded","payment_method":"pm_1"}`
	insufficientJSON = `{"error":{"type":"card_error","code":"card_declined","decline_code":"insufficient_funds","message":"Your card has insufficient funds."}}`
	serverErrorJSON  = `{"error":{"type":"api_error","message":"An unknown error occurred"}}`
)

// fakeStripe starts a server that answers Stripe's routes ("POST /v1/refunds") as routes
// says, 404 otherwise, and returns a processor talking to it. Its answers tell stripe-go
// not to retry, so a 5xx is reported at once.
func fakeStripe(t *testing.T, routes map[string]stripeAnswer) *payment.StripeProcessor {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := routes[r.Method+" "+r.URL.Path]
		if !ok {
			a = stripeAnswer{http.StatusNotFound, `{"error":{"type":"invalid_request_error","code":"resource_missing","message":"Unrecognized request URL"}}`}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Request-Id", "req_fake")
		w.Header().Set("Stripe-Should-Retry", "false")
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.body))
	}))
	t.Cleanup(srv.Close)
	p, err := payment.NewStripe(payment.StripeConfig{SecretKey: "sk_test_fake", APIURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkOutcome compares err with what a case expects: one of a decline, an action, a
// refund refusal or a sentinel; with none, err must be nil.
func checkOutcome(t *testing.T, err error, decline *payment.DeclineError, action *payment.ActionRequiredError,
	refusal *payment.RefundError, sentinel error) {
	t.Helper()
	var d *payment.DeclineError
	var a *payment.ActionRequiredError
	var r *payment.RefundError
	switch {
	case decline != nil:
		if !errors.As(err, &d) {
			t.Fatalf("err = %v, want a decline", err)
		}
		if diff := cmp.Diff(decline, d); diff != "" {
			t.Errorf("decline (-want +got):\n%s", diff)
		}
	case action != nil:
		if !errors.As(err, &a) {
			t.Fatalf("err = %v, want an action", err)
		}
		if diff := cmp.Diff(action, a); diff != "" {
			t.Errorf("action (-want +got):\n%s", diff)
		}
	case refusal != nil:
		if !errors.As(err, &r) {
			t.Fatalf("err = %v, want a refund refusal", err)
		}
		if diff := cmp.Diff(refusal, r); diff != "" {
			t.Errorf("refusal (-want +got):\n%s", diff)
		}
	case sentinel != nil:
		if !errors.Is(err, sentinel) {
			t.Fatalf("err = %v, want %v", err, sentinel)
		}
	default:
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	if sentinel == nil && (errors.Is(err, payment.ErrUnavailable) || errors.Is(err, payment.ErrInvalidToken)) {
		t.Errorf("err = %v also wraps a sentinel", err)
	}
}

// TestStripeChargeMapsStripesAnswers: declines keep Stripe's codes, a payment awaiting 3-D
// Secure is an ActionRequiredError, faults on Stripe's side are retryable and a refused
// key is neither.
func TestStripeChargeMapsStripesAnswers(t *testing.T) {
	tests := []struct {
		name     string
		intent   stripeAnswer
		want     payment.Charge
		decline  *payment.DeclineError
		action   *payment.ActionRequiredError
		sentinel error
		plain    bool
	}{
		{name: "a succeeded payment is its latest charge",
			intent: stripeAnswer{200, `{"id":"pi_1","object":"payment_intent","status":"succeeded","amount":1500,"latest_charge":"ch_1"}`},
			want:   payment.Charge{ID: "ch_1", Amount: 1500}},
		{name: "a payment with no charge reported is the payment intent",
			intent: stripeAnswer{200, `{"id":"pi_1","object":"payment_intent","status":"succeeded","amount":1500,"latest_charge":null}`},
			want:   payment.Charge{ID: "pi_1", Amount: 1500}},
		{name: "a declined card keeps the decline code",
			intent:  stripeAnswer{402, insufficientJSON},
			decline: &payment.DeclineError{Code: "card_declined", DeclineCode: "insufficient_funds", Message: "Your card has insufficient funds."}},
		{name: "an expired card is declined under its code",
			intent:  stripeAnswer{402, `{"error":{"type":"card_error","code":"expired_card","message":"Your card has expired."}}`},
			decline: &payment.DeclineError{Code: "expired_card", DeclineCode: "expired_card", Message: "Your card has expired."}},
		{name: "a payment intent left without a method is declined by its last error",
			intent: stripeAnswer{200, `{"id":"pi_1","object":"payment_intent","status":"requires_payment_method",
				"last_payment_error":{"type":"card_error","code":"card_declined","decline_code":"do_not_honor","message":"Your card was declined."}}`},
			decline: &payment.DeclineError{Code: "card_declined", DeclineCode: "do_not_honor", Message: "Your card was declined."}},
		{name: "a payment awaiting 3-D Secure asks for action",
			intent: stripeAnswer{200, `{"id":"pi_3ds","object":"payment_intent","status":"requires_action","client_secret":"pi_3ds_secret_x"}`},
			action: &payment.ActionRequiredError{PaymentIntentID: "pi_3ds", ClientSecret: "pi_3ds_secret_x"}},
		{name: "a card error on a payment awaiting 3-D Secure asks for action",
			intent: stripeAnswer{402, `{"error":{"type":"card_error","code":"authentication_required","message":"Authenticate.",
				"payment_intent":{"id":"pi_3ds","object":"payment_intent","status":"requires_action","client_secret":"pi_3ds_secret_x"}}}`},
			action: &payment.ActionRequiredError{PaymentIntentID: "pi_3ds", ClientSecret: "pi_3ds_secret_x"}},
		{name: "a 500 from Stripe is retryable", intent: stripeAnswer{500, serverErrorJSON}, sentinel: payment.ErrUnavailable},
		{name: "a 502 page from a proxy is retryable", intent: stripeAnswer{502, `<html>Bad Gateway</html>`}, sentinel: payment.ErrUnavailable},
		{name: "a rate limit is retryable",
			intent:   stripeAnswer{429, `{"error":{"type":"invalid_request_error","code":"rate_limit","message":"Too many requests"}}`},
			sentinel: payment.ErrUnavailable},
		{name: "a refused key is a plain error",
			intent: stripeAnswer{401, `{"error":{"type":"invalid_request_error","message":"Invalid API Key provided"}}`}, plain: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := fakeStripe(t, map[string]stripeAnswer{
				"GET /v1/payment_methods/pm_1": {200, savedMethodJSON},
				"POST /v1/payment_intents":     tt.intent,
			})
			got, err := p.Charge(context.Background(), payment.ChargeRequest{Amount: 1500, Currency: "usd", PaymentMethodID: "pm_1", IdempotencyKey: "k"})
			if tt.plain {
				if err == nil || payment.IsDecline(err) || errors.Is(err, payment.ErrUnavailable) {
					t.Fatalf("err = %v, want a plain error", err)
				}
				return
			}
			checkOutcome(t, err, tt.decline, tt.action, nil, tt.sentinel)
			if got != tt.want {
				t.Errorf("charge = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestStripeUnreachableIsRetryable: a processor that cannot reach Stripe says so with
// ErrUnavailable on every operation.
func TestStripeUnreachableIsRetryable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	p, err := payment.NewStripe(payment.StripeConfig{SecretKey: "sk_test_fake", APIURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ops := map[string]func() error{
		"saving a method": func() error { _, err := p.SavePaymentMethod(ctx, payment.SaveRequest{Token: "tok_visa"}); return err },
		"charging": func() error {
			_, err := p.Charge(ctx, payment.ChargeRequest{Amount: 1, Currency: "usd", PaymentMethodID: "pm_1"})
			return err
		},
		"refunding": func() error { _, err := p.Refund(ctx, payment.RefundRequest{ChargeID: "ch_1", Amount: 1}); return err },
	}
	for name, op := range ops {
		t.Run(name+" fails as unavailable", func(t *testing.T) {
			t.Parallel()
			if err := op(); !errors.Is(err, payment.ErrUnavailable) {
				t.Errorf("err = %v, want ErrUnavailable", err)
			}
		})
	}
}

// TestStripeSaveMapsStripesAnswers: a token Stripe does not know is ErrInvalidToken, a
// card refused while being set up is declined, and one that needs 3-D Secure to be saved
// asks for action on its SetupIntent.
func TestStripeSaveMapsStripesAnswers(t *testing.T) {
	tests := []struct {
		name     string
		routes   map[string]stripeAnswer
		decline  *payment.DeclineError
		action   *payment.ActionRequiredError
		sentinel error
	}{
		{name: "an unknown token is invalid", sentinel: payment.ErrInvalidToken, routes: map[string]stripeAnswer{
			"POST /v1/payment_methods": {400, `{"error":{"type":"invalid_request_error","code":"resource_missing","param":"card[token]","message":"No such token: 'tok_nope'"}}`}}},
		{name: "a card refused at set-up is declined",
			decline: &payment.DeclineError{Code: "card_declined", DeclineCode: "insufficient_funds", Message: "Your card has insufficient funds."},
			routes: map[string]stripeAnswer{"POST /v1/payment_methods": {200, savedMethodJSON}, "POST /v1/customers": {200, customerJSON},
				"POST /v1/setup_intents": {402, insufficientJSON}}},
		{name: "a card that must authenticate to be saved asks for action",
			action: &payment.ActionRequiredError{SetupIntentID: "seti_3ds", ClientSecret: "seti_3ds_secret_x"},
			routes: map[string]stripeAnswer{"POST /v1/payment_methods": {200, savedMethodJSON}, "POST /v1/customers": {200, customerJSON},
				"POST /v1/setup_intents": {200, `{"id":"seti_3ds","object":"setup_intent","status":"requires_action","client_secret":"seti_3ds_secret_x"}`}}},
		{name: "a failing customer creation is retryable", sentinel: payment.ErrUnavailable,
			routes: map[string]stripeAnswer{"POST /v1/payment_methods": {200, savedMethodJSON}, "POST /v1/customers": {503, serverErrorJSON}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fakeStripe(t, tt.routes).SavePaymentMethod(context.Background(), payment.SaveRequest{Token: "tok_nope"})
			checkOutcome(t, err, tt.decline, tt.action, nil, tt.sentinel)
		})
	}
}

// TestStripeRefundMapsStripesAnswers: Stripe's refusals are RefundErrors under Stripe's
// codes, pending and succeeded refunds keep their status, a refund that failed at once is
// refused, and a fault on Stripe's side is retryable.
func TestStripeRefundMapsStripesAnswers(t *testing.T) {
	refusal := func(code, msg string) stripeAnswer {
		return stripeAnswer{400, `{"error":{"type":"invalid_request_error","code":"` + code + `","message":"` + msg + `"}}`}
	}
	tests := []struct {
		name     string
		answer   stripeAnswer
		want     payment.Refund
		refusal  *payment.RefundError
		sentinel error
	}{
		{name: "a settled refund succeeded", answer: stripeAnswer{200, `{"id":"re_1","object":"refund","amount":500,"status":"succeeded"}`},
			want: payment.Refund{ID: "re_1", Amount: 500, Status: payment.RefundSucceeded}},
		{name: "a refund still settling is pending", answer: stripeAnswer{200, `{"id":"re_1","object":"refund","amount":500,"status":"pending"}`},
			want: payment.Refund{ID: "re_1", Amount: 500, Status: payment.RefundPending}},
		{name: "a refund that failed at once is refused",
			answer:  stripeAnswer{200, `{"id":"re_1","object":"refund","amount":500,"status":"failed","failure_reason":"expired_or_canceled_card"}`},
			refusal: &payment.RefundError{Code: "expired_or_canceled_card", Message: "Refund re_1 is failed."}},
		{name: "a charge refunded already is refused", answer: refusal("charge_already_refunded", "Charge ch_1 has already been refunded."),
			refusal: &payment.RefundError{Code: "charge_already_refunded", Message: "Charge ch_1 has already been refunded."}},
		{name: "more than what is left is refused", answer: refusal("amount_too_large", "Refund amount is greater than unrefunded amount on charge."),
			refusal: &payment.RefundError{Code: "amount_too_large", Message: "Refund amount is greater than unrefunded amount on charge."}},
		{name: "a disputed charge is refused", answer: refusal("charge_disputed", "Charge ch_1 has been charged back."),
			refusal: &payment.RefundError{Code: "charge_disputed", Message: "Charge ch_1 has been charged back."}},
		{name: "an unknown charge is refused", answer: stripeAnswer{404, `{"error":{"type":"invalid_request_error","code":"resource_missing","message":"No such charge: 'ch_1'"}}`},
			refusal: &payment.RefundError{Code: "resource_missing", Message: "No such charge: 'ch_1'"}},
		{name: "a 500 from Stripe is retryable", answer: stripeAnswer{500, serverErrorJSON}, sentinel: payment.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := fakeStripe(t, map[string]stripeAnswer{"POST /v1/refunds": tt.answer})
			got, err := p.Refund(context.Background(), payment.RefundRequest{ChargeID: "ch_1", Amount: 500, Currency: "usd", IdempotencyKey: "k"})
			checkOutcome(t, err, nil, nil, tt.refusal, tt.sentinel)
			if got != tt.want {
				t.Errorf("refund = %+v, want %+v", got, tt.want)
			}
		})
	}
}
