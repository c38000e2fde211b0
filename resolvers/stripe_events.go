package resolvers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"till/internal/jobs"
	"till/internal/payment"
	"till/storage"
)

// JobStripeEvent applies one event Stripe sent to the webhook endpoint.
const JobStripeEvent = "stripe.event"

// Why the webhook endpoint refused an event; the handler answers each as upstream does.
var (
	// ErrStripeEndpointOff: Till does not run on Stripe, or has no signing secret, so no
	// event can be verified and the endpoint does not exist (404).
	ErrStripeEndpointOff = errors.New("resolvers: no Stripe webhook endpoint is configured")
	// ErrStripeEventMalformed: the body is not a Stripe event (400).
	ErrStripeEventMalformed = errors.New("resolvers: not a Stripe event")
)

// stripeEvents is a processor that receives Stripe's webhook events.
type stripeEvents interface {
	VerifyEvent(payload []byte, signatureHeader string, now time.Time) (payment.StripeEvent, error)
}

// Outcomes of applying an event, kept with it.
const (
	eventApplied    = "applied"
	eventSuperseded = "superseded" // a newer event about the same object was applied first
	eventIgnored    = "ignored"    // Till has nothing to do for this type
)

// ReceiveStripeEvent verifies an event Stripe sent, keeps it once however often it is
// delivered, and queues its application in the same transaction, so an acknowledged event
// is never lost and a redelivered one is never applied twice. A forged, replayed or
// malformed event changes nothing: payment.ErrStripeSignature, ErrStripeEventMalformed (a
// request without a signature header is one), or ErrStripeEndpointOff when no event can be
// verified at all; the checks run in that order of precedence, endpoint first, as upstream's.
func (r *Resolver) ReceiveStripeEvent(ctx context.Context, payload []byte, signatureHeader string) error {
	verifier, ok := r.payments.(stripeEvents)
	if !ok {
		return ErrStripeEndpointOff
	}
	e, err := verifier.VerifyEvent(payload, signatureHeader, r.Now())
	switch {
	case errors.Is(err, payment.ErrNoWebhookSecret):
		return ErrStripeEndpointOff
	case err != nil && signatureHeader == "":
		return fmt.Errorf("%w: no Stripe-Signature header", ErrStripeEventMalformed)
	case errors.Is(err, payment.ErrStripeSignature):
		return err
	case err != nil:
		return fmt.Errorf("%w: %v", ErrStripeEventMalformed, err)
	}
	return r.keepProcessorEvent(ctx, r.db, e, withoutNUL(payload), nil)
}

// withoutNUL is payload with each NUL character in its strings replaced by U+FFFD: Stripe
// may send one (in metadata a seller wrote), and PostgreSQL keeps none in jsonb. The
// signature was checked on the bytes Stripe sent.
func withoutNUL(payload []byte) []byte {
	if !bytes.Contains(payload, []byte(`\u0000`)) {
		return payload
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return payload
	}
	out, err := json.Marshal(replaceNUL(v))
	if err != nil {
		return payload
	}
	return out
}

func replaceNUL(v any) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, "\x00", "\uFFFD")
	case []any:
		for i := range x {
			x[i] = replaceNUL(x[i])
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[strings.ReplaceAll(k, "\x00", "\uFFFD")] = replaceNUL(e)
		}
		return out
	}
	return v
}

// keepProcessorEvent keeps a processor's event once, however often it comes, and queues its
// application in the same transaction, to run no earlier than at (now when nil).
func (r *Resolver) keepProcessorEvent(ctx context.Context, db *sqlx.DB, e payment.StripeEvent, payload []byte, at *time.Time) error {
	return storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
		fresh, err := storage.RecordProcessorEvent(ctx, tx, storage.ProcessorEvent{Processor: r.payments.Name(), ID: e.ID,
			Type: e.Type, ObjectID: e.ObjectID, Created: e.Created, Payload: storage.RawJSON(payload)})
		if err != nil || !fresh {
			return err
		}
		key := JobStripeEvent + ":" + e.ID
		_, _, err = storage.InsertJob(ctx, tx, storage.JobInsert{Kind: JobStripeEvent, Args: stripeEventArgs{ID: e.ID},
			UniqueKey: &key, ScheduledAt: at})
		return err
	})
}

type stripeEventArgs struct {
	ID string `json:"id"`
}

