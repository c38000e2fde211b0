package storage_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// costEvent is one event to ingest for the cost metrics: who sent it and what its _cost
// metadata says ("" for none).
type costEvent struct {
	at       time.Time
	customer *uuid.UUID
	external *string
	cost     string
}

func ingestCosts(t testing.TB, db *sqlx.DB, org uuid.UUID, events ...costEvent) {
	t.Helper()
	batch := make([]storage.EventWrite, len(events))
	for i, e := range events {
		meta := `{}`
		if e.cost != "" {
			meta = `{"_cost": {"amount": ` + e.cost + `, "currency": "usd"}}`
		}
		batch[i] = storage.EventWrite{ID: uuid.New(), OrganizationID: org, Timestamp: e.at, Name: "llm",
			CustomerID: e.customer, ExternalCustomerID: e.external, Metadata: meta}
	}
	if _, err := storage.IngestEvents(context.Background(), db, batch, time.Now()); err != nil {
		t.Fatal(err)
	}
}

type costPoint struct {
	Costs, Cumulative float64
	Users, Window     int64
}

func costSeries(t *testing.T, db *sqlx.DB, f storage.MetricsFilter) []costPoint {
	t.Helper()
	f.Columns = []string{"costs", "cumulative_costs", "active_users", "window_users"}
	points, err := storage.Metrics(context.Background(), db, f)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]costPoint, len(points))
	for i, p := range points {
		out[i] = costPoint{math.Round(p.Costs*1e6) / 1e6, math.Round(p.CumulativeCosts*1e6) / 1e6, p.ActiveUsers, p.WindowUsers}
	}
	return out
}

// TestMetricsCostsAndActiveUsers reads the usage columns before and after the events are
// folded into the rollups, in UTC and in a zone three quarters of an hour off, for the
// organization and for one customer: the costs of the window and of the history before it,
// and who sent events, a customer once whether its events name it by id or by external id.
func TestMetricsCostsAndActiveUsers(t *testing.T) {
	db := storagetest.New(t)
	ctx := context.Background()
	shop, other := newMetricsShop(t, db), newMetricsShop(t, db)
	ext := "ext-" + uuid.NewString()[:8]
	known, err := storage.CreateCustomer(ctx, db, shop.org, storage.CustomerWrite{Type: storage.CustomerTypeIndividual,
		Email: ptr(ext + "@example.com"), ExternalID: &ext})
	if err != nil {
		t.Fatal(err)
	}
	stranger := "not-a-customer"
	day := time.Date(2031, 3, 10, 0, 0, 0, 0, time.UTC)
	ingestCosts(t, db, shop.org,
		costEvent{at: day.AddDate(0, 0, -40), customer: &shop.customer, cost: "100"},  // history
		costEvent{at: day.Add(2 * time.Hour), customer: &shop.customer, cost: "1.25"}, // day 1
		costEvent{at: day.Add(3 * time.Hour), customer: &known.ID, cost: `"0.5"`},     // a decimal string, as REST keeps it
		costEvent{at: day.Add(4 * time.Hour), external: &ext, cost: "2"},              // the same customer by external id
		costEvent{at: day.Add(5 * time.Hour), external: &stranger},                    // no cost, an unknown sender
		costEvent{at: day.Add(6 * time.Hour), cost: "3"},                              // no sender
		costEvent{at: day.Add(6 * time.Hour), cost: `"abc"`},                          // not an amount
		costEvent{at: day.Add(6 * time.Hour), cost: `1e-400`},                         // below a float8, rounded away
		costEvent{at: day.Add(6 * time.Hour), cost: `{"a": 1}`},                       // not an amount
		costEvent{at: day.Add(26 * time.Hour), customer: &known.ID, cost: "0.001"},    // day 2
		costEvent{at: day.Add(80 * time.Hour), customer: &shop.customer, cost: "9"},   // after the window
	)
	ingestCosts(t, db, other.org, costEvent{at: day.Add(2 * time.Hour), customer: &other.customer, cost: "1000"})

	utc := storage.MetricsFilter{Orgs: []uuid.UUID{shop.org}, From: day, To: day.AddDate(0, 0, 2), Interval: "day", Zone: "UTC"}
	kathmandu, _ := time.LoadLocation("Asia/Kathmandu") // +05:45
	nepal := storage.MetricsFilter{Orgs: []uuid.UUID{shop.org}, Interval: "day", Zone: "Asia/Kathmandu", Exact: true,
		From: time.Date(2031, 3, 10, 0, 0, 0, 0, kathmandu), To: time.Date(2031, 3, 12, 0, 0, 0, 0, kathmandu)}
	one := utc
	one.Customers = []uuid.UUID{known.ID}
	tests := []struct {
		name string
		f    storage.MetricsFilter
		want []costPoint
	}{
		{"organization, UTC days", utc, []costPoint{{6.75, 106.75, 3, 3}, {0.001, 106.751, 1, 3}}},
		// Kathmandu's 10 March starts at 18:15 UTC on the 9th: day 1's events all fall in it.
		{"organization, Kathmandu days", nepal, []costPoint{{6.75, 106.75, 3, 3}, {0.001, 106.751, 1, 3}}},
		{"one customer, by id and by external id", one, []costPoint{{2.5, 2.5, 1, 1}, {0.001, 2.501, 1, 1}}},
	}
	check := func(stage string) {
		for _, tt := range tests {
			if got := costSeries(t, db, tt.f); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("%s, %s: got %v, want %v", stage, tt.name, got, tt.want)
			}
		}
	}
	// An amount a float8 cannot hold reads as what it rounds to, alone or summed.
	var tiny float64
	if err := db.Get(&tiny, `SELECT event_cost('{"_cost": {"amount": 1e-400}}')::float8`); err != nil || tiny != 0 {
		t.Fatalf("a tiny amount: %v, %v", tiny, err)
	}
	check("unfolded")
	if n, err := storage.FoldMetrics(ctx, db); err != nil || n < 10 {
		t.Fatalf("fold: %d, %v", n, err)
	}
	check("folded")
	ingestCosts(t, db, shop.org, costEvent{at: day.Add(27 * time.Hour), external: &stranger, cost: "1"})
	tests[0].want[1] = costPoint{1.001, 107.751, 2, 3}
	tests[1].want[1] = tests[0].want[1]
	check("partly folded")
	if _, err := storage.FoldMetrics(ctx, db); err != nil {
		t.Fatal(err)
	}
	check("folded again")
}

