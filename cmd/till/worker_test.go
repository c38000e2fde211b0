package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"till/storage/storagetest"
)

// TestWorkerRunsTheBackgroundWork starts `till worker` on a database and checks it runs a
// job and stops when interrupted.
func TestWorkerRunsTheBackgroundWork(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL")
	}
	dsn := storagetest.DSN(t)
	vars := map[string]string{"DATABASE_URL": dsn, "TILL_BLOB_DIR": t.TempDir(), "TILL_SECRET": "a-test-secret", "TILL_LOG_LEVEL": "error",
		"TILL_DATA_DIR": t.TempDir()}
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"worker"}, getenvOf(vars), io.Discard) }()
	var id string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		// The worker migrates the database first; the job table exists once it has.
		err := db.Get(&id, `INSERT INTO jobs (kind, args) VALUES ('order.receipt', '{"order_id": "00000000-0000-4000-8000-000000000000"}')
			RETURNING id`)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	var state string
	for deadline := time.Now().Add(20 * time.Second); state != "discarded"; time.Sleep(50 * time.Millisecond) {
		if err := db.Get(&state, `SELECT state FROM jobs WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("job state = %s, want discarded (its order does not exist)", state)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("worker: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("worker did not stop after the interrupt")
	}
}
