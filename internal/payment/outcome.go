package payment

import (
	"errors"
	"fmt"
)

// ActionRequiredError is a payment the card holder must approve before it can go through
// (3-D Secure): the processor did not decline it, so nothing about the card is wrong, but
// no money moves until the customer completes the step on the processor's page with
// ClientSecret. SetupIntentID is set instead of PaymentIntentID when saving the card, not
// charging it, asked for the step.
type ActionRequiredError struct {
	PaymentIntentID string
	SetupIntentID   string
	ClientSecret    string
}

func (e *ActionRequiredError) Error() string {
	id := e.PaymentIntentID
	if id == "" {
		id = e.SetupIntentID
	}
	return fmt.Sprintf("payment %s needs the customer to authenticate", id)
}

// ErrUnavailable means the processor could not be reached or failed on its side (a
// network fault, a 5xx, a rate limit): the outcome is unknown, and retrying with the same
// idempotency key is safe and may succeed. Errors wrap it, so callers test it with
// errors.Is.
var ErrUnavailable = errors.New("payment: processor unavailable")
