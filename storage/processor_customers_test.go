package storage_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"till/storage"
	"till/storage/storagetest"
)

// TestTheFirstProcessorCustomerRecordedWins races recordings of different processor records
// for one customer: exactly one is kept, and every recording answers with it.
func TestTheFirstProcessorCustomerRecordedWins(t *testing.T) {
	db := storagetest.New(t)
	ctx := context.Background()
	email := "ada@example.com"
	org, err := storage.CreateOrganization(ctx, db, "Org", "org-processor-customers")
	if err != nil {
		t.Fatal(err)
	}
	cust, err := storage.CreateCustomer(ctx, db, org.ID, storage.CustomerWrite{Email: &email})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := storage.ProcessorCustomerID(ctx, db, cust.ID); err != nil || id != "" {
		t.Fatalf("a new customer's record: %q, %v; want none", id, err)
	}
	answers := make([]string, 20)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			got, err := storage.RecordProcessorCustomerID(ctx, db, cust.ID, fmt.Sprintf("cus_%d", i))
			if err != nil {
				t.Error(err)
			}
			answers[i] = got
		})
	}
	wg.Wait()
	kept, err := storage.ProcessorCustomerID(ctx, db, cust.ID)
	if err != nil || kept == "" {
		t.Fatalf("kept %q, %v", kept, err)
	}
	for i, a := range answers {
		if a != kept {
			t.Errorf("recording %d answered %q, but %q is kept", i, a, kept)
		}
	}
}
