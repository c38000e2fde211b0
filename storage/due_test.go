package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"till/storage"
	"till/storage/storagetest"
)

// TestChangesThatGiveLoopsWorkNotifyThemAtCommit runs changes one after another and, after
// each, a marker notification: what a listener receives before the marker is what the change
// notified, since notifications arrive in commit order.
func TestChangesThatGiveLoopsWorkNotifyThemAtCommit(t *testing.T) {
	probe := newNotifyProbe(t, storage.JobsChannel, storage.DomainEventsChannel, storage.WebhookEventsChannel,
		storage.RenewalsChannel)
	db := probe.db
	ctx := t.Context()
	org, err := storage.CreateOrganization(ctx, db, "Wake", "wake")
	if err != nil {
		t.Fatal(err)
	}
	const queue = "wake"
	var job *storage.Job
	tests := []struct {
		name   string
		change func(t *testing.T)
		want   []string
	}{
		{"a job queued in a transaction that rolls back notifies nobody", func(t *testing.T) {
			tx := db.MustBeginTx(ctx, nil)
			insertJob(t, tx, storage.JobInsert{Queue: queue})
			_ = tx.Rollback()
		}, nil},
		{"a job queued notifies the workers when it commits", func(t *testing.T) {
			insertJob(t, db, storage.JobInsert{Queue: queue})
		}, []string{storage.JobsChannel}},
		{"jobs queued together notify once", func(t *testing.T) {
			err := storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
				for range 3 {
					insertJob(t, tx, storage.JobInsert{Queue: queue})
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}, []string{storage.JobsChannel}},
		{"claiming jobs notifies nobody", func(t *testing.T) {
			jobs, err := storage.ClaimJobs(ctx, db, queue, "w", 10)
			if err != nil || len(jobs) != 4 {
				t.Fatalf("claimed %d, %v; want 4", len(jobs), err)
			}
			job = jobs[0]
		}, nil},
		{"a failed attempt to be retried notifies the workers", func(t *testing.T) {
			if err := storage.FailJob(ctx, db, job.ID, job.Attempt, "boom", time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}, []string{storage.JobsChannel}},
		{"completing a job notifies nobody", func(t *testing.T) {
			jobs, err := storage.ClaimJobs(ctx, db, queue, "w", 10)
			if err != nil || len(jobs) != 0 {
				t.Fatalf("claimed %d, %v; want none (the retry is an hour away)", len(jobs), err)
			}
			var running storage.Job
			if err := db.Get(&running, `SELECT id, attempt FROM jobs WHERE queue = $1 AND state = 'running' LIMIT 1`, queue); err != nil {
				t.Fatal(err)
			}
			if err := storage.CompleteJob(ctx, db, running.ID, running.Attempt); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"a domain event notifies the renderer", func(t *testing.T) {
			id, err := storage.InsertDomainEvent(ctx, db, org.ID, "customer.created", org.ID)
			if err != nil {
				t.Fatal(err)
			}
			if err := storage.SetDomainEventPayload(ctx, db, id, `{}`); err != nil {
				t.Fatal(err)
			}
		}, []string{storage.DomainEventsChannel}},
		{"a webhook event queued notifies the dispatchers", func(t *testing.T) {
			hook, err := storage.CreateWebhookEndpoint(ctx, db, org.ID, storage.WebhookEndpointWrite{URL: "https://example.com/hook",
				Format: "raw", Secret: "whsec_test", Events: []string{"customer.updated"}})
			if err != nil {
				t.Fatal(err)
			}
			id, err := storage.InsertDomainEvent(ctx, db, org.ID, "customer.updated", org.ID)
			if err != nil {
				t.Fatal(err)
			}
			ev := &storage.DomainEvent{ID: id, OrganizationID: org.ID, Type: "customer.updated", CreatedAt: time.Now()}
			if n, err := storage.PublishDomainEvent(ctx, db, ev, `{}`, map[uuid.UUID]string{hook.ID: `{}`}); n != 1 || err != nil {
				t.Fatalf("published to %d endpoints, %v", n, err)
			}
		}, []string{storage.DomainEventsChannel, storage.WebhookEventsChannel}},
		{"claiming a webhook event notifies nobody", func(t *testing.T) {
			if claimed, err := storage.ClaimWebhookHeads(ctx, db, 10, time.Minute); len(claimed) != 1 || err != nil {
				t.Fatalf("claimed %d, %v; want 1", len(claimed), err)
			}
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := probe.notifiedBy(t, tt.change); !cmp.Equal(got, tt.want) {
				t.Errorf("notified %v, want %v", got, tt.want)
			}
		})
	}
}

// notifyProbe is a database and a listener on some channels, for telling which of them a
// change notifies.
type notifyProbe struct {
	db *sqlx.DB
	l  *pq.Listener
}

// notifyMarker is notified after each change: notifications arrive in commit order, so
// whatever arrives before it is what the change notified.
const notifyMarker = "till_test_marker"

// newNotifyProbe opens a fresh database and listens on channels there.
func newNotifyProbe(t *testing.T, channels ...string) *notifyProbe {
	t.Helper()
	dsn := storagetest.DSN(t)
	db, err := storage.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	l := pq.NewListener(dsn, time.Second, time.Second, nil)
	t.Cleanup(func() { l.Close() })
	for _, c := range append([]string{notifyMarker}, channels...) {
		if err := l.Listen(c); err != nil {
			t.Fatal(err)
		}
	}
	return &notifyProbe{db: db, l: l}
}

// notifiedBy runs change and returns the channels it notified, in order.
func (p *notifyProbe) notifiedBy(t *testing.T, change func(t *testing.T)) []string {
	t.Helper()
	change(t)
	if _, err := p.db.Exec(`SELECT pg_notify($1, '')`, notifyMarker); err != nil {
		t.Fatal(err)
	}
	return notifiedBefore(t, p.l, notifyMarker)
}

// notifiedBefore returns the channels notified before marker.
func notifiedBefore(t *testing.T, l *pq.Listener, marker string) []string {
	t.Helper()
	var got []string
	for {
		select {
		case n := <-l.Notify:
			if n == nil {
				t.Fatal("the listener reconnected: notifications may be lost")
			}
			if n.Channel == marker {
				return got
			}
			got = append(got, n.Channel)
		case <-time.After(10 * time.Second):
			t.Fatalf("no marker within 10s (received %v)", got)
		}
	}
}

func TestNextJobInIsTheWaitForTheEarliestRunnableJob(t *testing.T) {
	db := storagetest.New(t)
	ctx := context.Background()
	if _, ok, err := storage.NextJobIn(ctx, db, "q"); ok || err != nil {
		t.Fatalf("empty queue: ok %v, err %v; want nothing", ok, err)
	}
	later := time.Now().Add(time.Hour)
	insertJob(t, db, storage.JobInsert{Queue: "q", ScheduledAt: &later})
	insertJob(t, db, storage.JobInsert{Queue: "other"})
	in, ok, err := storage.NextJobIn(ctx, db, "q")
	if !ok || err != nil || (in-time.Hour).Abs() > time.Minute {
		t.Fatalf("a job in an hour: %s, %v, %v", in, ok, err)
	}
	insertJob(t, db, storage.JobInsert{Queue: "q"})
	if in, ok, err := storage.NextJobIn(ctx, db, "q"); !ok || err != nil || in != 0 {
		t.Fatalf("a job due now: %s, %v, %v; want 0", in, ok, err)
	}
}