// applyStripeEventJob applies a kept event. Events about one object are applied one at a
// time, and one older than another kept about its object is left unapplied: Stripe sends
// each object whole, so the newest state wins whatever order the events came or were
// applied in.
func (r *Resolver) applyStripeEventJob(ctx context.Context, tx *sqlx.Tx, job *storage.Job) error {
	var args stripeEventArgs
	if err := jobs.DecodeArgs(job, &args); err != nil {
		return err
	}
	e, err := storage.LockProcessorEvent(ctx, tx, r.payments.Name(), args.ID)
	if errors.Is(err, storage.ErrNotFound) {
		return jobs.Discard(fmt.Errorf("no kept event %s", args.ID))
	}
	if err != nil || e.AppliedAt != nil {
		return err
	}
	outcome, appliers := eventIgnored, r.stripeEventAppliers()
	if newer, err := storage.NewerProcessorEventKept(ctx, tx, e, slices.Collect(maps.Keys(appliers))); err != nil {
		return err
	} else if newer {
		outcome = eventSuperseded
	} else if apply := appliers[e.Type]; apply != nil {
		if err := apply(ctx, tx, e); err != nil {
			return err
		}
		outcome = eventApplied
	}
	return storage.MarkProcessorEventApplied(ctx, tx, e.Processor, e.ID, outcome, r.Now())
}

// stripeEventAppliers are the event types Till acts on, each with what it does.
func (r *Resolver) stripeEventAppliers() map[string]func(context.Context, *sqlx.Tx, *storage.ProcessorEvent) error {
	return map[string]func(context.Context, *sqlx.Tx, *storage.ProcessorEvent) error{
		"payment_method.automatically_updated": r.applyCardUpdate,
		"payment_method.updated":               r.applyCardUpdate,
		"refund.created":                       r.applyRefundUpdate,
		"refund.updated":                       r.applyRefundUpdate,
		"refund.failed":                        r.applyRefundUpdate,
		"charge.refund.updated":                r.applyRefundUpdate,
		"charge.dispute.created":               r.applyDisputeUpdate,
		"charge.dispute.updated":               r.applyDisputeUpdate,
		"charge.dispute.closed":                r.applyDisputeUpdate,
		"payment_intent.succeeded":             r.applyIntentOutcome,
		"payment_intent.payment_failed":        r.applyIntentOutcome,
	}
}

// applyCardUpdate takes a card's new details (the issuer replaced it, or it was renewed)
// onto the saved methods that are that card, and announces each customer's change.
func (r *Resolver) applyCardUpdate(ctx context.Context, tx *sqlx.Tx, e *storage.ProcessorEvent) error {
	var event struct {
		Data struct {
			Object struct {
				ID   string `json:"id"`
				Card *struct {
					Brand    string `json:"brand"`
					Last4    string `json:"last4"`
					ExpMonth int    `json:"exp_month"`
					ExpYear  int    `json:"exp_year"`
				} `json:"card"`
			} `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(e.Payload, &event); err != nil {
		return jobs.Discard(fmt.Errorf("event %s: %w", e.ID, err))
	}
	card := event.Data.Object.Card
	if card == nil || card.Last4 == "" {
		return nil
	}
	updated, err := storage.UpdateCardsAtProcessor(ctx, tx, e.Processor, event.Data.Object.ID, storage.CardUpdate{
		Brand: card.Brand, Last4: card.Last4, ExpMonth: card.ExpMonth, ExpYear: card.ExpYear}, r.Now())
	if err != nil {
		return err
	}
	for _, m := range updated {
		if err := r.emit(ctx, tx, m.OrganizationID, "customer.updated", m.CustomerID); err != nil {
			return err
		}
	}
	return nil
}

// applyRefundUpdate takes a refund's status at Stripe onto the refund Till made: a refund
// that settles later (pending, then succeeded) counts on its order only then, with the
// order's events; one that fails or is canceled is only marked so. Either change announces
// refund.updated. A refund Till did not make (one issued on Stripe's dashboard) is left
// alone.
func (r *Resolver) applyRefundUpdate(ctx context.Context, tx *sqlx.Tx, e *storage.ProcessorEvent) error {
	var event struct {
		Data struct {
			Object struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			} `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(e.Payload, &event); err != nil {
		return jobs.Discard(fmt.Errorf("event %s: %w", e.ID, err))
	}
	status := storage.RefundStatus(event.Data.Object.Status)
	switch status {
	case storage.RefundStatusPending, storage.RefundStatusSucceeded, storage.RefundStatusFailed, storage.RefundStatusCanceled:
	default:
		return nil // requires_action and statuses Till does not track
	}
	ref, err := storage.LockRefundAtProcessor(ctx, tx, e.Processor, event.Data.Object.ID)
	if errors.Is(err, storage.ErrNotFound) || err == nil && ref.Status == status {
		return nil
	}
	if err != nil {
		return err
	}
	was := ref.Status
	if ref, err = storage.SetRefundStatus(ctx, tx, ref.ID, status, r.Now()); err != nil {
		return err
	}
	if err := r.emit(ctx, tx, ref.OrganizationID, "refund.updated", ref.ID); err != nil {
		return err
	}
	if was != storage.RefundStatusPending || status != storage.RefundStatusSucceeded {
		return nil
	}
	return r.countRefund(ctx, tx, ref)
}
