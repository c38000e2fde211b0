package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"till/internal/pgembed"
	"till/storage"
)

// statementCounter reads how many statements a database's sessions ran from
// pg_stat_statements, which counts each one when it ends (pg_stat_database's transaction
// counters are flushed by each backend up to ten seconds late, which blurs a short window).
type statementCounter struct {
	admin *sqlx.DB // on the postgres database, whose own statements are not counted
	db    string
}

// startCountingCluster starts a private cluster that loads pg_stat_statements (the shared
// test cluster does not: it would tax every other test) with an empty database named till,
// and returns the database's URL and a counter of its statements.
func startCountingCluster(t *testing.T) (string, *statementCounter) {
	t.Helper()
	dir, err := os.MkdirTemp("", "till-idle-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // the server may run as another user
		t.Fatal(err)
	}
	c, err := pgembed.Start(t.Context(), pgembed.Options{Dir: dir, Settings: map[string]string{
		"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off",
		"shared_preload_libraries": "pg_stat_statements", "pg_stat_statements.track_utility": "on"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	if err := c.CreateDatabase(t.Context(), "till"); err != nil {
		t.Fatal(err)
	}
	admin, err := sqlx.Open("postgres", c.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	if _, err := admin.Exec(`CREATE EXTENSION pg_stat_statements`); err != nil {
		t.Skipf("pg_stat_statements is not available in this PostgreSQL installation: %v", err)
	}
	return c.DSN("till"), &statementCounter{admin: admin, db: "till"}
}

// reset forgets the statements counted so far.
func (s *statementCounter) reset(t *testing.T) {
	t.Helper()
	if _, err := s.admin.Exec(`SELECT pg_stat_statements_reset()`); err != nil {
		t.Fatal(err)
	}
}

// counted returns how many statements ran since the last reset, and which.
func (s *statementCounter) counted(t *testing.T) (int, string) {
	t.Helper()
	var rows []struct {
		Calls int    `db:"calls"`
		Query string `db:"query"`
	}
	if err := s.admin.Select(&rows, `SELECT calls, query FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1) ORDER BY calls DESC`, s.db); err != nil {
		t.Fatal(err)
	}
	n := 0
	var list strings.Builder
	for _, r := range rows {
		n += r.Calls
		fmt.Fprintf(&list, "%6d  %s\n", r.Calls, strings.Join(strings.Fields(r.Query), " "))
	}
	return n, list.String()
}

// listens counts the LISTEN statements run since the last reset.
func (s *statementCounter) listens(t *testing.T) int {
	t.Helper()
	var n int
	if err := s.admin.Get(&n, `SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1) AND query LIKE 'LISTEN %'`, s.db); err != nil {
		t.Fatal(err)
	}
	return n
}

// settle waits until a second passes without a statement, or up to limit.
func (s *statementCounter) settle(t *testing.T, limit time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		n, list := s.within(t, time.Second)
		if n == 0 {
			return
		}
		t.Logf("settling: %d statements in a second:\n%s", n, list)
	}
}

// within counts the statements run during d.
func (s *statementCounter) within(t *testing.T, d time.Duration) (int, string) {
	t.Helper()
	s.reset(t)
	time.Sleep(d) // the quantity measured is a rate over time
	return s.counted(t)
}

// TestIdleServerIsQuiet starts `till serve` on an empty database, lets its start-up work
// finish, and checks that, with nothing to do, it runs fewer than one statement a second.
func TestIdleServerIsQuiet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	dsn, stats := startCountingCluster(t)
	vars := map[string]string{"DATABASE_URL": dsn, "TILL_BLOB_DIR": t.TempDir(), "TILL_SECRET": "idle-test-secret", "TILL_LOG_LEVEL": "error",
		"TILL_DATA_DIR": t.TempDir(), "TILL_ADDR": freeAddr(t)}
	_, stop := startServe(t, vars)
	defer stop()

	// Start-up work (migrations, first passes of every loop) ends within a few seconds; a
	// server that never falls quiet is measured anyway once the limit passes.
	stats.settle(t, 20*time.Second)
	const window = 5 * time.Second
	n, list := stats.within(t, window)
	rate := float64(n) / window.Seconds()
	t.Logf("idle: %d statements in %s (%.2f/s)", n, window, rate)
	if rate >= 1 {
		t.Errorf("an idle server ran %d statements in %s (%.1f/s), want under 1/s:\n%s", n, window, rate, list)
	}
}

// TestWorkerWakesForAJobQueuedElsewhere starts `till worker`, waits until it listens and has
// fallen quiet, then queues a job from another connection: the worker must run it well before
// its safety-net poll (a minute), woken by the notification the job's insert sends at commit.
func TestWorkerWakesForAJobQueuedElsewhere(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	dsn, stats := startCountingCluster(t)
	vars := map[string]string{"DATABASE_URL": dsn, "TILL_BLOB_DIR": t.TempDir(), "TILL_SECRET": "wake-test-secret", "TILL_LOG_LEVEL": "error",
		"TILL_DATA_DIR": t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"worker"}, getenvOf(vars), io.Discard) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	}()
	channels := 4 // jobs, domain events, webhook events, renewals
	for deadline := time.Now().Add(30 * time.Second); stats.listens(t) < channels; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the worker did not LISTEN on its %d channels within 30s", channels)
		}
	}
	stats.settle(t, 10*time.Second)

	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	job, _, err := storage.InsertJob(t.Context(), db, storage.JobInsert{Kind: "order.receipt",
		Args: storage.RawJSON(`{"order_id": "00000000-0000-4000-8000-000000000000"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var state string
	for deadline := time.Now().Add(10 * time.Second); state != storage.JobDiscarded; time.Sleep(20 * time.Millisecond) {
		if err := db.Get(&state, `SELECT state FROM jobs WHERE id = $1`, job.ID); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("job state = %s 10s after it was queued, want discarded (its order does not exist): the worker was not woken", state)
		}
	}
}
