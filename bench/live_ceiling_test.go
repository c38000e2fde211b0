package bench

import (
	"context"
	"maps"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// liveCeilingChannel is the channel the live benchmark's ceiling notifies; Till listens to
// none of its name.
const liveCeilingChannel = "bench_live_ceiling"

// ceilingListener is a lib/pq listener in the benchmark process that records when each
// notification arrived, keyed by its payload.
type ceilingListener struct {
	l       *pq.Listener
	next    int
	mu      sync.Mutex
	at      map[string]time.Time
	repeats int
}

// listenCeiling listens on liveCeilingChannel and returns once the LISTEN is in place.
func listenCeiling(b *testing.B, dsn string) *ceilingListener {
	b.Helper()
	c := &ceilingListener{l: pq.NewListener(dsn, 10*time.Millisecond, time.Second, nil), at: map[string]time.Time{}}
	if err := c.l.Listen(liveCeilingChannel); err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); c.l.Ping() != nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("the ceiling's listener did not connect")
		}
	}
	go func() {
		for n := range c.l.Notify {
			at := time.Now()
			if n == nil { // reconnected: what was sent meanwhile is lost, and counted so
				continue
			}
			c.mu.Lock()
			if _, ok := c.at[n.Extra]; ok {
				c.repeats++
			} else {
				c.at[n.Extra] = at
			}
			c.mu.Unlock()
		}
	}()
	return c
}

// notify commits a transaction of one pg_notify and returns its payload and the times of
// its COMMIT.
func (c *ceilingListener) notify(db *sqlx.DB) (string, commitTimes, error) {
	c.next++
	id := strconv.Itoa(c.next)
	tx, err := db.BeginTxx(context.Background(), nil)
	if err != nil {
		return "", commitTimes{}, err
	}
	if _, err := tx.Exec(`SELECT pg_notify($1, $2)`, liveCeilingChannel, id); err != nil {
		_ = tx.Rollback()
		return "", commitTimes{}, err
	}
	t := commitTimes{sent: time.Now()}
	if err := tx.Commit(); err != nil {
		return "", commitTimes{}, err
	}
	t.returned = time.Now()
	return id, t, nil
}

// wait returns the arrivals once n have arrived, or whatever arrived within timeout, and
// how many arrived again.
func (c *ceilingListener) wait(b *testing.B, n int, timeout time.Duration) (map[string]time.Time, int) {
	b.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(10 * time.Millisecond) {
		c.mu.Lock()
		got := len(c.at)
		c.mu.Unlock()
		if got >= n || time.Now().After(deadline) {
			break
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.at), c.repeats
}

// close stops listening.
func (c *ceilingListener) close() { _ = c.l.Close() }
