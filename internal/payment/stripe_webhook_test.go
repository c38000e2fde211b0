package payment_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stripe/stripe-go/v86/webhook"

	"till/internal/payment"
)

// TestVerifyStripeEvent: only a payload Stripe signed with the endpoint's secret within
// the last five minutes is an event, and Till reads its id, type, time and object from it.
func TestVerifyStripeEvent(t *testing.T) {
	const secret = "whsec_test_secret"
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	object := `{"id":"pi_123","object":"payment_intent","amount":1500,"status":"succeeded"}`
	event := []byte(`{"id":"evt_1","object":"event","api_version":"2020-08-27","type":"payment_intent.succeeded","created":1764158400,"data":{"object":` + object + `}}`)
	sign := func(payload []byte, secret string, at time.Time) string {
		return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: at}).Header
	}
	tests := []struct {
		name      string
		payload   []byte
		header    string
		forged    bool // ErrStripeSignature
		malformed bool // another error
	}{
		{name: "a fresh event signed with the secret verifies", payload: event, header: sign(event, secret, now.Add(-time.Minute))},
		{name: "an event signed just within five minutes verifies", payload: event, header: sign(event, secret, now.Add(-300*time.Second))},
		{name: "an event signed with another secret is refused", payload: event, header: sign(event, "whsec_other", now), forged: true},
		{name: "a payload changed after signing is refused", payload: []byte(string(event) + " "), header: sign(event, secret, now), forged: true},
		{name: "a replay older than five minutes is refused", payload: event, header: sign(event, secret, now.Add(-301*time.Second)), forged: true},
		{name: "a request with no signature is refused", payload: event, header: "", forged: true},
		{name: "a garbled header is refused", payload: event, header: "t=now,v1", forged: true},
		{name: "a signed payload that is not JSON is malformed", payload: []byte("not json"), header: sign([]byte("not json"), secret, now), malformed: true},
		{name: "a signed thin event notification is malformed", payload: []byte(`{"id":"evt_2","object":"v2.core.event","type":"x"}`),
			header: sign([]byte(`{"id":"evt_2","object":"v2.core.event","type":"x"}`), secret, now), malformed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := payment.VerifyStripeEvent(tt.payload, tt.header, secret, now)
			switch {
			case tt.forged:
				if !errors.Is(err, payment.ErrStripeSignature) {
					t.Fatalf("err = %v, want ErrStripeSignature", err)
				}
			case tt.malformed:
				if err == nil || errors.Is(err, payment.ErrStripeSignature) {
					t.Fatalf("err = %v, want a malformed event", err)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				want := payment.StripeEvent{ID: "evt_1", Type: "payment_intent.succeeded", Created: time.Unix(1764158400, 0).UTC(),
					ObjectID: "pi_123", Object: json.RawMessage(object)}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("event (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestStripeProcessorVerifiesWithItsSecret: the processor checks events against the
// webhook secret it was configured with.
func TestStripeProcessorVerifiesWithItsSecret(t *testing.T) {
	p, err := payment.NewStripe(payment.StripeConfig{SecretKey: "sk_test_x", WebhookSecret: "whsec_mine"})
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte(`{"id":"evt_1","object":"event","type":"charge.refunded","created":1,"data":{"object":{"id":"ch_1"}}}`)
	now := time.Now()
	for secret, ok := range map[string]bool{"whsec_mine": true, "whsec_theirs": false} {
		header := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: now}).Header
		if _, err := p.VerifyEvent(payload, header, now); (err == nil) != ok {
			t.Errorf("signed with %s: err = %v", secret, err)
		}
	}
}