// TestMetricsCostFoldsRaceIngestion folds while batches are ingested concurrently: the
// costs read at the end count every event exactly once.
func TestMetricsCostFoldsRaceIngestion(t *testing.T) {
	db := storagetest.New(t)
	ctx := context.Background()
	shop := newMetricsShop(t, db)
	day := time.Date(2031, 5, 1, 0, 0, 0, 0, time.UTC)
	const writers, batches, perBatch = 6, 15, 20
	stop := make(chan struct{})
	folded := make(chan error, 1)
	total := 0
	go func() {
		for {
			n, err := storage.FoldMetrics(ctx, db)
			total += n
			if err != nil {
				folded <- err
				return
			}
			select {
			case <-stop:
				folded <- nil
				return
			default:
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				events := make([]costEvent, perBatch)
				for i := range events {
					events[i] = costEvent{at: day.Add(time.Duration(w*batches+b) * time.Minute), customer: &shop.customer, cost: "1"}
				}
				ingestCosts(t, db, shop.org, events...)
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-folded; err != nil {
		t.Fatal(err)
	}
	f := storage.MetricsFilter{Orgs: []uuid.UUID{shop.org}, From: day, To: day.AddDate(0, 0, 1), Interval: "day", Zone: "UTC"}
	want := []costPoint{{writers * batches * perBatch, writers * batches * perBatch, 1, 1}}
	if got := costSeries(t, db, f); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// Each fold's count is what it added to the rollups: together they are the events below
	// the last horizon, each once (other databases' transactions may hold the horizon back).
	var below, rolled int
	if err := db.Get(&below, `SELECT count(*) FROM events e JOIN metric_event_folds f USING (organization_id)
		WHERE e.organization_id = $1 AND e.xid < f.below`, shop.org); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&rolled, `SELECT coalesce(sum(events), 0) FROM metric_user_quarters WHERE organization_id = $1`, shop.org); err != nil {
		t.Fatal(err)
	}
	if below != total || rolled != total || total == 0 {
		t.Fatalf("folds counted %d events, the rollups hold %d, %d are below the horizon", total, rolled, below)
	}
}
