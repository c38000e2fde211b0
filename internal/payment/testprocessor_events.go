package payment

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"
)

// Statuses of a test charge that waits.
const (
	TestRequiresAction = "requires_action" // for the holder's 3-D Secure step
	TestProcessing     = "processing"      // a bank debit, until its event settles it
)

// defaultTestEventDelay is how long after a payment the test processor delivers the event
// it causes: long enough for the use case that charged to have committed, as the real
// processor's webhooks arrive after the API call returned.
const defaultTestEventDelay = 3 * time.Second

// ErrUnknownIntent means no payment waits for its holder under the client secret given.
var ErrUnknownIntent = errors.New("payment: no payment intent with that client secret")

// EventSink takes an event a processor sends on its own, in the form of Stripe's webhook
// events, to be handled no earlier than deliverAt.
type EventSink func(ctx context.Context, e StripeEvent, payload []byte, deliverAt time.Time) error

// SetEventSink names where the processor sends its events.
func (p *TestProcessor) SetEventSink(sink EventSink) { p.events.Store(&sink) }

// send delivers an event after delay; an event without a sink is dropped, as a processor
// with no webhook endpoint configured drops them.
func (p *TestProcessor) send(ctx context.Context, e StripeEvent, delay time.Duration) error {
	sink := p.events.Load()
	if sink == nil {
		return nil
	}
	payload, err := json.Marshal(map[string]any{"id": e.ID, "object": "event", "type": e.Type,
		"created": e.Created.Unix(), "livemode": false, "data": map[string]any{"object": e.Object}})
	if err != nil {
		return err
	}
	return (*sink)(ctx, e, payload, time.Now().Add(delay))
}

// AuthenticateTestPayment is the holder finishing (approve) or failing the 3-D Secure step
// of the charge waiting under clientSecret, as on the processor's test page. The outcome is
// kept, answers replays of the charge, and is sent at once as the processor's event; a
// charge already settled is answered as it settled.
func (p *TestProcessor) AuthenticateTestPayment(ctx context.Context, clientSecret string, approve bool) (IntentOutcome, error) {
	out, err := p.state.SettleTestIntent(ctx, clientSecret, func(o TestOutcome) TestOutcome {
		o.Status = ""
		if approve {
			o.ChargeID = testChargePrefix + randomHex(12)
		} else {
			o.DeclineCode = authenticationFailed
		}
		return o
	})
	if err != nil {
		return IntentOutcome{}, err
	}
	if out.Status != "" {
		return IntentOutcome{}, ErrUnknownIntent
	}
	if err := p.send(ctx, intentEvent(out), 0); err != nil {
		return IntentOutcome{}, err
	}
	return intentOutcomeOf(out), nil
}

// intentOutcomeOf is how a settled test charge ended.
func intentOutcomeOf(o TestOutcome) IntentOutcome {
	in := IntentOutcome{IntentID: o.IntentID, ChargeID: o.ChargeID, Amount: o.Amount, Currency: o.Currency,
		Succeeded: o.DeclineCode == ""}
	if !in.Succeeded {
		d := declineOfTest(o.DeclineCode)
		in.DeclineCode, in.Message = d.DeclineCode, d.Message
	}
	return in
}

// testEventID names the event of one change of one object, the same each time it is made,
// so a repeated send is kept once.
func testEventID(typ, objectID string) string {
	sum := sha256.Sum256([]byte(typ + "\x00" + objectID))
	return "evt_test_" + hex.EncodeToString(sum[:12])
}

// intentEvent is payment_intent.succeeded or payment_intent.payment_failed for a settled
// (or settling) charge, with the intent as the processor shows it.
func intentEvent(o TestOutcome) StripeEvent {
	in := intentOutcomeOf(o)
	object := map[string]any{"id": o.IntentID, "object": "payment_intent", "amount": o.Amount,
		"currency": o.Currency, "status": "succeeded", "latest_charge": nil, "last_payment_error": nil}
	typ := "payment_intent.succeeded"
	if in.Succeeded {
		object["latest_charge"] = o.ChargeID
	} else {
		typ, object["status"] = "payment_intent.payment_failed", "requires_payment_method"
		object["last_payment_error"] = map[string]any{"code": declineOfTest(o.DeclineCode).Code,
			"decline_code": in.DeclineCode, "message": in.Message}
	}
	return testEvent(typ, o.IntentID, object)
}

// disputeEvent is charge.dispute.created for a charge of a tok_createDispute card: the
// holder disputes all of it as fraudulent, and the seller has a week to answer.
func disputeEvent(o TestOutcome) StripeEvent {
	sum := sha256.Sum256([]byte(o.ChargeID))
	id := "dp_test_" + hex.EncodeToString(sum[:12])
	object := map[string]any{"id": id, "object": "dispute", "charge": o.ChargeID, "amount": o.Amount,
		"currency": o.Currency, "status": "needs_response", "reason": "fraudulent",
		"evidence_details": map[string]any{"due_by": time.Now().Add(7 * 24 * time.Hour).Unix(), "past_due": false}}
	return testEvent("charge.dispute.created", id, object)
}

func testEvent(typ, objectID string, object map[string]any) StripeEvent {
	raw, _ := json.Marshal(object)
	return StripeEvent{ID: testEventID(typ, objectID), Type: typ, Created: time.Now().UTC(), ObjectID: objectID, Object: raw}
}
