package resolvers_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/storage"
)

// emitConcurrently commits txs transactions of 1 to 3 events each from workers goroutines at
// once and returns how many events committed.
func emitConcurrently(t *testing.T, db *sqlx.DB, org uuid.UUID, workers, txs int) int {
	t.Helper()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total int
	)
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range txs {
				n := 1 + rng.IntN(3)
				err := storage.InTx(context.Background(), db, func(tx *sqlx.Tx) error {
					for range n {
						if _, err := storage.InsertDomainEvent(context.Background(), tx, org, "customer.updated", uuid.New()); err != nil {
							return err
						}
						time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond) // commits interleave
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				total += n
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return total
}

// A reader never sees an event without every event before it: positions are taken in commit
// order, so what is visible is always 1…n. Numbering at insert would show gaps while a
// transaction that took an earlier number has not committed.
func TestLivePositionsAreGaplessInCommitOrder(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	done := make(chan struct{})
	var reads, gaps int
	go func() {
		defer close(done)
		for {
			var positions []int64
			if err := s.DB.Select(&positions, `SELECT position FROM domain_events WHERE organization_id = $1 ORDER BY position`, org.ID); err != nil {
				t.Error(err)
				return
			}
			reads++
			for i, p := range positions {
				if p != int64(i+1) {
					gaps++
					t.Errorf("visible positions jump from %d to %d", i, p)
					return
				}
			}
			if len(positions) >= 600 {
				return
			}
		}
	}()
	total := emitConcurrently(t, s.DB, org.ID, 16, 20)
	<-done
	var last int64
	s.Get(t, &last, `SELECT event_last FROM order_numbers WHERE organization_id = $1`, org.ID)
	if last != int64(total) {
		t.Errorf("last position %d, want %d (one per committed event)", last, total)
	}
	t.Logf("%d events, %d reads", total, reads)
}

// Subscribers racing many committing writers each get every event once, in order: one that
// keeps up, one that reads nothing until the writers are done (it falls behind what the feed
// keeps and catches up from the database), and one that reconnects half-way with its cursor.
func TestLiveSubscribersLoseAndDoubleNothingUnderConcurrentCommits(t *testing.T) {
	t.Parallel()
	s := resolverstest.NewLive(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	const doc = `subscription($after: String) { domainEvents(after: $after) { cursor } }`
	fast, slow, resumed := dialLive(t, s, org.Token), dialLive(t, s, org.Token), dialLive(t, s, org.Token)
	for _, c := range []*resolverstest.LiveClient{fast, slow, resumed} {
		subscribe(t, c, "1", doc, nil)
	}
	time.Sleep(300 * time.Millisecond)

	var (
		wg        sync.WaitGroup
		fastGot   []int64
		resumeGot []int64
	)
	total := make(chan int, 1)
	wg.Go(func() { fastGot = readCursors(t, fast, "domainEvents", total) })
	wg.Go(func() {
		first := readN(t, resumed, "domainEvents", 100)
		resumed.Close()
		again := dialLive(t, s, org.Token)
		subscribe(t, again, "1", doc, vars{"after": first[len(first)-1]})
		resumeGot = append(toPositions(t, first), readCursors(t, again, "domainEvents", total)...)
	})
	n := emitConcurrently(t, s.DB, org.ID, 16, 100)
	total <- n
	total <- n
	slowGot := toPositions(t, readN(t, slow, "domainEvents", n))
	wg.Wait()
	for name, got := range map[string][]int64{"fast": fastGot, "slow": slowGot, "resumed": resumeGot} {
		if len(got) != n {
			t.Errorf("%s subscriber got %d events, want %d", name, len(got), n)
		}
		for i, p := range got {
			if p != int64(i+1) {
				t.Errorf("%s subscriber: event %d has position %d, want %d", name, i, p, i+1)
				break
			}
		}
	}
}

// readN reads n events' cursors.
func readN(t *testing.T, c *resolverstest.LiveClient, field string, n int) []string {
	out := make([]string, 0, n)
	for range n {
		out = append(out, nextEvent(t, c, field).Cursor)
	}
	return out
}

// readCursors reads events until it has read as many as total says (sent once the writers are
// done), as positions.
func readCursors(t *testing.T, c *resolverstest.LiveClient, field string, total <-chan int) []int64 {
	var got []int64
	want := -1
	for want < 0 || len(got) < want {
		if want < 0 {
			select {
			case want = <-total:
			default:
			}
		}
		got = append(got, cursorOf(t, nextEvent(t, c, field)))
		if want >= 0 && got[len(got)-1] >= int64(want) {
			break
		}
	}
	return got
}

func toPositions(t *testing.T, cursors []string) []int64 {
	out := make([]int64, len(cursors))
	for i, c := range cursors {
		out[i] = cursorOf(t, liveEvent{Cursor: c})
	}
	return out
}

// An event the feed hands to many subscribers reads its object once for all of them, and a
// gone object is null for all; another event reads its own.
func TestLiveEventObjectIsReadOnceForAllItsSubscribers(t *testing.T) {
	t.Parallel()
	var reads atomic.Int32
	read := func(_ context.Context, orgs []uuid.UUID) (*storage.Order, error) {
		reads.Add(1)
		time.Sleep(10 * time.Millisecond)
		return &storage.Order{ID: uuid.New(), OrganizationID: orgs[0]}, nil
	}
	e := &storage.LiveEvent{OrganizationID: uuid.New(), Type: "order.paid"}
	got := make([]*storage.Order, 200)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			o, err := resolvers.LiveOrderObject(e, read)
			if err != nil {
				t.Error(err)
			}
			got[i] = o
		})
	}
	wg.Wait()
	if n := reads.Load(); n != 1 {
		t.Errorf("200 subscribers read the order %d times, want once", n)
	}
	for _, o := range got {
		if o != got[0] || o.OrganizationID != e.OrganizationID {
			t.Fatalf("subscribers got different records, or one of another organization")
		}
	}
	if _, err := resolvers.LiveOrderObject(&storage.LiveEvent{}, read); err != nil || reads.Load() != 2 {
		t.Errorf("another event: %v, %d reads, want its own read", err, reads.Load())
	}
	gone, err := resolvers.LiveOrderObject(&storage.LiveEvent{}, func(context.Context, []uuid.UUID) (*storage.Order, error) {
		return nil, storage.ErrNotFound
	})
	if gone != nil || err != nil {
		t.Errorf("a gone order: %v, %v, want null", gone, err)
	}
}
