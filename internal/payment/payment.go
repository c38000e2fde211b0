// Package payment is Till's boundary with payment processors: saving a customer's payment
// instrument from a client-side token and charging a saved instrument. Use cases see only
// the Processor interface; the built-in TestProcessor simulates the upstream processor's
// test mode (Stripe) deterministically so checkouts, renewals and failures can be exercised
// without a network.
package payment

import (
	"context"
	"errors"
	"fmt"
)

// Processor saves payment methods, charges them and refunds charges.
type Processor interface {
	// Name is the processor's wire name, as /v1 reports it in processor fields.
	Name() string
	// SavePaymentMethod turns a client-side payment token into an instrument saved to the
	// request's customer at the processor, creating that customer when the request names
	// none of the processor's.
	SavePaymentMethod(ctx context.Context, req SaveRequest) (Method, error)
	// Charge takes money from a saved instrument. Calls with the same IdempotencyKey charge
	// at most once and return the first outcome.
	Charge(ctx context.Context, req ChargeRequest) (Charge, error)
	// Refund gives back part or all of a charge. Calls with the same IdempotencyKey refund
	// at most once and return the first outcome; a refund the processor refuses outright is
	// a *RefundError.
	Refund(ctx context.Context, req RefundRequest) (Refund, error)
}

// SaveRequest asks to save the instrument behind a client-side token for a customer.
type SaveRequest struct {
	Token    string
	Customer CustomerRef
}

// CustomerRef names the customer a method is saved for. The processor keeps its own record
// of a customer, which holds the customer's methods and which every charge of them names;
// Till keeps that record's id on its customer so that all of a customer's methods are saved
// to one record.
type CustomerRef struct {
	// ProcessorID is the processor's id of the customer, "" when Till has none yet: the
	// processor then creates one, and Method.ProcessorCustomerID tells which.
	ProcessorID string
	// TillID is the Till customer's id, "" when the customer does not exist yet (a checkout
	// whose buyer is new). Concurrent saves for one Till customer without a ProcessorID
	// create one processor customer, not one each.
	TillID string
	// Email and Name describe a customer the processor creates ("" for unknown).
	Email string
	Name  string
}

// Method is a saved instrument as the processor describes it.
type Method struct {
	ProcessorID string
	// ProcessorCustomerID is the processor's customer the method is saved to, which every
	// charge of the method names.
	ProcessorCustomerID string
	Type                string // card, or the processor's name for another kind
	Brand               string
	Last4               string
	ExpMonth            int
	ExpYear             int
	Wallet              *string // apple_pay, google_pay, … when the card came through a wallet
}

// ChargeRequest asks for one payment.
type ChargeRequest struct {
	Amount          int64 // in the currency's minor unit
	Currency        string
	PaymentMethodID string // Method.ProcessorID
	// ProcessorCustomerID is Method.ProcessorCustomerID; "" for a method saved before Till
	// kept it, whose customer the processor then looks up.
	ProcessorCustomerID string
	// MethodType is Method.Type; "" for a card.
	MethodType     string
	IdempotencyKey string
	Description    string
}

// Charge is a payment the processor took, or accepted to settle later.
type Charge struct {
	ID     string
	Amount int64
	// Processing is set when the method settles later (a bank debit): no money is taken
	// yet, and the processor reports the outcome of IntentID as an event.
	Processing bool
	IntentID   string
}

// RefundRequest asks to give back Amount of a charge.
type RefundRequest struct {
	ChargeID       string // Charge.ID
	Amount         int64  // in the charge's minor unit, at most what is left of it
	Currency       string
	IdempotencyKey string
	// Reason is the processor's vocabulary: duplicate, fraudulent or requested_by_customer.
	Reason string
}

// Refund statuses, as the processor reports them: a refund may settle later (pending), and
// one that was pending may still fail or be canceled.
const (
	RefundPending   = "pending"
	RefundSucceeded = "succeeded"
	RefundFailed    = "failed"
	RefundCanceled  = "canceled"
)

// Refund is a refund the processor accepted.
type Refund struct {
	ID     string
	Amount int64
	Status string // RefundPending or RefundSucceeded
}

// RefundError is a refund the processor refused (the charge is disputed, already refunded,
// ...); Code is the processor's error code.
type RefundError struct {
	Code    string
	Message string
}

func (e *RefundError) Error() string {
	return fmt.Sprintf("refund refused (%s): %s", e.Code, e.Message)
}

// DeclineError is a payment the processor refused; Code and DeclineCode use the upstream
// processor's vocabulary (card_declined / generic_decline, insufficient_funds, …).
type DeclineError struct {
	Code        string
	DeclineCode string
	Message     string
}

func (e *DeclineError) Error() string {
	return fmt.Sprintf("payment declined (%s): %s", e.DeclineCode, e.Message)
}

// ErrInvalidToken means the token names no instrument the processor knows.
var ErrInvalidToken = errors.New("payment: unknown payment token")

// IsDecline reports whether err is a refused payment (as opposed to a fault).
func IsDecline(err error) bool {
	var d *DeclineError
	return errors.As(err, &d)
}
