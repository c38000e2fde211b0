package resolvers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"till/internal/jobs"
	"till/internal/payment"
	"till/storage"
)

// applyIntentOutcome settles what waits for a payment intent once Stripe says how it ended
// (payment_intent.succeeded or payment_intent.payment_failed): the holder passed or failed
// 3-D Secure, or a bank debit settled. What waits is a confirmed checkout or a pending
// order (a renewal, or the customer's retry of one). An intent nothing waits for (one
// charged during a request, or made on Stripe's dashboard) changes nothing.
func (r *Resolver) applyIntentOutcome(ctx context.Context, tx *sqlx.Tx, e *storage.ProcessorEvent) error {
	var event struct {
		Data struct {
			Object struct {
				ID               string          `json:"id"`
				Amount           int64           `json:"amount"`
				Currency         string          `json:"currency"`
				LatestCharge     json.RawMessage `json:"latest_charge"`
				LastPaymentError *struct {
					Code        string `json:"code"`
					DeclineCode string `json:"decline_code"`
					Message     string `json:"message"`
				} `json:"last_payment_error"`
			} `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(e.Payload, &event); err != nil {
		return jobs.Discard(fmt.Errorf("event %s: %w", e.ID, err))
	}
	pi := event.Data.Object
	in := payment.IntentOutcome{IntentID: pi.ID, Amount: pi.Amount, Currency: pi.Currency,
		Succeeded: e.Type == "payment_intent.succeeded"}
	if in.Succeeded {
		charge, ok := expandableID(pi.LatestCharge)
		if !ok {
			charge = pi.ID // a refund names the intent when Stripe named no charge
		}
		in.ChargeID = charge
	} else if f := pi.LastPaymentError; f != nil {
		in.DeclineCode, in.Message = f.DeclineCode, f.Message
		if in.DeclineCode == "" {
			in.DeclineCode = f.Code
		}
	}
	handled, err := r.settleCheckoutIntent(ctx, tx, in)
	if err != nil || handled {
		return err
	}
	_, err = r.settleOrderIntent(ctx, tx, e.Processor, in)
	return err
}

// ProcessorEventSink is where a processor that sends its own events (the test processor's
// disputes, settled bank debits and finished 3-D Secure steps) delivers them: kept and
// applied exactly as the events Stripe posts to the webhook endpoint. They are written on
// db, a pool apart from the one use cases hold while they call the processor, so a call
// never waits for a connection its own caller holds.
func (r *Resolver) ProcessorEventSink(db *sqlx.DB) payment.EventSink {
	return func(ctx context.Context, e payment.StripeEvent, payload []byte, at time.Time) error {
		return r.keepProcessorEvent(ctx, db, e, payload, &at)
	}
}

// testAuthenticator is the test processor, whose 3-D Secure page Till serves itself.
type testAuthenticator interface {
	AuthenticateTestPayment(ctx context.Context, clientSecret string, approve bool) (payment.IntentOutcome, error)
}

// AuthenticateTestPayment is the card holder passing (approve) or failing the 3-D Secure
// step of the test payment waiting under clientSecret, as on the processor's own test
// page; the outcome then settles what waits for it, through the processor's event. Only
// the test processor has such a page: under another, and for a secret no payment waits
// under, it is not found. The secret is the only credential, as it is on the processor's
// page.
func (r *Resolver) AuthenticateTestPayment(ctx context.Context, clientSecret string, approve bool) (payment.IntentOutcome, error) {
	tp, ok := r.payments.(testAuthenticator)
	if !ok {
		return payment.IntentOutcome{}, NotFound("Not Found")
	}
	out, err := tp.AuthenticateTestPayment(ctx, clientSecret, approve)
	if errors.Is(err, payment.ErrUnknownIntent) {
		return out, NotFound("Not Found")
	}
	return out, err
}
