package payment

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Test tokens, named as the upstream processor's test mode names them. Each behaves the
// same way every time, so tests and sellers trying Till can reach every outcome on purpose.
const (
	TokenVisa                 = "tok_visa"                            // saves; charges succeed
	TokenMastercard           = "tok_mastercard"                      // saves; charges succeed
	TokenVisaApplePay         = "tok_visa_applepay"                   // saves with wallet apple_pay
	TokenChargeDeclined       = "tok_chargeDeclined"                  // saves; charges declined (generic_decline)
	TokenInsufficientFunds    = "tok_chargeDeclinedInsufficientFunds" // saves; charges declined (insufficient_funds)
	TokenChargeCustomerFail   = "tok_chargeCustomerFail"              // saves; first charge succeeds, later ones declined
	TokenThreeDSecureRequired = "tok_threeDSecure2Required"           // saves; every charge needs the holder to authenticate
	TokenCreateDispute        = "tok_createDispute"                   // saves; charges succeed, then the holder disputes each
	// Bank debits settle later: their charges are processing, and the outcome arrives as an
	// event.
	TokenBankDebit             = "pm_usBankAccount_success"           // saves; charges settle as paid
	TokenBankDebitInsufficient = "pm_usBankAccount_insufficientFunds" // saves; charges settle as failed
	testProcessorName          = "stripe"
	testMethodPrefix           = "pm_test_"
	testChargePrefix           = "ch_test_"
	testRefundPrefix           = "re_test_"
	testIntentPrefix           = "pi_test_"
	testCustomerPrefix         = "cus_test_"
	// authenticationFailed is the processor's code for a payment whose holder failed or
	// abandoned the 3-D Secure step.
	authenticationFailed          = "payment_intent_authentication_failure"
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
	// authenticate makes every charge wait for the holder's 3-D Secure step, as the
	// processor answers a card whose issuer requires it.
	authenticate bool
	// dispute opens a dispute of every charge once it went through.
	dispute bool
	// debit makes the method a bank debit whose charges are processing at first;
	// settleDecline is then the decline code they settle with ("" settles them paid).
	debit         bool
	settleDecline string
}

var applePay = "apple_pay"

var testCards = map[string]testCard{
	TokenVisa:                  {brand: "visa", last4: "4242"},
	TokenMastercard:            {brand: "mastercard", last4: "4444"},
	TokenVisaApplePay:          {brand: "visa", last4: "4242", wallet: &applePay},
	TokenChargeDeclined:        {brand: "visa", last4: "0002", decline: "generic_decline"},
	TokenInsufficientFunds:     {brand: "visa", last4: "9995", decline: "insufficient_funds"},
	TokenChargeCustomerFail:    {brand: "visa", last4: "0341", failAfterFirst: true},
	TokenThreeDSecureRequired:  {brand: "visa", last4: "3184", authenticate: true},
	TokenCreateDispute:         {brand: "visa", last4: "0259", dispute: true},
	TokenBankDebit:             {last4: "6789", debit: true},
	TokenBankDebitInsufficient: {last4: "9995", debit: true, settleDecline: "insufficient_funds"},
}

// TestProcessor simulates the processor's test mode. Saved methods keep their behaviour: a
// method saved from tok_chargeCustomerFail declines every charge after its first, which is
// how renewal failures are produced. What it remembers (each saved method's token and
// charges, each idempotency key's outcome) lives in a TestState: in memory for one process
// (NewTestProcessor), or in the database (NewTestProcessorIn), so that every process of an
// installation sees the same cards behave the same way, across restarts. It is safe for
// concurrent use.
type TestProcessor struct {
	state TestState
	// events is where the processor sends the events its payments cause later (a
	// dispute, a settled bank debit, a finished 3-D Secure step), as the real processor
	// sends webhooks; nil drops them.
	events atomic.Pointer[EventSink]
	// EventDelay is how long after the payment an event caused by it is delivered.
	EventDelay time.Duration
}

