package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stripe/stripe-go/v86/webhook"

	"till/internal/jobs"
	"till/internal/payment"
	"till/resolvers"
	"till/resolvers/resolverstest"
)

const (
	stripeWebhookPath   = "/v1/integrations/stripe/webhook"
	stripeWebhookSecret = "whsec_till_test"
)

// onStripe builds the application on the Stripe processor with a webhook secret. No call
// reaches Stripe: the endpoint only verifies what it receives.
func onStripe(tb testing.TB) resolverstest.Option {
	sp, err := payment.NewStripe(payment.StripeConfig{SecretKey: "sk_test_till", WebhookSecret: stripeWebhookSecret})
	if err != nil {
		tb.Fatal(err)
	}
	return func(d *resolvers.Deps) { d.Payments = sp }
}

// cardEvent is a Stripe event about a card's new details.
func cardEvent(id, typ, pm, last4 string, created time.Time) string {
	return fmt.Sprintf(`{"id":%q,"object":"event","type":%q,"created":%d,"api_version":"2025-01-27",
		"data":{"object":{"id":%q,"object":"payment_method","type":"card",
		"card":{"brand":"visa","last4":%q,"exp_month":3,"exp_year":2031}}}}`, id, typ, created.Unix(), pm, last4)
}

// signed is a delivery of payload signed with secret at signedAt, as Stripe sends it.
func signed(payload, secret string, signedAt time.Time) call {
	p := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: []byte(payload), Secret: secret, Timestamp: signedAt})
	return call{method: http.MethodPost, target: stripeWebhookPath, body: payload,
		header: map[string]string{"Stripe-Signature": p.Header, "Content-Type": "application/json"}}
}

func TestStripeWebhookRefusesWhatStripeDidNotSign(t *testing.T) {
	t.Parallel()
	s := newV1(t, onStripe(t))
	now := time.Now()
	event := cardEvent("evt_refused", "payment_method.updated", "pm_x", "4242", now)
	unsigned := signed(event, stripeWebhookSecret, now)
	delete(unsigned.header, "Stripe-Signature")
	cases := []struct {
		name   string
		call   call
		status int
		detail string
	}{
		{"no signature header", unsigned, 400, "Bad Request"},
		{"signed with another secret", signed(event, "whsec_forged", now), 401, "Unauthorized"},
		{"signed ten minutes ago (a replay)", signed(event, stripeWebhookSecret, now.Add(-10*time.Minute)), 401, "Unauthorized"},
		{"a signed body that is no event", signed(`{"hello":"world"}`, stripeWebhookSecret, now), 400, "Bad Request"},
		{"a signed body that is no JSON", signed(`not json`, stripeWebhookSecret, now), 400, "Bad Request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := s.do(t, tc.call)
			want{status: tc.status, detail: tc.detail}.check(t, rec)
		})
	}
	var kept int
	if err := s.DB.Get(&kept, `SELECT count(*) FROM processor_events`); err != nil || kept != 0 {
		t.Fatalf("refused deliveries kept %d events (%v)", kept, err)
	}
}

func TestStripeWebhookIsAbsentWithoutStripe(t *testing.T) {
	t.Parallel()
	s := newV1(t) // the built-in test processor
	now := time.Now()
	rec := s.do(t, signed(cardEvent("evt_off", "payment_method.updated", "pm_x", "4242", now), stripeWebhookSecret, now))
	want{status: 404, detail: "Not Found"}.check(t, rec)
}

