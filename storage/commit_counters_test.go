package storage_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"till/storage"
	"till/storage/storagetest"
)

// TestCommitCountersNeverDeadlock races transactions that write a domain event before an
// order (a new buyer's purchase: customer.created, then the order) against transactions that
// write them the other way round (a returning buyer's). Each draws its organization's event
// positions and order numbers as it commits, in the order it wrote the rows. None may fail:
// with a row per counter, two such commits each took one row and waited for the other's, and
// PostgreSQL aborted one as a deadlock, a paid purchase answered with an internal error.
// Every event still gets its own position, 1 to n.
func TestCommitCountersNeverDeadlock(t *testing.T) {
	db := storagetest.New(t)
	ctx := context.Background()
	org, err := storage.CreateOrganization(ctx, db, "Counters", "counters")
	if err != nil {
		t.Fatal(err)
	}
	email := "buyer@example.com"
	cust, err := storage.CreateCustomer(ctx, db, org.ID, storage.CustomerWrite{Type: "individual", Email: &email, Metadata: storage.JSONMap{}})
	if err != nil {
		t.Fatal(err)
	}
	event := func(tx *sqlx.Tx) error {
		_, err := storage.InsertDomainEvent(ctx, tx, org.ID, "order.created", uuid.New())
		return err
	}
	order := func(tx *sqlx.Tx) error {
		_, err := storage.InsertOrder(ctx, tx, org.ID, time.Now(), storage.OrderWrite{CustomerID: cust.ID, Status: "paid",
			BillingReason: "purchase", Currency: "usd", SubtotalAmount: 100, NetAmount: 100, TotalAmount: 100,
			CustomFieldData: storage.JSONMap{}, Metadata: storage.JSONMap{}})
		return err
	}
	const workers, txs = 16, 25
	var wg sync.WaitGroup
	failures := make(chan error, workers*txs)
	for w := range workers {
		writes := []func(*sqlx.Tx) error{event, order}
		if w%2 == 1 {
			writes = []func(*sqlx.Tx) error{order, event}
		}
		wg.Go(func() {
			for range txs {
				if err := storage.InTx(ctx, db, func(tx *sqlx.Tx) error { return errors.Join(writes[0](tx), writes[1](tx)) }); err != nil {
					failures <- err
					return // each deadlock costs a second of deadlock_timeout: one shows it
				}
			}
		})
	}
	wg.Wait()
	close(failures)
	failed := 0
	for err := range failures {
		if failed++; failed == 1 {
			var pqErr *pq.Error
			if errors.As(err, &pqErr) {
				t.Errorf("a commit failed with %s: %v", pqErr.Code, err)
			} else {
				t.Errorf("a commit failed: %v", err)
			}
		}
	}
	if failed > 1 {
		t.Errorf("%d writers of %d saw a commit fail", failed, workers)
	}
	var positions []int64
	if err := db.Select(&positions, `SELECT position FROM domain_events WHERE organization_id = $1 ORDER BY position`, org.ID); err != nil {
		t.Fatal(err)
	}
	for i, p := range positions {
		if p != int64(i+1) {
			t.Fatalf("positions %v…, want 1 to %d", positions[:min(len(positions), i+3)], len(positions))
		}
	}
}
