package resolvers_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"till/internal/auth"
	"till/internal/webhook"
	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/storage"
)

// receiver is a webhook endpoint under test: it verifies every signature with the standard
// verifier (keyed with base64 of the secret, as upstream's consumers must) and answers with
// what answer says for the n-th request (from 1).
type receiver struct {
	t      *testing.T
	verify *standardwebhooks.Webhook
	answer func(n int, w http.ResponseWriter)
	delay  time.Duration

	mu   sync.Mutex
	ids  []string
	docs []string
	got  chan struct{}
}

func newReceiver(t *testing.T, secret string, answer func(n int, w http.ResponseWriter)) (*receiver, *httptest.Server) {
	t.Helper()
	v, err := standardwebhooks.NewWebhook(base64.StdEncoding.EncodeToString([]byte(secret)))
	if err != nil {
		t.Fatal(err)
	}
	rc := &receiver{t: t, verify: v, answer: answer, got: make(chan struct{}, 10000)}
	ts := httptest.NewServer(rc)
	t.Cleanup(ts.Close)
	return rc, ts
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if err := rc.verify.Verify(body, req.Header); err != nil {
		rc.t.Errorf("signature of %s rejected by the standard verifier: %v", req.Header.Get("webhook-id"), err)
	}
	time.Sleep(rc.delay)
	rc.mu.Lock()
	rc.ids = append(rc.ids, req.Header.Get("webhook-id"))
	rc.docs = append(rc.docs, string(body))
	n := len(rc.ids)
	rc.mu.Unlock()
	rc.answer(n, w)
	rc.got <- struct{}{}
}

func (rc *receiver) received() (ids, docs []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.ids...), append([]string(nil), rc.docs...)
}

func answerStatus(code int) func(int, http.ResponseWriter) {
	return func(_ int, w http.ResponseWriter) { w.WriteHeader(code) }
}

// deliveryWorld is an organization with one endpoint subscribed to order.updated.
type deliveryWorld struct {
	s        *resolverstest.Server
	org      resolverstest.Org
	endpoint uuid.UUID
	secret   string
}

func newDeliveryWorld(t *testing.T, answer func(int, http.ResponseWriter), opts ...resolverstest.Option) (*deliveryWorld, *receiver) {
	t.Helper()
	deliveries := resolvers.NewWebhookDelivery(&webhook.Sender{AllowPrivate: true, Timeout: 2 * time.Second})
	deliveries.Backoff = func(int) time.Duration { return 0 }
	opts = append([]resolverstest.Option{func(d *resolvers.Deps) { d.Webhooks = deliveries }}, opts...)
	s := resolverstest.New(t, opts...)
	w := &deliveryWorld{s: s, org: s.NewOrg(t, resolverstest.AllScopes), secret: auth.Generate("whsec_")}
	rc, ts := newReceiver(t, w.secret, answer)
	s.Get(t, &w.endpoint, `INSERT INTO webhook_endpoints (organization_id, url, format, secret, events)
		VALUES ($1, $2, 'raw', $3, '{order.updated}') RETURNING id`, w.org.ID, ts.URL, w.secret)
	return w, rc
}

// publish records and publishes n order.updated events, in order, returning their payloads.
func (w *deliveryWorld) publish(t *testing.T, n int) []string {
	t.Helper()
	ctx := t.Context()
	payloads := make([]string, n)
	for i := range payloads {
		id, err := storage.InsertDomainEvent(ctx, w.s.DB, w.org.ID, "order.updated", uuid.New())
		if err != nil {
			t.Fatal(err)
		}
		var e storage.DomainEvent
		w.s.Get(t, &e, `SELECT id, created_at, organization_id, type, object_id FROM domain_events WHERE id = $1`, id)
		payloads[i] = fmt.Sprintf(`{"type":"order.updated","timestamp":%q,"data":{"id":"%d"}}`, e.CreatedAt.Format(time.RFC3339Nano), i)
		if err := w.s.Resolver.PublishEvent(ctx, &e, payloads[i]); err != nil {
			t.Fatal(err)
		}
	}
	return payloads
}

