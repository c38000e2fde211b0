package resolvers_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/resolvers/resolverstest"
	"till/storage"
)

const meterEventsDoc = `subscription($m: UUID!, $after: String) { meterEvents(meterId: $m, after: $after) { cursor event { id name } } }`

// meterEvent is what the tests read of a LiveUsageEvent.
type meterEvent struct {
	Cursor string
	Event  struct {
		ID   uuid.UUID
		Name string
	}
}

// nextMeterEvent reads the next message as a meterEvents event.
func nextMeterEvent(t *testing.T, c *resolverstest.LiveClient) meterEvent {
	t.Helper()
	m := nextMessage(t, c, 15*time.Second)
	var body struct {
		Data   struct{ MeterEvents *meterEvent }
		Errors []gqlError
	}
	if err := json.Unmarshal(m.Payload, &body); err != nil || m.Type != "next" || body.Data.MeterEvents == nil {
		t.Fatalf("got %s %s, want a meter event", m.Type, m.Payload)
	}
	return *body.Data.MeterEvents
}

// ingest stores events named name for org, one transaction, and returns their ids.
func ingest(t *testing.T, db *sqlx.DB, org uuid.UUID, names ...string) []uuid.UUID {
	t.Helper()
	ids := make([]uuid.UUID, len(names))
	batch := make([]storage.EventWrite, len(names))
	for i, n := range names {
		ids[i] = uuid.New()
		batch[i] = storage.EventWrite{ID: ids[i], OrganizationID: org, Timestamp: time.Now(), Name: n, Metadata: "{}",
			ExternalCustomerID: ptr("c1")}
	}
	if _, err := storage.IngestEvents(context.Background(), db, batch, time.Now()); err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestLiveMeterEventsFollowIngestion(t *testing.T) {
	t.Parallel()
	s := resolverstest.NewLive(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	other := s.NewOrg(t, resolverstest.AllScopes)
	m := createMeter(t, s, org.Token, apiCallsInput(nil))
	c := dialLive(t, s, org.Token)
	subscribe(t, c, "1", meterEventsDoc, vars{"m": m.ID})
	time.Sleep(200 * time.Millisecond)

	first := ingest(t, s.DB, org.ID, "api_call", "page_view", "api_call")
	ingest(t, s.DB, other.ID, "api_call") // another organization's events never show
	second := ingest(t, s.DB, org.ID, "api_call")
	want := []uuid.UUID{first[0], first[2], second[0]}
	want = sortedWithin(want[:2], want[2:])
	var got []meterEvent
	for range want {
		got = append(got, nextMeterEvent(t, c))
	}
	for i, e := range got {
		if e.Event.ID != want[i] || e.Event.Name != "api_call" {
			t.Errorf("event %d = %s %s, want %s", i, e.Event.Name, e.Event.ID, want[i])
		}
	}
	wantQuiet(t, c, 300*time.Millisecond)

	// Resuming after the first event gives the two that followed, and what came since.
	third := ingest(t, s.DB, org.ID, "api_call")
	again := dialLive(t, s, org.Token)
	subscribe(t, again, "1", meterEventsDoc, vars{"m": m.ID, "after": got[0].Cursor})
	for _, w := range []uuid.UUID{want[1], want[2], third[0]} {
		if e := nextMeterEvent(t, again); e.Event.ID != w {
			t.Errorf("resumed: got %s, want %s", e.Event.ID, w)
		}
	}

	t.Run("another organization's meter", func(t *testing.T) {
		theirs := createMeter(t, s, other.Token, apiCallsInput(nil))
		c := dialLive(t, s, org.Token)
		subscribe(t, c, "1", meterEventsDoc, vars{"m": theirs.ID})
		if errs := liveErrors(t, c, 10*time.Second); errs[0].Extensions.Code != "NOT_FOUND" {
			t.Errorf("error %+v, want NOT_FOUND", errs[0])
		}
	})
	t.Run("bad cursor", func(t *testing.T) {
		c := dialLive(t, s, org.Token)
		subscribe(t, c, "1", meterEventsDoc, vars{"m": m.ID, "after": "999999999999.00000000-0000-0000-0000-000000000000"})
		if errs := liveErrors(t, c, 10*time.Second); errs[0].Extensions.Code != "BAD_USER_INPUT" {
			t.Errorf("error %+v, want BAD_USER_INPUT", errs[0])
		}
	})
}

// sortedWithin keeps the batches in order and sorts each batch by id, the order of events
// within one ingesting transaction.
func sortedWithin(batches ...[]uuid.UUID) []uuid.UUID {
	var out []uuid.UUID
	for _, b := range batches {
		b = append([]uuid.UUID(nil), b...)
		for i := range b {
			for j := i + 1; j < len(b); j++ {
				if b[j].String() < b[i].String() {
					b[i], b[j] = b[j], b[i]
				}
			}
		}
		out = append(out, b...)
	}
	return out
}

// An event of a transaction that commits late is not skipped: newer events wait behind it
// and all of them arrive once it commits, each once.
func TestLiveMeterEventsWaitForOlderTransactions(t *testing.T) {
	t.Parallel()
	s := resolverstest.NewLive(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	m := createMeter(t, s, org.Token, apiCallsInput(nil))
	c := dialLive(t, s, org.Token)
	subscribe(t, c, "1", meterEventsDoc, vars{"m": m.ID})
	time.Sleep(200 * time.Millisecond)

	slow, err := s.DB.BeginTxx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	late := uuid.New()
	if _, err := slow.Exec(`INSERT INTO events (id, organization_id, name, external_customer_id) VALUES ($1, $2, 'api_call', 'c1')`, late, org.ID); err != nil {
		t.Fatal(err)
	}
	early := ingest(t, s.DB, org.ID, "api_call")
	wantQuiet(t, c, 700*time.Millisecond) // the newer event waits for the older transaction
	if err := slow.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, w := range []uuid.UUID{late, early[0]} {
		if e := nextMeterEvent(t, c); e.Event.ID != w {
			t.Errorf("got %s, want %s (older transaction first)", e.Event.ID, w)
		}
	}
	wantQuiet(t, c, 300*time.Millisecond)
}

// Many concurrent ingesting transactions: the subscriber gets every matching event once.
func TestLiveMeterEventsUnderConcurrentIngestion(t *testing.T) {
	t.Parallel()
	s := resolverstest.NewLive(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	m := createMeter(t, s, org.Token, apiCallsInput(nil))
	c := dialLive(t, s, org.Token)
	subscribe(t, c, "1", meterEventsDoc, vars{"m": m.ID})
	time.Sleep(200 * time.Millisecond)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		sent = map[uuid.UUID]bool{}
	)
	for range 8 {
		wg.Go(func() {
			for range 20 {
				ids := ingest(t, s.DB, org.ID, "api_call", "api_call", "other")
				mu.Lock()
				sent[ids[0]], sent[ids[1]] = true, true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	seen := map[uuid.UUID]bool{}
	for range len(sent) {
		e := nextMeterEvent(t, c)
		if seen[e.Event.ID] || !sent[e.Event.ID] {
			t.Fatalf("event %s delivered twice or never sent", e.Event.ID)
		}
		seen[e.Event.ID] = true
	}
	wantQuiet(t, c, 300*time.Millisecond)
}
