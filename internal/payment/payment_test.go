package payment_test

import (
	"context"
	"sync"
	"testing"

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
			m, err := p.SavePaymentMethod(ctx, c.token)
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
	if _, err := payment.NewTestProcessor().SavePaymentMethod(context.Background(), "tok_nope"); err != payment.ErrInvalidToken {
		t.Fatalf("err = %v, want ErrInvalidToken", err)
	}
}

func TestTestProcessorChargesOncePerIdempotencyKey(t *testing.T) {
	ctx := context.Background()
	p := payment.NewTestProcessor()
	m, _ := p.SavePaymentMethod(ctx, payment.TokenChargeCustomerFail)
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
