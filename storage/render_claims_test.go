package storage_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// TestRenderersDivideTheEvents races renderers claiming the same backlog: every event is
// claimed by exactly one of them, none twice, none lost.
func TestRenderersDivideTheEvents(t *testing.T) {
	db := storagetest.New(t)
	ctx := context.Background()
	org, err := storage.CreateOrganization(ctx, db, "Render", "render")
	if err != nil {
		t.Fatal(err)
	}
	const events = 300
	want := map[uuid.UUID]bool{}
	for range events {
		id, err := storage.InsertDomainEvent(ctx, db, org.ID, "customer.updated", uuid.New())
		if err != nil {
			t.Fatal(err)
		}
		want[id] = true
	}
	if _, err := storage.InsertDomainEvent(ctx, db, org.ID, "order.created", uuid.New()); err != nil {
		t.Fatal(err) // a family the renderers do not render
	}
	var mu sync.Mutex
	claimed := map[uuid.UUID]int{}
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				batch, err := storage.ClaimUnrenderedDomainEvents(ctx, db, []string{"customer"}, 7, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if len(batch) == 0 {
					return
				}
				mu.Lock()
				for i, e := range batch {
					claimed[e.ID]++
					if i > 0 && batch[i-1].CreatedAt.After(e.CreatedAt) {
						t.Error("a batch is not in the events' order")
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(claimed) != events {
		t.Errorf("%d events claimed, want %d", len(claimed), events)
	}
	for id, n := range claimed {
		if n != 1 || !want[id] {
			t.Errorf("event %s claimed %d times (one of the backlog: %v)", id, n, want[id])
		}
	}
}

func TestARenderClaimEndsWithItsAttemptOrItsLease(t *testing.T) {
	db := storagetest.New(t)
	ctx := context.Background()
	org, err := storage.CreateOrganization(ctx, db, "Claims", "claims")
	if err != nil {
		t.Fatal(err)
	}
	id, err := storage.InsertDomainEvent(ctx, db, org.ID, "customer.updated", uuid.New())
	if err != nil {
		t.Fatal(err)
	}
	claim := func() int {
		t.Helper()
		batch, err := storage.ClaimUnrenderedDomainEvents(ctx, db, []string{"customer"}, 10, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return len(batch)
	}
	tests := []struct {
		name  string
		after func(t *testing.T)
		want  int // claimable again
	}{
		{"held while claimed", func(*testing.T) {}, 0},
		{"released", func(t *testing.T) {
			if err := storage.ReleaseDomainEvent(ctx, db, id); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"a failed attempt ends the claim", func(t *testing.T) {
			if err := storage.FailDomainEventRender(ctx, db, id, "boom"); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"a lapsed lease (a dead renderer) ends it", func(t *testing.T) {
			if _, err := db.Exec(`UPDATE domain_events SET render_claimed_until = now() - interval '1 second' WHERE id = $1`, id); err != nil {
				t.Fatal(err)
			}
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := claim(); n != 1 {
				t.Fatalf("claimed %d before, want 1", n)
			}
			tt.after(t)
			if n := claim(); n != tt.want {
				t.Errorf("claimable again: %d, want %d", n, tt.want)
			}
			_ = storage.ReleaseDomainEvent(ctx, db, id)
		})
	}
}

// TestPublishersOfOneBatchNeverDeadlock publishes each batch of events from two transactions
// at once, as two renderers do when a claim lapsed, to many endpoints, one publisher listing
// the batch in the opposite order: rows go in one order whatever the caller's, so one
// publisher waits for the other instead of deadlocking, every event gets its payload, and
// each endpoint gets each event once.
func TestPublishersOfOneBatchNeverDeadlock(t *testing.T) {
	db := storagetest.New(t)
	ctx := context.Background()
	org, err := storage.CreateOrganization(ctx, db, "Fanout", "fanout")
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[uuid.UUID]string{}
	for i := range 40 {
		hook, err := storage.CreateWebhookEndpoint(ctx, db, org.ID, storage.WebhookEndpointWrite{
			URL: fmt.Sprintf("https://example.com/%d", i), Format: "raw", Secret: "whsec_test", Events: []string{"customer.updated"}})
		if err != nil {
			t.Fatal(err)
		}
		bodies[hook.ID] = `{}`
	}
	const batches, batch = 10, 5
	for range batches {
		var pubs []storage.Publication
		for range batch {
			id, err := storage.InsertDomainEvent(ctx, db, org.ID, "customer.updated", uuid.New())
			if err != nil {
				t.Fatal(err)
			}
			ev := &storage.DomainEvent{ID: id, OrganizationID: org.ID, Type: "customer.updated", CreatedAt: time.Now()}
			pubs = append(pubs, storage.Publication{Event: ev, Payload: `{"id":"` + id.String() + `"}`, Bodies: bodies})
		}
		reversed := slices.Clone(pubs)
		slices.Reverse(reversed)
		var wg sync.WaitGroup
		for _, order := range [][]storage.Publication{pubs, reversed} {
			wg.Go(func() {
				// Each publisher holds its rows until it commits, as a renderer's statement does.
				err := storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
					_, err := storage.PublishDomainEvents(ctx, tx, order)
					return err
				})
				if err != nil {
					t.Errorf("publishing: %v", err)
				}
			})
		}
		wg.Wait()
	}
	var rows, distinct, unrendered int
	if err := db.QueryRow(`SELECT count(*), count(DISTINCT (domain_event_id, webhook_endpoint_id)) FROM webhook_events`).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != batches*batch*len(bodies) || distinct != rows {
		t.Errorf("%d webhook events (%d distinct), want %d once each", rows, distinct, batches*batch*len(bodies))
	}
	if err := db.QueryRow(`SELECT count(*) FROM domain_events WHERE payload IS DISTINCT FROM '{"id":"' || id || '"}'`).Scan(&unrendered); err != nil {
		t.Fatal(err)
	}
	if unrendered != 0 {
		t.Errorf("%d events without their own payload", unrendered)
	}
}

// TestAnObjectsEventsReachAnEndpointInOrder publishes an object's later event before its
// earlier one, as parallel renderers may: the later one waits at delivery until the earlier
// one is queued (and then goes second) or is given up on; other objects are not held up.
func TestAnObjectsEventsReachAnEndpointInOrder(t *testing.T) {
	db := storagetest.New(t)
	ctx := context.Background()
	org, err := storage.CreateOrganization(ctx, db, "Order", "order-of-events")
	if err != nil {
		t.Fatal(err)
	}
	hook, err := storage.CreateWebhookEndpoint(ctx, db, org.ID, storage.WebhookEndpointWrite{URL: "https://example.com/hook",
		Format: "raw", Secret: "whsec_test", Events: []string{"order.created", "order.paid"}})
	if err != nil {
		t.Fatal(err)
	}
	event := func(typ string, object uuid.UUID) *storage.DomainEvent {
		t.Helper()
		id, err := storage.InsertDomainEvent(ctx, db, org.ID, typ, object)
		if err != nil {
			t.Fatal(err)
		}
		var e storage.DomainEvent
		if err := db.Get(&e, `SELECT id, created_at, organization_id, type, object_id FROM domain_events WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		return &e
	}
	publish := func(e *storage.DomainEvent) {
		t.Helper()
		if _, err := storage.PublishDomainEvent(ctx, db, e, `{}`, map[uuid.UUID]string{hook.ID: `{"t":"` + e.Type + `"}`}); err != nil {
			t.Fatal(err)
		}
	}
	// deliver claims the endpoint's head and marks it delivered; "" when nothing may go.
	deliver := func() string {
		t.Helper()
		claimed, err := storage.ClaimWebhookHeads(ctx, db, 10, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(claimed) == 0 {
			return ""
		}
		if _, err := db.Exec(`UPDATE webhook_events SET succeeded = true WHERE id = $1`, claimed[0].ID); err != nil {
			t.Fatal(err)
		}
		return *claimed[0].Payload
	}

	x := uuid.New()
	created, paid := event("order.created", x), event("order.paid", x)
	publish(paid)
	if got := deliver(); got != "" {
		t.Fatalf("delivered %s while the order's earlier event was unrendered", got)
	}
	publish(created)
	if first, second := deliver(), deliver(); first != `{"t":"order.created"}` || second != `{"t":"order.paid"}` {
		t.Errorf("delivered %s then %s, want order.created then order.paid", first, second)
	}

	y := uuid.New()
	stuck, later := event("order.created", y), event("order.paid", y)
	publish(later)
	if _, err := db.Exec(`UPDATE domain_events SET render_attempts = 5, render_error = 'unreadable' WHERE id = $1`, stuck.ID); err != nil {
		t.Fatal(err)
	}
	if got := deliver(); got != `{"t":"order.paid"}` {
		t.Errorf("after the earlier event was given up on, delivered %q, want order.paid", got)
	}

	// A delivery that hands its lease on to the endpoint's next event holds it back too.
	q, v := uuid.New(), uuid.New()
	first := event("order.created", q)
	older, newer := event("order.created", v), event("order.paid", v)
	publish(first)
	publish(newer)
	claimed, err := storage.ClaimWebhookHeads(ctx, db, 10, time.Minute)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %d, %v; want the first object's event", len(claimed), err)
	}
	lease := time.Minute
	out, err := storage.RecordWebhookAttempt(ctx, db, &claimed[0].WebhookEvent, storage.WebhookAttempt{Succeeded: true}, nil, &lease)
	if err != nil || !out.Recorded || out.Next != nil {
		t.Errorf("recorded %v, handed the lease on to %v (%v); want no next event while the older one is unrendered", out.Recorded, out.Next, err)
	}
	publish(older)
	if got := deliver(); got != `{"t":"order.created"}` {
		t.Errorf("after the older event was published, delivered %q, want it first", got)
	}
	if got := deliver(); got != `{"t":"order.paid"}` {
		t.Errorf("then delivered %q, want order.paid", got)
	}

	z, w := uuid.New(), uuid.New()
	event("order.created", z) // never rendered here
	other := event("order.created", w)
	publish(other)
	if got := deliver(); got != `{"t":"order.created"}` {
		t.Errorf("another object's event waited: delivered %q", got)
	}
}

// TestDispatchersClaimEachHeadOnce races dispatchers claiming the heads of many endpoints at
// once, as several processes do: no claim fails (they once deadlocked), and each head is
// claimed by one of them.
func TestDispatchersClaimEachHeadOnce(t *testing.T) {
	db := storagetest.New(t)
	ctx := context.Background()
	org, err := storage.CreateOrganization(ctx, db, "Heads", "heads")
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[uuid.UUID]string{}
	for i := range 30 {
		hook, err := storage.CreateWebhookEndpoint(ctx, db, org.ID, storage.WebhookEndpointWrite{
			URL: fmt.Sprintf("https://example.com/%d", i), Format: "raw", Secret: "whsec_test", Events: []string{"customer.updated"}})
		if err != nil {
			t.Fatal(err)
		}
		bodies[hook.ID] = `{}`
	}
	id, err := storage.InsertDomainEvent(ctx, db, org.ID, "customer.updated", uuid.New())
	if err != nil {
		t.Fatal(err)
	}
	ev := &storage.DomainEvent{ID: id, OrganizationID: org.ID, Type: "customer.updated", CreatedAt: time.Now()}
	if _, err := storage.PublishDomainEvent(ctx, db, ev, `{}`, bodies); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	claimed := map[uuid.UUID]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				heads, err := storage.ClaimWebhookHeads(ctx, db, 4, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if len(heads) == 0 {
					return
				}
				mu.Lock()
				for _, h := range heads {
					claimed[h.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(claimed) != len(bodies) {
		t.Errorf("%d heads claimed, want %d", len(claimed), len(bodies))
	}
	for id, n := range claimed {
		if n != 1 {
			t.Errorf("head %s claimed %d times", id, n)
		}
	}
}
