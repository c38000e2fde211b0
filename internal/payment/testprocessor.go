package payment

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
)

// Test tokens, named as the upstream processor's test mode names them. Each behaves the
// same way every time, so tests and sellers trying Till can reach every outcome on purpose.
const (
	TokenVisa                     = "tok_visa"                            // saves; charges succeed
	TokenMastercard               = "tok_mastercard"                      // saves; charges succeed
	TokenVisaApplePay             = "tok_visa_applepay"                   // saves with wallet apple_pay
	TokenChargeDeclined           = "tok_chargeDeclined"                  // saves; charges declined (generic_decline)
	TokenInsufficientFunds        = "tok_chargeDeclinedInsufficientFunds" // saves; charges declined (insufficient_funds)
	TokenChargeCustomerFail       = "tok_chargeCustomerFail"              // saves; first charge succeeds, later ones declined
	testProcessorName             = "stripe"
	testMethodPrefix              = "pm_test_"
	testChargePrefix              = "ch_test_"
	declineMessageGeneric         = "Your card was declined."
	declineMessageInsufficientFun = "Your card has insufficient funds."
)

// testCard is what a test token stands for.
type testCard struct {
	brand, last4 string
	wallet       *string
	decline      string // "" succeeds, else the decline code of every charge
	// failAfterFirst declines every charge after the first, like a card that stops working
	// between a purchase and its renewal.
	failAfterFirst bool
	charged        int
}

var applePay = "apple_pay"

var testCards = map[string]testCard{
	TokenVisa:               {brand: "visa", last4: "4242"},
	TokenMastercard:         {brand: "mastercard", last4: "4444"},
	TokenVisaApplePay:       {brand: "visa", last4: "4242", wallet: &applePay},
	TokenChargeDeclined:     {brand: "visa", last4: "0002", decline: "generic_decline"},
	TokenInsufficientFunds:  {brand: "visa", last4: "9995", decline: "insufficient_funds"},
	TokenChargeCustomerFail: {brand: "visa", last4: "0341", failAfterFirst: true},
}

// TestProcessor simulates the processor's test mode in memory. Saved methods keep their
// behaviour: a method saved from tok_chargeCustomerFail declines every charge, which is how
// renewal failures are produced. It is safe for concurrent use.
type TestProcessor struct {
	mu      sync.Mutex
	methods map[string]testCard
	charges map[string]chargeOutcome // by idempotency key
}

type chargeOutcome struct {
	charge Charge
	err    error
}

// NewTestProcessor returns an empty test processor.
func NewTestProcessor() *TestProcessor {
	return &TestProcessor{methods: map[string]testCard{}, charges: map[string]chargeOutcome{}}
}

// Name implements Processor.
func (p *TestProcessor) Name() string { return testProcessorName }

// SavePaymentMethod implements Processor.
func (p *TestProcessor) SavePaymentMethod(_ context.Context, token string) (Method, error) {
	card, ok := testCards[token]
	if !ok {
		return Method{}, ErrInvalidToken
	}
	id := testMethodPrefix + randomHex(12)
	p.mu.Lock()
	p.methods[id] = card
	p.mu.Unlock()
	return Method{ProcessorID: id, Type: "card", Brand: card.brand, Last4: card.last4, ExpMonth: 12,
		ExpYear: 2034, Wallet: card.wallet}, nil
}

// Charge implements Processor. Methods not saved by this process (for example after a
// restart) are looked up by nothing but their id and charge successfully, so a restarted
// server keeps renewing test subscriptions.
func (p *TestProcessor) Charge(_ context.Context, req ChargeRequest) (Charge, error) {
	if req.Amount < 0 {
		return Charge{}, fmt.Errorf("payment: negative amount %d", req.Amount)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if req.IdempotencyKey != "" {
		if prev, ok := p.charges[req.IdempotencyKey]; ok {
			return prev.charge, prev.err
		}
	}
	var out chargeOutcome
	card, known := p.methods[req.PaymentMethodID]
	decline := card.decline
	if card.failAfterFirst && card.charged > 0 {
		decline = "generic_decline"
	}
	if known {
		card.charged++
		p.methods[req.PaymentMethodID] = card
	}
	if decline != "" {
		msg := declineMessageGeneric
		if decline == "insufficient_funds" {
			msg = declineMessageInsufficientFun
		}
		out.err = &DeclineError{Code: "card_declined", DeclineCode: decline, Message: msg}
	} else {
		out.charge = Charge{ID: testChargePrefix + randomHex(12), Amount: req.Amount}
	}
	if req.IdempotencyKey != "" {
		p.charges[req.IdempotencyKey] = out
	}
	return out.charge, out.err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
