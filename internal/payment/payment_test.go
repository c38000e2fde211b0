package payment_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"till/internal/payment"
)

func TestTestProcessorTokens(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name        string
		token       string
		last4       string
		wantDecline []string // decline code of each successive charge, "" for success
	}{
		{"a visa token charges successfully", payment.TokenVisa, "4242", []string{"", ""}},
		{"a mastercard token charges successfully", payment.TokenMastercard, "4444", []string{""}},
		{"a declined token declines every charge", payment.TokenChargeDeclined, "0002", []string{"generic_decline", "generic_decline"}},
		{"an insufficient-funds token declines with that reason", payment.TokenInsufficientFunds, "9995", []string{"insufficient_funds"}},
		{"a customer-fail token pays once and then declines", payment.TokenChargeCustomerFail, "0341", []string{"", "generic_decline", "generic_decline"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := payment.NewTestProcessor()
			m, err := p.SavePaymentMethod(ctx, payment.SaveRequest{Token: c.token})
			if err != nil {
				t.Fatal(err)
			}
			if m.Type != "card" || m.Last4 != c.last4 || m.ProcessorID == "" {
				t.Fatalf("method = %+v", m)
			}
			for i, want := range c.wantDecline {
				_, err := p.Charge(ctx, payment.ChargeRequest{Amount: 1000, Currency: "usd", PaymentMethodID: m.ProcessorID})
				var got string
				if d, ok := err.(*payment.DeclineError); ok {
					got = d.DeclineCode
				} else if err != nil {
					t.Fatalf("charge %d: %v", i, err)
				}
				if got != want {
					t.Fatalf("charge %d declined with %q, want %q", i, got, want)
				}
			}
		})
	}
}

func TestTestProcessorRejectsUnknownTokens(t *testing.T) {
	if _, err := payment.NewTestProcessor().SavePaymentMethod(context.Background(), payment.SaveRequest{Token: "tok_nope"}); err != payment.ErrInvalidToken {
		t.Fatalf("err = %v, want ErrInvalidToken", err)
	}
}

func TestTestProcessorChargesOncePerIdempotencyKey(t *testing.T) {
	ctx := context.Background()
	p := payment.NewTestProcessor()
	m, _ := p.SavePaymentMethod(ctx, payment.SaveRequest{Token: payment.TokenChargeCustomerFail})
	var wg sync.WaitGroup
	ids := make([]string, 50)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := p.Charge(ctx, payment.ChargeRequest{Amount: 500, Currency: "usd", PaymentMethodID: m.ProcessorID, IdempotencyKey: "renewal-1"})
			if err != nil {
				t.Errorf("charge: %v", err)
			}
			ids[i] = c.ID
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("one idempotency key produced charges %q and %q", ids[0], id)
		}
	}
	if _, err := p.Charge(ctx, payment.ChargeRequest{Amount: 500, Currency: "usd", PaymentMethodID: m.ProcessorID, IdempotencyKey: "renewal-2"}); !payment.IsDecline(err) {
		t.Fatalf("a second key charged again although the card stopped working: %v", err)
	}
}

func TestTestProcessorRefunds(t *testing.T) {
	ctx := context.Background()
	p := payment.NewTestProcessor()
	m, err := p.SavePaymentMethod(ctx, payment.SaveRequest{Token: payment.TokenVisa})
	if err != nil {
		t.Fatal(err)
	}
	charge, err := p.Charge(ctx, payment.ChargeRequest{Amount: 1000, Currency: "usd", PaymentMethodID: m.ProcessorID, IdempotencyKey: "order-1"})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name, chargeID, key string
		amount              int64
		refusal             string // "" when the refund goes through
	}{
		{"a part of the charge", charge.ID, "r1", 400, ""},
		{"the same key answers the first refund again", charge.ID, "r1", 400, ""},
		{"more than is left", charge.ID, "r2", 700, "amount_too_large"},
		{"exactly what is left", charge.ID, "r3", 600, ""},
		{"anything once nothing is left", charge.ID, "r4", 1, "charge_already_refunded"},
		{"a charge the processor never made", "ch_nope", "r5", 100, "resource_missing"},
	}
	var first string
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			r, err := p.Refund(ctx, payment.RefundRequest{ChargeID: s.chargeID, Amount: s.amount, Currency: "usd", IdempotencyKey: s.key})
			var refused *payment.RefundError
			switch {
			case s.refusal != "":
				if !errors.As(err, &refused) || refused.Code != s.refusal || refused.Message == "" {
					t.Fatalf("refund = %+v, %v; want refusal %s", r, err, s.refusal)
				}
			case err != nil:
				t.Fatal(err)
			case r.Amount != s.amount || r.Status != payment.RefundSucceeded || r.ID == "":
				t.Fatalf("refund = %+v", r)
			case s.key == "r1" && first != "" && r.ID != first:
				t.Fatalf("replayed key refunded again: %s then %s", first, r.ID)
			case s.key == "r1":
				first = r.ID
			}
		})
	}
}

