package resolvers_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"till/internal/webhook"
	"till/resolvers"
)

// lockedBuffer collects log output written from the dispatcher's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWebhookDeliveryLogShowsAReasonNotTheServersNetwork: an endpoint whose host resolves to
// an address deliveries may not reach (here the loopback receiver, with private addresses
// refused) is logged for the organization with a generic reason; the refused address is in
// the operator's log only.
func TestWebhookDeliveryLogShowsAReasonNotTheServersNetwork(t *testing.T) {
	t.Parallel()
	var log lockedBuffer
	refusing := resolvers.NewWebhookDelivery(&webhook.Sender{Timeout: 2 * time.Second})
	refusing.Backoff = func(int) time.Duration { return time.Hour }
	w, _ := newDeliveryWorld(t, answerStatus(http.StatusOK), func(d *resolvers.Deps) {
		d.Webhooks, d.Logger = refusing, slog.New(slog.NewJSONHandler(&log, nil))
	})
	w.publish(t, 1)

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { w.s.Resolver.DispatchWebhooks(ctx, 1, 20*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()

	var id string
	w.s.Get(t, &id, `SELECT id FROM webhook_events WHERE webhook_endpoint_id = $1`, w.endpoint)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var q struct{ WebhookEvent hookEventOut }
		w.s.Query(t, w.org.Token, `query($id: UUID!) { webhookEvent(id: $id) { `+hookEventFields+` } }`, vars{"id": id}, &q)
		if d := q.WebhookEvent.Deliveries; len(d) > 0 {
			if got := d[0].Response; got == nil || *got != webhook.ReasonUnresolved {
				t.Errorf("delivery response = %s, want %q", deref(got), webhook.ReasonUnresolved)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no attempt was recorded")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := log.String(); !strings.Contains(got, "127.0.0.1") || !strings.Contains(got, id) {
		t.Errorf("operator log lacks the refused address of event %s:\n%s", id, got)
	}
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}
