package payment

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v86/webhook"
)

// StripeEvent is a verified Stripe webhook event, reduced to what Till acts on: which
// event it is, what happened, when, and to which object. Object is the object as Stripe
// sent it, for a handler that needs more than its id.
type StripeEvent struct {
	ID       string
	Type     string // payment_intent.succeeded, charge.refunded, …
	Created  time.Time
	ObjectID string // data.object.id: pi_…, ch_…, re_…
	Object   json.RawMessage
}

// ErrStripeSignature means an event did not come from Stripe as far as Till can tell:
// no or a malformed Stripe-Signature header, no signature made with the endpoint's
// secret, or one made longer ago than stripeEventTolerance (a replay). Such a request is
// answered 400 and acted on in no way.
var ErrStripeSignature = errors.New("payment: Stripe event signature does not verify")

// ErrNoWebhookSecret means no signing secret is configured, so no event can be verified: an
// empty secret would verify signatures anyone can make.
var ErrNoWebhookSecret = errors.New("payment: no Stripe webhook secret is configured")

// stripeEventTolerance is how old a signature may be, Stripe's own default.
const stripeEventTolerance = webhook.DefaultTolerance

// VerifyStripeEvent checks that payload was signed by Stripe with secret no longer than
// five minutes before now, and reads the event from it. The signature is checked by
// stripe-go's webhook package; the age against now, so that callers with their own clock
// get the same answer as Stripe's library would at that time. The event is read here
// rather than by stripe-go, which refuses events of another API version than its own: an
// account upgraded on Stripe's side must not make Till drop its events.
func VerifyStripeEvent(payload []byte, signatureHeader, secret string, now time.Time) (StripeEvent, error) {
	if secret == "" {
		return StripeEvent{}, ErrNoWebhookSecret
	}
	if err := webhook.ValidatePayloadIgnoringTolerance(payload, signatureHeader, secret); err != nil {
		return StripeEvent{}, fmt.Errorf("%w: %v", ErrStripeSignature, err)
	}
	if signed := signedAt(signatureHeader); now.Sub(signed) > stripeEventTolerance {
		return StripeEvent{}, fmt.Errorf("%w: signed at %s, more than %s before %s", ErrStripeSignature,
			signed.UTC().Format(time.RFC3339), stripeEventTolerance, now.UTC().Format(time.RFC3339))
	}
	var raw struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Type    string `json:"type"`
		Created int64  `json:"created"`
		Data    struct {
			Object json.RawMessage `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(payload, &raw); err != nil {
		return StripeEvent{}, fmt.Errorf("payment: Stripe event: %w", err)
	}
	var object struct {
		ID string `json:"id"`
	}
	if len(raw.Data.Object) > 0 {
		if err := json.Unmarshal(raw.Data.Object, &object); err != nil {
			return StripeEvent{}, fmt.Errorf("payment: Stripe event %s: data.object: %w", raw.ID, err)
		}
	}
	if raw.Object != "event" || raw.ID == "" || raw.Type == "" || object.ID == "" {
		return StripeEvent{}, fmt.Errorf("payment: Stripe event: not an event with an id, a type and an object (object %q, id %q, type %q)",
			raw.Object, raw.ID, raw.Type)
	}
	return StripeEvent{ID: raw.ID, Type: raw.Type, Created: time.Unix(raw.Created, 0).UTC(), ObjectID: object.ID,
		Object: raw.Data.Object}, nil
}

// VerifyEvent verifies an event sent to this processor's webhook endpoint; see
// VerifyStripeEvent.
func (p *StripeProcessor) VerifyEvent(payload []byte, signatureHeader string, now time.Time) (StripeEvent, error) {
	return VerifyStripeEvent(payload, signatureHeader, p.webhookSecret, now)
}

// signedAt is the t= timestamp of a Stripe-Signature header (t=…,v1=…) whose signature
// has been verified, and so is well formed.
func signedAt(header string) time.Time {
	for part := range strings.SplitSeq(header, ",") {
		if v, ok := strings.CutPrefix(part, "t="); ok {
			if sec, err := strconv.ParseInt(v, 10, 64); err == nil {
				return time.Unix(sec, 0)
			}
		}
	}
	return time.Time{}
}