// TestState is where a TestProcessor keeps what it remembers.
type TestState interface {
	// SaveTestMethod remembers a saved method: the token it was made from and the customer
	// it was saved to.
	SaveTestMethod(ctx context.Context, m TestMethod) error
	// ChargeTestMethod charges a saved method once per idempotency key: for a key seen
	// before it returns that charge's outcome; otherwise it calls decide with the method
	// (known false for a method it never saved), counts the charge and keeps the outcome
	// under key. An error from decide charges nothing and keeps nothing. Calls with one key
	// or one method run one at a time.
	ChargeTestMethod(ctx context.Context, key, methodID string, decide func(m TestMethod, known bool) (TestOutcome, error)) (TestOutcome, error)
	// RefundTestCharge refunds a charge once per idempotency key: for a key seen before it
	// returns that refund; otherwise it calls decide with the charge's amount (known false
	// for a charge it never made) and what earlier refunds of it gave back, and keeps what
	// decide returns under key. Calls with one key or one charge run one at a time.
	RefundTestCharge(ctx context.Context, key, chargeID string, decide func(known bool, amount, refunded int64) TestRefund) (TestRefund, error)
	// SettleTestIntent finishes the charge waiting for its holder under clientSecret:
	// decide gets the charge as it stands and returns what it becomes, which is kept. A
	// charge no longer waiting is returned as it is, without calling decide;
	// ErrUnknownIntent when no charge has that secret.
	SettleTestIntent(ctx context.Context, clientSecret string, decide func(TestOutcome) TestOutcome) (TestOutcome, error)
}

// TestMethod is a saved test method: its id, its token, the customer it was saved to ("" for
// one saved before customers were kept) and how often it was charged.
type TestMethod struct {
	ID, Token, Customer string
	Charged             int
}

// TestRefund is one test refund: its id and amount when it went through, else the code of
// the refusal.
type TestRefund struct {
	RefundID string
	Amount   int64
	Refusal  string
}

// TestOutcome is one test charge: its id and amount when it went through, else the decline
// code. A charge that waits (Status requires_action or processing) has an intent; one
// processing already knows how it will settle.
type TestOutcome struct {
	ChargeID     string
	Amount       int64
	DeclineCode  string
	Currency     string
	Token        string // the token of the method charged
	Status       string // "", TestRequiresAction or TestProcessing
	IntentID     string
	ClientSecret string
}

// NewTestProcessor returns a test processor that remembers in this process's memory.
func NewTestProcessor() *TestProcessor {
	return NewTestProcessorIn(&memoryState{methods: map[string]TestMethod{}, charges: map[string]TestOutcome{},
		amounts: map[string]int64{}, refunds: map[string]TestRefund{}, refunded: map[string]int64{},
		waiting: map[string]string{}})
}

// NewTestProcessorIn returns a test processor that remembers in state.
func NewTestProcessorIn(state TestState) *TestProcessor {
	return &TestProcessor{state: state, EventDelay: defaultTestEventDelay}
}

// Name implements Processor.
func (p *TestProcessor) Name() string { return testProcessorName }

// SavePaymentMethod implements Processor. A request naming no processor customer gets the
// one of its Till customer, whose id follows from the Till customer's, so that every save
// for one Till customer, concurrent or not, lands on one customer as it does with the
// processor; a buyer not yet a Till customer gets a new one.
func (p *TestProcessor) SavePaymentMethod(ctx context.Context, req SaveRequest) (Method, error) {
	card, ok := testCards[req.Token]
	if !ok {
		return Method{}, ErrInvalidToken
	}
	customer := req.Customer.ProcessorID
	switch {
	case customer != "":
	case req.Customer.TillID != "":
		sum := sha256.Sum256([]byte("till customer\x00" + req.Customer.TillID))
		customer = testCustomerPrefix + hex.EncodeToString(sum[:12])
	default:
		customer = testCustomerPrefix + randomHex(12)
	}
	m := TestMethod{ID: testMethodPrefix + randomHex(12), Token: req.Token, Customer: customer}
	if err := p.state.SaveTestMethod(ctx, m); err != nil {
		return Method{}, err
	}
	return Method{ProcessorID: m.ID, ProcessorCustomerID: customer, Type: "card", Brand: card.brand, Last4: card.last4,
		ExpMonth: 12, ExpYear: 2034, Wallet: card.wallet}, nil
}