func TestTestProcessorAsksForAuthentication(t *testing.T) {
	ctx := context.Background()
	p := payment.NewTestProcessor()
	m, err := p.SavePaymentMethod(ctx, payment.SaveRequest{Token: payment.TokenThreeDSecureRequired})
	if err != nil || m.Last4 != "3184" {
		t.Fatalf("saving: %+v, %v", m, err)
	}
	var intents []string
	for range 2 {
		_, err := p.Charge(ctx, payment.ChargeRequest{Amount: 1000, Currency: "usd", PaymentMethodID: m.ProcessorID, IdempotencyKey: "k"})
		var action *payment.ActionRequiredError
		if !errors.As(err, &action) || action.PaymentIntentID == "" || !strings.HasPrefix(action.ClientSecret, action.PaymentIntentID+"_secret_") {
			t.Fatalf("charge: %v, want an authentication step with the intent's client secret", err)
		}
		intents = append(intents, action.PaymentIntentID)
	}
	if intents[0] != intents[1] {
		t.Errorf("one key named intents %s and %s", intents[0], intents[1])
	}
}

func TestTestProcessorPaymentsThatFinishLater(t *testing.T) {
	type sent struct {
		typ, object string
		payload     map[string]any
	}
	for _, tc := range []struct {
		name, token string
		approve     bool   // the holder's answer to 3-D Secure
		wantType    string // the event the payment sends
		wantStatus  string // of the object in it
	}{
		{"3-D Secure passed", payment.TokenThreeDSecureRequired, true, "payment_intent.succeeded", "succeeded"},
		{"3-D Secure failed", payment.TokenThreeDSecureRequired, false, "payment_intent.payment_failed", "requires_payment_method"},
		{"a bank debit that settles", payment.TokenBankDebit, false, "payment_intent.succeeded", "succeeded"},
		{"a bank debit that fails", payment.TokenBankDebitInsufficient, false, "payment_intent.payment_failed", "requires_payment_method"},
		{"a charge that is disputed", payment.TokenCreateDispute, false, "charge.dispute.created", "needs_response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			p := payment.NewTestProcessor()
			var events []sent
			p.SetEventSink(func(_ context.Context, e payment.StripeEvent, payload []byte, _ time.Time) error {
				var m map[string]any
				if err := json.Unmarshal(payload, &m); err != nil {
					t.Fatal(err)
				}
				events = append(events, sent{e.Type, e.ObjectID, m})
				return nil
			})
			m, err := p.SavePaymentMethod(ctx, payment.SaveRequest{Token: tc.token})
			if err != nil {
				t.Fatal(err)
			}
			charge, err := p.Charge(ctx, payment.ChargeRequest{Amount: 1500, Currency: "eur", PaymentMethodID: m.ProcessorID, IdempotencyKey: "k"})
			var action *payment.ActionRequiredError
			if errors.As(err, &action) {
				in, err := p.AuthenticateTestPayment(ctx, action.ClientSecret, tc.approve)
				if err != nil || in.Succeeded != tc.approve || in.IntentID != action.PaymentIntentID {
					t.Fatalf("authenticating: %+v, %v", in, err)
				}
				again, _ := p.AuthenticateTestPayment(ctx, action.ClientSecret, !tc.approve)
				if again != in {
					t.Errorf("a second answer changed the outcome: %+v, then %+v", in, again)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Charge(ctx, payment.ChargeRequest{Amount: 1500, Currency: "eur", PaymentMethodID: m.ProcessorID, IdempotencyKey: "k"}); tc.approve && err != nil {
				t.Errorf("replaying the key after authentication: %v, want the settled charge", err)
			}
			if len(events) == 0 {
				t.Fatalf("no event sent (charge %+v)", charge)
			}
			first := events[0]
			object := first.payload["data"].(map[string]any)["object"].(map[string]any)
			if first.typ != tc.wantType || object["status"] != tc.wantStatus || object["amount"] != 1500.0 || object["currency"] != "eur" {
				t.Errorf("event %s with %v, want %s with status %s", first.typ, object, tc.wantType, tc.wantStatus)
			}
			for _, e := range events[1:] {
				if e.payload["id"] != first.payload["id"] && e.typ == first.typ {
					t.Errorf("a replay sent another event %v, want the same id %v", e.payload["id"], first.payload["id"])
				}
			}
		})
	}
	if _, err := payment.NewTestProcessor().AuthenticateTestPayment(context.Background(), "pi_test_x_secret_y", true); !errors.Is(err, payment.ErrUnknownIntent) {
		t.Errorf("unknown secret: %v, want ErrUnknownIntent", err)
	}
}

// TestTestProcessorCustomers: the test processor saves a method to the customer the request
// names, else to the Till customer's own record, whose id follows from the Till customer's
// so that every save for it lands on one record, else to a new one; and it refuses a charge
// naming another customer than the method's, as the processor does, charging nothing.
func TestTestProcessorCustomers(t *testing.T) {
	ctx := context.Background()
	p := payment.NewTestProcessor()
	save := func(t *testing.T, ref payment.CustomerRef) payment.Method {
		t.Helper()
		m, err := p.SavePaymentMethod(ctx, payment.SaveRequest{Token: payment.TokenChargeCustomerFail, Customer: ref})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(m.ProcessorCustomerID, "cus_test_") {
			t.Fatalf("saved to %q", m.ProcessorCustomerID)
		}
		return m
	}
	t.Run("saves for one Till customer land on one record, another Till customer has its own", func(t *testing.T) {
		a, b, other := save(t, payment.CustomerRef{TillID: "a"}), save(t, payment.CustomerRef{TillID: "a"}), save(t, payment.CustomerRef{TillID: "b"})
		if a.ProcessorCustomerID != b.ProcessorCustomerID || a.ProcessorCustomerID == other.ProcessorCustomerID {
			t.Errorf("records %s, %s and %s", a.ProcessorCustomerID, b.ProcessorCustomerID, other.ProcessorCustomerID)
		}
	})
	t.Run("a named record is kept, and buyers who are no customer get records of their own", func(t *testing.T) {
		if m := save(t, payment.CustomerRef{ProcessorID: "cus_test_named", TillID: "a"}); m.ProcessorCustomerID != "cus_test_named" {
			t.Errorf("saved to %s", m.ProcessorCustomerID)
		}
		if x, y := save(t, payment.CustomerRef{}), save(t, payment.CustomerRef{}); x.ProcessorCustomerID == y.ProcessorCustomerID {
			t.Errorf("two new buyers share %s", x.ProcessorCustomerID)
		}
	})
	t.Run("a charge naming another customer is refused and charges nothing", func(t *testing.T) {
		m := save(t, payment.CustomerRef{TillID: "c"})
		charge := func(customer, key string) error {
			_, err := p.Charge(ctx, payment.ChargeRequest{Amount: 500, Currency: "usd", PaymentMethodID: m.ProcessorID,
				ProcessorCustomerID: customer, IdempotencyKey: key})
			return err
		}
		if err := charge("cus_test_someone_else", "k1"); err == nil || payment.IsDecline(err) {
			t.Fatalf("charge naming another customer: %v, want a refusal", err)
		}
		// The card pays once and then declines: the refused charge did not count.
		if err := charge(m.ProcessorCustomerID, "k1"); err != nil {
			t.Fatalf("first charge after the refusal: %v", err)
		}
		if err := charge("", "k2"); !payment.IsDecline(err) {
			t.Fatalf("second charge, naming no customer: %v, want the card's decline", err)
		}
	})
}