// TestStripeWebhookAppliesEachEventOnceNewestFirst delivers events as Stripe may: twice,
// and a newer one before an older one about the same card, the older one arriving after
// the newer was applied. Each is kept once, and the card ends with the newest details.
func TestStripeWebhookAppliesEachEventOnceNewestFirst(t *testing.T) {
	t.Parallel()
	s := newV1(t, onStripe(t))
	o := s.NewOrg(t, "customers:read")
	c := s.NewCustomer(t, o.ID, "")
	methodID := s.AddCard(t, o.ID, c.ID, "4242", 0)
	var processorID string
	if err := s.DB.Get(&processorID, `SELECT processor_id FROM payment_methods WHERE id = $1`, methodID); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	older := cardEvent("evt_older", "payment_method.automatically_updated", processorID, "1111", now.Add(-time.Minute))
	newer := cardEvent("evt_newer", "payment_method.automatically_updated", processorID, "2222", now)
	other := cardEvent("evt_other", "charge.succeeded", "ch_1", "", now)
	worker := &jobs.Worker{DB: s.DB, Handlers: s.Resolver.JobHandlers()}
	for _, deliveries := range [][]string{{newer, newer}, {other, older}, {newer}} {
		for _, delivery := range deliveries {
			rec := s.do(t, signed(delivery, stripeWebhookSecret, time.Now()))
			if rec.Code != http.StatusAccepted || rec.Body.String() != "null" {
				t.Fatalf("delivery answered %d %s, want 202 null", rec.Code, rec.Body)
			}
		}
		if _, err := worker.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	outcomes := map[string]string{}
	rows, err := s.DB.Query(`SELECT id, coalesce(outcome, '') FROM processor_events`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, outcome string
		if err := rows.Scan(&id, &outcome); err != nil {
			t.Fatal(err)
		}
		outcomes[id] = outcome
	}
	if want := map[string]string{"evt_newer": "applied", "evt_older": "superseded", "evt_other": "ignored"}; fmt.Sprint(outcomes) != fmt.Sprint(want) {
		t.Errorf("outcomes %v, want %v", outcomes, want)
	}
	var last4 string
	if err := s.DB.Get(&last4, `SELECT last4 FROM payment_methods WHERE id = $1`, methodID); err != nil || last4 != "2222" {
		t.Errorf("card ends as %q (%v), want the newest event's 2222", last4, err)
	}
	var announced int
	if err := s.DB.Get(&announced, `SELECT count(*) FROM domain_events WHERE type = 'customer.updated' AND object_id = $1`,
		uuid.UUID(c.ID)); err != nil || announced != 1 {
		t.Errorf("customer.updated announced %d times (%v), want once", announced, err)
	}
}

// TestStripeWebhookKeepsAnEventOnceUnderRedelivery races deliveries of one event, as Stripe
// retrying while the first delivery is still being answered: one event and one job remain.
func TestStripeWebhookKeepsAnEventOnceUnderRedelivery(t *testing.T) {
	t.Parallel()
	s := newV1(t, onStripe(t))
	event := cardEvent("evt_raced", "payment_method.updated", "pm_raced", "4242", time.Now())
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if rec := s.do(t, signed(event, stripeWebhookSecret, time.Now())); rec.Code != http.StatusAccepted {
				t.Errorf("delivery answered %d %s", rec.Code, rec.Body)
			}
		})
	}
	wg.Wait()
	var events, queued int
	if err := s.DB.Get(&events, `SELECT count(*) FROM processor_events WHERE id = 'evt_raced'`); err != nil {
		t.Fatal(err)
	}
	if err := s.DB.Get(&queued, `SELECT count(*) FROM jobs WHERE kind = $1 AND args->>'id' = 'evt_raced'`, resolvers.JobStripeEvent); err != nil {
		t.Fatal(err)
	}
	if events != 1 || queued != 1 {
		t.Fatalf("20 deliveries kept %d events and queued %d jobs, want 1 and 1", events, queued)
	}
}

// TestStripeWebhookKeepsAnEventWithANULCharacter: Stripe may send a NUL character in a
// string (metadata a seller wrote), which PostgreSQL keeps in no jsonb value; the event is
// still kept, once, with the character replaced, rather than failing every delivery.
func TestStripeWebhookKeepsAnEventWithANULCharacter(t *testing.T) {
	t.Parallel()
	s := newV1(t, onStripe(t))
	now := time.Now()
	event := fmt.Sprintf(`{"id":"evt_nul","object":"event","type":"payment_method.updated","created":%d,
		"data":{"object":{"id":"pm_x","object":"payment_method","metadata":{"note":"a\u0000b"}}}}`, now.Unix())
	for range 2 {
		if rec := s.do(t, signed(event, stripeWebhookSecret, now)); rec.Code != http.StatusAccepted {
			t.Fatalf("delivery: %d %s, want 202", rec.Code, rec.Body)
		}
	}
	var notes []string
	if err := s.DB.Select(&notes, `SELECT payload -> 'data' -> 'object' -> 'metadata' ->> 'note' FROM processor_events
		WHERE id = 'evt_nul'`); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || notes[0] != "a\uFFFDb" {
		t.Errorf("kept notes %q, want one with the NUL replaced", notes)
	}
}