// dispatchUntil runs the dispatcher with slots until the receiver has had want requests.
func dispatchUntil(t *testing.T, s *resolverstest.Server, rc *receiver, slots, want int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { s.Resolver.DispatchWebhooks(ctx, slots, 20*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	timeout := time.After(60 * time.Second)
	for range want {
		select {
		case <-rc.got:
		case <-timeout:
			ids, _ := rc.received()
			t.Fatalf("receiver got %d requests, want %d", len(ids), want)
		}
	}
}

// TestWebhooksArriveInOrderToASlowEndpoint: 1,000 events to one slow endpoint, with eight
// deliveries allowed in flight, arrive once each, in the order they happened, each signed so
// the standard verifier accepts it, and each is recorded as delivered.
func TestWebhooksArriveInOrderToASlowEndpoint(t *testing.T) {
	w, rc := newDeliveryWorld(t, answerStatus(http.StatusNoContent))
	rc.delay = time.Millisecond
	payloads := w.publish(t, 1000)
	dispatchUntil(t, w.s, rc, 8, len(payloads))
	_, docs := rc.received()
	if len(docs) != len(payloads) {
		t.Fatalf("received %d bodies, want %d", len(docs), len(payloads))
	}
	for i := range payloads {
		if docs[i] != payloads[i] {
			t.Fatalf("delivery %d = %s, want %s (out of order or altered)", i, docs[i], payloads[i])
		}
	}
	var delivered, attempts int
	w.s.Get(t, &delivered, `SELECT count(*) FROM webhook_events WHERE succeeded AND delivered_at IS NOT NULL AND attempts = 1`)
	w.s.Get(t, &attempts, `SELECT count(*) FROM webhook_deliveries WHERE succeeded AND http_code = 204`)
	if delivered != 1000 || attempts != 1000 {
		t.Errorf("%d events delivered at the first attempt and %d attempts logged, want 1000 and 1000", delivered, attempts)
	}
}

// TestWebhookFailures: an endpoint that fails is retried with the same webhook-id until it
// answers 2xx; one that never does fails the event after ten attempts, is disabled with its
// reason recorded, and its other pending events are skipped. Each attempt is logged with its
// status and the start of the answer.
func TestWebhookFailures(t *testing.T) {
	cases := []struct {
		name          string
		answer        func(int, http.ResponseWriter)
		requests      int
		wantSucceeded bool
		wantDisabled  bool
		wantCode      int
	}{
		{"recovers on the third attempt", func(n int, w http.ResponseWriter) {
			if n < 3 {
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			w.WriteHeader(http.StatusOK)
		}, 4, true, false, http.StatusOK},
		{"answers 500 for ever", func(_ int, w http.ResponseWriter) {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, strings.Repeat("x", 10000))
		}, 10, false, true, http.StatusInternalServerError},
		{"redirects", func(_ int, w http.ResponseWriter) {
			w.Header().Set("Location", "https://elsewhere.example/")
			w.WriteHeader(http.StatusFound)
		}, 10, false, true, http.StatusFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, rc := newDeliveryWorld(t, c.answer)
			w.publish(t, 2)
			dispatchUntil(t, w.s, rc, 4, c.requests)
			ids, _ := rc.received()
			first := ids[0]
			var ev storage.WebhookEvent
			w.s.Get(t, &ev, `SELECT id, succeeded, skipped, attempts, last_http_code FROM webhook_events WHERE id = $1`, first)
			if ev.Succeeded == nil || *ev.Succeeded != c.wantSucceeded || ev.LastHTTPCode == nil || *ev.LastHTTPCode != c.wantCode {
				t.Errorf("first event = %+v, want succeeded %v with HTTP %d", ev, c.wantSucceeded, c.wantCode)
			}
			sameID := 0
			for _, id := range ids {
				if id == first {
					sameID++
				}
			}
			if want := min(c.requests, 10); !c.wantSucceeded && sameID != want {
				t.Errorf("first event sent %d times, want %d with the same webhook-id", sameID, want)
			}
			var endpoint struct {
				Enabled  bool    `db:"enabled"`
				Failures int     `db:"consecutive_failures"`
				Reason   *string `db:"disabled_reason"`
			}
			w.s.Get(t, &endpoint, `SELECT enabled, consecutive_failures, disabled_reason FROM webhook_endpoints WHERE id = $1`, w.endpoint)
			if endpoint.Enabled == c.wantDisabled || (c.wantDisabled && endpoint.Reason == nil) || (!c.wantDisabled && endpoint.Failures != 0) {
				t.Errorf("endpoint = %+v, want disabled %v with a reason, failures reset when it recovers", endpoint, c.wantDisabled)
			}
			var skipped, longest int
			w.s.Get(t, &skipped, `SELECT count(*) FROM webhook_events WHERE webhook_endpoint_id = $1 AND skipped`, w.endpoint)
			w.s.Get(t, &longest, `SELECT coalesce(max(length(response)), 0) FROM webhook_deliveries`)
			if c.wantDisabled && skipped != 1 {
				t.Errorf("%d events skipped after disabling, want the other pending one", skipped)
			}
			if longest > webhook.ResponseLimit {
				t.Errorf("a logged response holds %d bytes, want at most %d", longest, webhook.ResponseLimit)
			}
			if c.wantDisabled {
				var seen struct {
					WebhookEndpoint struct {
						Enabled             bool
						ConsecutiveFailures int
						DisabledReason      *string
					}
				}
				w.s.Query(t, w.org.Token, `query($id: UUID!) { webhookEndpoint(id: $id) { enabled consecutiveFailures disabledReason } }`,
					vars{"id": w.endpoint}, &seen)
				if e := seen.WebhookEndpoint; e.Enabled || e.ConsecutiveFailures < 10 || e.DisabledReason == nil {
					t.Errorf("the disabled endpoint in GraphQL = %+v, want disabled with its failures and reason", e)
				}
				var out struct{ UpdateWebhookEndpoint struct{ Enabled bool } }
				w.s.Query(t, w.org.Token, `mutation($id: UUID!) { updateWebhookEndpoint(input: {id: $id, enabled: true}) { enabled } }`,
					vars{"id": w.endpoint}, &out)
				w.s.Get(t, &endpoint, `SELECT enabled, consecutive_failures, disabled_reason FROM webhook_endpoints WHERE id = $1`, w.endpoint)
				if !endpoint.Enabled || endpoint.Failures != 0 || endpoint.Reason != nil {
					t.Errorf("endpoint turned back on = %+v, want enabled with a clean record", endpoint)
				}
			}
		})
	}
}

// TestWebhookSentButNotRecordedIsSentAgain: a dispatcher that dies after sending and before
// recording (here: it claims and sends, then stops) leaves the event leased; once the lease
// ends the event is sent again with the same webhook-id and recorded once.
func TestWebhookSentButNotRecordedIsSentAgain(t *testing.T) {
	w, rc := newDeliveryWorld(t, answerStatus(http.StatusOK))
	w.publish(t, 1)
	ctx := t.Context()
	claimed, err := storage.ClaimWebhookHeads(ctx, w.s.DB, 10, time.Second)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim = %d events, %v", len(claimed), err)
	}
	sender := &webhook.Sender{AllowPrivate: true}
	ev := claimed[0]
	if res := sender.Send(ctx, webhook.Delivery{URL: ev.URL, Secret: ev.Secret, MsgID: ev.ID.String(), Body: []byte(*ev.Payload)}); !res.Success {
		t.Fatalf("first send: %+v", res)
	}
	<-rc.got
	if again, err := storage.ClaimWebhookHeads(ctx, w.s.DB, 10, time.Second); err != nil || len(again) != 0 {
		t.Fatalf("claimed %d events while the lease holds (%v), want none", len(again), err)
	}
	time.Sleep(1100 * time.Millisecond)
	dispatchUntil(t, w.s, rc, 2, 1)
	ids, _ := rc.received()
	if len(ids) != 2 || ids[0] != ids[1] || ids[0] != ev.ID.String() {
		t.Fatalf("webhook-ids received = %v, want the same id twice", ids)
	}
	var attempts, logged int
	w.s.Get(t, &attempts, `SELECT attempts FROM webhook_events WHERE id = $1 AND succeeded`, ev.ID)
	w.s.Get(t, &logged, `SELECT count(*) FROM webhook_deliveries WHERE webhook_event_id = $1`, ev.ID)
	if attempts != 2 || logged != 1 {
		t.Errorf("attempts = %d and %d logged, want 2 claims and the one recorded attempt", attempts, logged)
	}
	if out, err := storage.RecordWebhookAttempt(ctx, w.s.DB, &ev.WebhookEvent, storage.WebhookAttempt{Succeeded: true}, nil, nil); err != nil || out.Recorded {
		t.Errorf("the first claim recorded late = %+v, %v; want refused", out, err)
	}
}