// Charge implements Processor. Methods it never saved (made before their state was kept,
// say) charge successfully, so test subscriptions keep renewing. A charge naming another
// customer than the method's is refused as the processor refuses it, charging nothing.
func (p *TestProcessor) Charge(ctx context.Context, req ChargeRequest) (Charge, error) {
	if req.Amount < 0 {
		return Charge{}, fmt.Errorf("payment: negative amount %d", req.Amount)
	}
	out, err := p.state.ChargeTestMethod(ctx, req.IdempotencyKey, req.PaymentMethodID, func(m TestMethod, known bool) (TestOutcome, error) {
		if known && m.Customer != "" && req.ProcessorCustomerID != "" && m.Customer != req.ProcessorCustomerID {
			return TestOutcome{}, fmt.Errorf("payment: method %s belongs to customer %s, not %s",
				req.PaymentMethodID, m.Customer, req.ProcessorCustomerID)
		}
		return decideTestCharge(req, m, known), nil
	})
	if err != nil {
		return Charge{}, err
	}
	switch {
	case out.Status == TestRequiresAction:
		return Charge{}, &ActionRequiredError{PaymentIntentID: out.IntentID, ClientSecret: out.ClientSecret}
	case out.Status == TestProcessing:
		// The event names the intent and is delivered once whatever the replays: a debit
		// settles when its event is handled, like the processor it imitates.
		if err := p.send(ctx, intentEvent(out), p.EventDelay); err != nil {
			return Charge{}, err
		}
		return Charge{ID: out.IntentID, Amount: out.Amount, Processing: true, IntentID: out.IntentID}, nil
	case out.DeclineCode != "":
		return Charge{}, declineOfTest(out.DeclineCode)
	case testCards[out.Token].dispute:
		if err := p.send(ctx, disputeEvent(out), p.EventDelay); err != nil {
			return Charge{}, err
		}
	}
	return Charge{ID: out.ChargeID, Amount: out.Amount}, nil
}

// decideTestCharge is the outcome of a first charge of m.
func decideTestCharge(req ChargeRequest, m TestMethod, known bool) TestOutcome {
	card := testCards[m.Token]
	out := TestOutcome{Amount: req.Amount, Currency: req.Currency, Token: m.Token}
	decline := card.decline
	if known && card.failAfterFirst && m.Charged > 0 {
		decline = "generic_decline"
	}
	switch {
	case decline != "":
		out.Amount, out.DeclineCode = 0, decline
	case card.authenticate:
		out.Status, out.IntentID = TestRequiresAction, testIntentPrefix+randomHex(12)
		out.ClientSecret = out.IntentID + "_secret_" + randomHex(12)
	case card.debit:
		out.Status, out.IntentID = TestProcessing, testIntentPrefix+randomHex(12)
		if out.DeclineCode = card.settleDecline; out.DeclineCode == "" {
			out.ChargeID = testChargePrefix + randomHex(12)
		}
	default:
		out.ChargeID = testChargePrefix + randomHex(12)
	}
	return out
}

// declineOfTest is the processor's refusal for a decline code.
func declineOfTest(code string) *DeclineError {
	msg := declineMessageGeneric
	switch code {
	case "insufficient_funds":
		msg = declineMessageInsufficientFun
	case authenticationFailed:
		return &DeclineError{Code: authenticationFailed, DeclineCode: authenticationFailed,
			Message: "We are unable to authenticate your payment method."}
	}
	return &DeclineError{Code: "card_declined", DeclineCode: code, Message: msg}
}

