package payment

// IntentOutcome is the final state of a payment intent the processor reports later: the customer finished (or abandoned) a 3-D Secure step, or an asynchronous payment method settled.
type IntentOutcome struct {
	IntentID    string // pi_...
	ChargeID    string // the charge that took the money; "" when it failed
	Amount      int64
	Currency    string
	Succeeded   bool
	DeclineCode string // when it failed
	Message     string // when it failed
}