// TestWebhookEventsGoOnlyToEndpointsThatExisted: an event rendered after an endpoint was
// created, but that happened before it, is not sent there.
func TestWebhookEventsGoOnlyToEndpointsThatExisted(t *testing.T) {
	w, _ := newDeliveryWorld(t, answerStatus(http.StatusOK))
	ctx := t.Context()
	id, err := storage.InsertDomainEvent(ctx, w.s.DB, w.org.ID, "order.updated", uuid.New())
	if err != nil {
		t.Fatal(err)
	}
	var e storage.DomainEvent
	w.s.Get(t, &e, `UPDATE domain_events SET created_at = now() - interval '1 minute' WHERE id = $1
		RETURNING id, created_at, organization_id, type, object_id`, id)
	if err := w.s.Resolver.PublishEvent(ctx, &e, `{"type":"order.updated"}`); err != nil {
		t.Fatal(err)
	}
	var queued int
	w.s.Get(t, &queued, `SELECT count(*) FROM webhook_events`)
	if queued != 0 {
		t.Errorf("%d webhook events queued for an endpoint created after the event", queued)
	}
	w.publish(t, 1)
	w.s.Get(t, &queued, `SELECT count(*) FROM webhook_events`)
	if queued != 1 {
		t.Errorf("%d webhook events queued for a later event, want 1", queued)
	}
}