// Refund implements Processor. A test charge can be refunded up to its amount, in as many
// parts as the caller likes; more than what is left is refused as the processor refuses it
// (charge_already_refunded when nothing is left, else amount_too_large). Refunds settle at
// once.
func (p *TestProcessor) Refund(ctx context.Context, req RefundRequest) (Refund, error) {
	if req.Amount <= 0 {
		return Refund{}, fmt.Errorf("payment: refund of %d", req.Amount)
	}
	out, err := p.state.RefundTestCharge(ctx, req.IdempotencyKey, req.ChargeID, func(known bool, amount, refunded int64) TestRefund {
		switch left := amount - refunded; {
		case !known:
			return TestRefund{Refusal: "resource_missing"}
		case left <= 0:
			return TestRefund{Refusal: "charge_already_refunded"}
		case req.Amount > left:
			return TestRefund{Refusal: "amount_too_large"}
		}
		return TestRefund{RefundID: testRefundPrefix + randomHex(12), Amount: req.Amount}
	})
	if err != nil {
		return Refund{}, err
	}
	if out.Refusal != "" {
		return Refund{}, &RefundError{Code: out.Refusal, Message: refusalMessages[out.Refusal]}
	}
	return Refund{ID: out.RefundID, Amount: out.Amount, Status: RefundSucceeded}, nil
}

// refusalMessages are the processor's messages for the refusals a test refund can meet.
var refusalMessages = map[string]string{
	"resource_missing":        "No such charge.",
	"charge_already_refunded": "Charge has already been refunded.",
	"amount_too_large":        "Refund amount is greater than unrefunded amount on charge.",
}

// memoryState is a TestState for one process.
type memoryState struct {
	mu       sync.Mutex
	methods  map[string]TestMethod
	charges  map[string]TestOutcome // by idempotency key
	amounts  map[string]int64       // by charge id
	refunds  map[string]TestRefund  // by idempotency key
	refunded map[string]int64       // by charge id
	waiting  map[string]string      // idempotency keys of charges waiting for their holder, by client secret
}

func (m *memoryState) SaveTestMethod(_ context.Context, method TestMethod) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.methods[method.ID] = method
	return nil
}

func (m *memoryState) ChargeTestMethod(_ context.Context, key, methodID string, decide func(TestMethod, bool) (TestOutcome, error)) (TestOutcome, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev, ok := m.charges[key]; ok && key != "" {
		return prev, nil
	}
	method, known := m.methods[methodID]
	out, err := decide(method, known)
	if err != nil {
		return TestOutcome{}, err
	}
	if known {
		method.Charged++
		m.methods[methodID] = method
	}
	if key == "" {
		key = "unkeyed " + randomHex(12)
	}
	m.charges[key] = out
	if out.ClientSecret != "" {
		m.waiting[out.ClientSecret] = key
	}
	if out.ChargeID != "" {
		m.amounts[out.ChargeID] = out.Amount
	}
	return out, nil
}

func (m *memoryState) SettleTestIntent(_ context.Context, clientSecret string, decide func(TestOutcome) TestOutcome) (TestOutcome, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key, ok := m.waiting[clientSecret]
	if !ok {
		return TestOutcome{}, ErrUnknownIntent
	}
	out := m.charges[key]
	if out.Status != TestRequiresAction {
		return out, nil
	}
	out = decide(out)
	m.charges[key] = out
	if out.ChargeID != "" {
		m.amounts[out.ChargeID] = out.Amount
	}
	return out, nil
}

func (m *memoryState) RefundTestCharge(_ context.Context, key, chargeID string, decide func(bool, int64, int64) TestRefund) (TestRefund, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev, ok := m.refunds[key]; ok && key != "" {
		return prev, nil
	}
	amount, known := m.amounts[chargeID]
	out := decide(known, amount, m.refunded[chargeID])
	m.refunded[chargeID] += out.Amount
	if key != "" {
		m.refunds[key] = out
	}
	return out, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
