package wake_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"till/internal/wake"
	"till/storage/storagetest"
)

func TestMain(m *testing.M) { os.Exit(storagetest.Main(m)) }

// cuttingDialer dials PostgreSQL for the listener and can cut its connections and refuse
// new ones, as a network failure or a server restart would.
type cuttingDialer struct {
	mu      sync.Mutex
	conns   []net.Conn
	refuse  bool
	refused chan struct{} // receives each refused attempt
}

func (d *cuttingDialer) Dial(network, address string) (net.Conn, error) {
	return d.DialTimeout(network, address, 0)
}

func (d *cuttingDialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.refuse {
		select {
		case d.refused <- struct{}{}:
		default:
		}
		return nil, errors.New("refused by the test")
	}
	c, err := net.DialTimeout(network, address, timeout)
	if err == nil {
		d.conns = append(d.conns, c)
	}
	return c, err
}

// cut closes every connection made so far and refuses new ones until allow.
func (d *cuttingDialer) cut() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refuse = true
	for _, c := range d.conns {
		_ = c.Close()
	}
	d.conns = nil
}

func (d *cuttingDialer) allow() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refuse = false
}

func waitSignal(t *testing.T, s wake.Signal, what string) {
	t.Helper()
	select {
	case <-s:
	case <-time.After(10 * time.Second):
		t.Fatalf("no wake-up for %s within 10s", what)
	}
}

func notify(t *testing.T, db *sqlx.DB, channel string) {
	t.Helper()
	if _, err := db.Exec(`SELECT pg_notify($1, '')`, channel); err != nil {
		t.Fatal(err)
	}
}

func TestListenerWakesItsSubscribers(t *testing.T) {
	dsn := storagetest.DSN(t)
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dialer := &cuttingDialer{refused: make(chan struct{}, 1)}
	l := wake.New(dsn, slog.New(slog.DiscardHandler))
	wake.WithDialer(l, dialer)
	jobs, events, losses := wake.NewSignal(), wake.NewSignal(), wake.NewSignal()
	l.On("wake_test_jobs", jobs.Wake)
	l.On("wake_test_events", events.Wake)
	l.OnLoss(losses.Wake)
	if l.Listening() {
		t.Fatal("listening before Run")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	defer func() {
		cancel()
		<-done
	}()

	t.Run("every subscriber looks for work once the listener listens", func(t *testing.T) {
		waitSignal(t, jobs, "the first catch-up of jobs")
		waitSignal(t, events, "the first catch-up of events")
		waitListening(t, l, true)
	})
	t.Run("a notification wakes its channel's subscriber", func(t *testing.T) {
		notify(t, db, "wake_test_jobs")
		waitSignal(t, jobs, "a notification of jobs")
		notify(t, db, "wake_test_events")
		waitSignal(t, events, "a notification of events")
	})
	t.Run("a notification lost with the connection is made up for after reconnecting", func(t *testing.T) {
		dialer.cut()
		select { // the listener noticed and is trying to reconnect
		case <-dialer.refused:
		case <-time.After(10 * time.Second):
			t.Fatal("the listener did not try to reconnect within 10s")
		}
		if l.Listening() {
			t.Error("listening while the connection is down")
		}
		waitSignal(t, losses, "the loss of the connection")
		notify(t, db, "wake_test_jobs") // nobody listens: lost
		dialer.allow()
		waitSignal(t, jobs, "the catch-up of jobs after reconnecting")
		waitSignal(t, events, "the catch-up of events after reconnecting")
		waitListening(t, l, true)
		notify(t, db, "wake_test_jobs")
		waitSignal(t, jobs, "a notification after reconnecting")
	})
	t.Run("the end of Run ends listening", func(t *testing.T) {
		cancel()
		<-done
		if l.Listening() {
			t.Error("listening after Run returned")
		}
		waitSignal(t, losses, "the end of Run")
	})
}

// waitListening waits until the listener reports want: the connection's events arrive on
// pq's goroutine, a moment after the listener's own.
func waitListening(t *testing.T, l *wake.Listener, want bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for l.Listening() != want {
		if time.Now().After(deadline) {
			t.Fatalf("Listening() stayed %v for 10s", !want)
		}
		time.Sleep(time.Millisecond)
	}
}
