package storage_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/uuid"

	"till/storage"
)

// TestEventWindowsByCustomersReadOnlyTheirWindows pins the per-customer windows: each
// customer's window holds its newest events, those sent with its id and with its external id
// merged in order, and reading windows of customers with thousands of events reads about a
// window of rows per customer from the events indexes, never a partition sequentially.
func TestEventWindowsByCustomersReadOnlyTheirWindows(t *testing.T) {
	db := eventsDB(t)
	org := eventOrg(t, db)
	ada, bob := eventCustomer(t, db, org.ID, "ada"), eventCustomer(t, db, org.ID, "bob")
	for _, c := range []*storage.Customer{ada, bob} {
		// 3000 events over two years: even ones sent with the id, odd ones with the external id.
		if _, err := db.ExecContext(t.Context(), `INSERT INTO events (organization_id, "timestamp", name, customer_id,
			external_customer_id)
			SELECT $1, now() - i * interval '6 hours', 'n', CASE WHEN i % 2 = 0 THEN $2::uuid END,
				CASE WHEN i % 2 = 1 THEN $3 END
			FROM generate_series(1, 3000) i`, org.ID, c.ID, *c.ExternalID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(t.Context(), `ANALYZE events`); err != nil {
		t.Fatal(err)
	}
	const limit = 10
	edb := &explainingDB{DB: db}
	customers := []uuid.UUID{bob.ID, ada.ID}
	windows, err := storage.EventWindowsByCustomers(t.Context(), edb, []uuid.UUID{org.ID}, customers,
		storage.EventListQuery{Window: storage.Window{Limit: limit}})
	if err != nil || len(windows) != 2 || len(edb.plans) != 1 {
		t.Fatalf("%d windows, %d statements, err %v", len(windows), len(edb.plans), err)
	}
	for i, w := range windows {
		ts := make([]int64, len(w.Items))
		sent := map[bool]int{}
		for j, e := range w.Items {
			ts[j] = -e.Timestamp.UnixMicro()
			sent[e.CustomerID != nil]++
			if *e.ResolvedCustomerID != customers[i] {
				t.Errorf("window %d holds event %s of %v", i, e.ID, e.ResolvedCustomerID)
			}
		}
		if len(w.Items) != limit || !w.More || !slices.IsSorted(ts) || sent[true] != limit/2 || sent[false] != limit/2 {
			t.Errorf("window %d: %d events (more %v), newest first %v, by id %d, by external id %d", i,
				len(w.Items), w.More, slices.IsSorted(ts), sent[true], sent[false])
		}
	}
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal([]byte(edb.plans[0]), &plans); err != nil {
		t.Fatal(err)
	}
	var read float64
	for _, s := range eventScans(plans[0].Plan) {
		if s.IndexName == "" {
			t.Errorf("%s is read by %s, not by an index", s.Relation, s.NodeType)
		}
		read += (s.ActualRows + s.Removed) * s.ActualLoops
	}
	t.Logf("two windows of %d read %v events rows", limit, read)
	if read > float64(10*limit*len(customers)) {
		t.Errorf("the windows read %v events rows, want about %d:\n%s", read, limit*len(customers), edb.plans[0])
	}
}
