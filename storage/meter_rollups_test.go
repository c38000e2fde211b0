package storage_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

var rollupStart = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// ingest stores events through the ingestion path, which marks the days it touches.
func ingest(t testing.TB, db *sqlx.DB, events ...storage.EventWrite) {
	t.Helper()
	for i := range events {
		events[i].ID = uuid.New()
		if events[i].Name == "" {
			events[i].Name = "api_call"
		}
		if events[i].Metadata == "" {
			events[i].Metadata = "{}"
		}
	}
	if _, err := storage.IngestEvents(t.Context(), db, events, time.Now()); err != nil {
		t.Fatal(err)
	}
}

func refreshRollups(t testing.TB, db *sqlx.DB, now time.Time) int {
	t.Helper()
	n, err := storage.RefreshMeterRollups(t.Context(), db, now)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// rollupFixture is an organization with ten days of usage from three customers (by id, by
// external id, by both, and by an external id nobody holds yet), other event names and
// values that are not numbers, rolled up on the 8th at noon.
type rollupFixture struct {
	db            *sqlx.DB
	org           uuid.UUID
	cust, extOnly storage.MeterCustomer
	now           time.Time
}

func newRollupFixture(t *testing.T) *rollupFixture {
	db := storagetest.New(t)
	org := newOrganization(t, db, "acme")
	f := &rollupFixture{db: db, org: org.ID, now: rollupStart.AddDate(0, 0, 7).Add(12 * time.Hour)}
	f.cust = newMeterCustomer(t, db, org.ID, "ext-1")
	nobody := "not-yet"
	f.extOnly = storage.MeterCustomer{OrganizationID: org.ID, ExternalID: &nobody}
	rng := rand.New(rand.NewPCG(1, 2))
	var events []storage.EventWrite
	for i := range 600 {
		e := storage.EventWrite{OrganizationID: org.ID, Timestamp: rollupStart.Add(time.Duration(rng.IntN(10*24*60)) * time.Minute),
			Metadata: fmt.Sprintf(`{"tokens": %d, "user": "u%d"}`, rng.IntN(1000)-100, rng.IntN(7))}
		switch i % 5 {
		case 0:
			e.CustomerID = &f.cust.ID
		case 1:
			e.ExternalCustomerID = f.cust.ExternalID
		case 2:
			e.CustomerID, e.ExternalCustomerID = &f.cust.ID, f.cust.ExternalID
		case 3:
			e.ExternalCustomerID = &nobody
		}
		switch i % 7 {
		case 0:
			e.Name = "other"
		case 1:
			e.Metadata = `{"tokens": "many"}`
		}
		events = append(events, e)
	}
	ingest(t, db, events...)
	return f
}

var rollupAggregations = []string{
	`{"func": "count"}`,
	`{"func": "sum", "property": "tokens"}`,
	`{"func": "max", "property": "tokens"}`,
	`{"func": "min", "property": "tokens"}`,
	`{"func": "avg", "property": "tokens"}`,
	`{"func": "sum", "property": "timestamp"}`,
	`{"func": "unique", "property": "user"}`,
}

// TestMeterRollupsEqualEvents: for every aggregation, customer and window, the quantity
// read through the rollups equals the one read from the events alone, and the rollups are
// really read wherever the window holds a whole rolled-up day (never for unique).
func TestMeterRollupsEqualEvents(t *testing.T) {
	f := newRollupFixture(t)
	ctx := t.Context()
	meters := make([]*storage.Meter, len(rollupAggregations))
	for i, a := range rollupAggregations {
		meters[i] = newMeter(t, f.db, f.org, apiCalls, a)
	}
	if n := refreshRollups(t, f.db, f.now); n != len(meters)-1 {
		t.Fatalf("refreshed %d meters, want %d (all but unique)", n, len(meters)-1)
	}
	d := func(day, hour, minute int) time.Time {
		return rollupStart.AddDate(0, 0, day).Add(time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute)
	}
	windows := []struct {
		name     string
		from, to time.Time
		rollups  bool
	}{
		{"whole days, past the rollups", d(0, 0, 0), d(10, 0, 0), true},
		{"partial days at both ends", d(1, 5, 30), d(5, 17, 0), true},
		{"within one day", d(2, 10, 0), d(2, 20, 0), false},
		{"one whole day", d(3, 0, 0), d(4, 0, 0), true},
		{"only after the rollups", d(7, 0, 0), d(10, 0, 0), false},
		{"the month", d(0, 0, 0), d(31, 0, 0), true},
	}
	customers := []struct {
		name string
		c    *storage.MeterCustomer
	}{{"customer", &f.cust}, {"external id only", &f.extOnly}, {"organization", nil}}
	for i, m := range meters {
		for _, w := range windows {
			_, _, _, used, err := storage.MeterRollupPlan(ctx, f.db, m, w.from, w.to)
			if err != nil {
				t.Fatal(err)
			}
			if want := w.rollups && i != len(meters)-1; used != want {
				t.Errorf("%s, %s: rollups used = %v, want %v", rollupAggregations[i], w.name, used, want)
			}
			for _, c := range customers {
				checkSameQuantity(t, f.db, m, c.c, w.from, w.to, rollupAggregations[i]+", "+w.name+", "+c.name)
			}
		}
	}
}

func checkSameQuantity(t *testing.T, db *sqlx.DB, m *storage.Meter, c *storage.MeterCustomer, from, to time.Time, what string) {
	t.Helper()
	ctx := t.Context()
	want, err := storage.MeterQuantityFromEvents(ctx, db, m, c, from, to)
	if err != nil {
		t.Fatal(err)
	}
	var got float64
	if c != nil {
		got, err = storage.MeterQuantity(ctx, db, m, *c, from, to)
	} else {
		var s *storage.MeterQuantities
		s, err = storage.MeterQuantitySeries(ctx, db, m, nil, from, to, "day")
		if s != nil {
			got = s.Total
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if diff := got - want; diff > 1e-9*max(1, want) || diff < -1e-9*max(1, want) {
		t.Errorf("%s: quantity = %v, want %v (from events)", what, got, want)
	}
}

// TestMeterRollupSeriesEqualEvents compares every bucket of day, week and month series.
func TestMeterRollupSeriesEqualEvents(t *testing.T) {
	f := newRollupFixture(t)
	ctx := t.Context()
	m := newMeter(t, f.db, f.org, apiCalls, `{"func": "sum", "property": "tokens"}`)
	refreshRollups(t, f.db, f.now)
	from, to := rollupStart.Add(-36*time.Hour), rollupStart.AddDate(0, 0, 12).Add(3*time.Hour)
	for _, interval := range []string{"day", "week", "month"} {
		got, err := storage.MeterQuantitySeries(ctx, f.db, m, &f.cust, from, to, interval)
		if err != nil {
			t.Fatal(err)
		}
		want, err := storage.MeterQuantitySeriesFromEvents(ctx, f.db, m, &f.cust, from, to, interval)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s series:\n got %v\nwant %v", interval, got, want)
		}
		if want.Total == 0 {
			t.Errorf("%s series is empty: the fixture must give it something to compare", interval)
		}
	}
}

// TestLateEventsCountAtOnce: an event ingested into a rolled-up day counts in the very next
// quantity (its day is read from the events until the next refresh recomputes it), and the
// refresh clears the mark and keeps the answer.
func TestLateEventsCountAtOnce(t *testing.T) {
	f := newRollupFixture(t)
	ctx := t.Context()
	m := newMeter(t, f.db, f.org, apiCalls, `{"func": "count"}`)
	refreshRollups(t, f.db, f.now)
	from, to := rollupStart, rollupStart.AddDate(0, 1, 0)
	before, err := storage.MeterQuantity(ctx, f.db, m, f.cust, from, to)
	if err != nil {
		t.Fatal(err)
	}
	late := rollupStart.AddDate(0, 0, 2).Add(3 * time.Hour)
	ingest(t, f.db, storage.EventWrite{OrganizationID: f.org, Timestamp: late, CustomerID: &f.cust.ID},
		storage.EventWrite{OrganizationID: f.org, Timestamp: late, ExternalCustomerID: f.cust.ExternalID})
	_, _, changed, _, err := storage.MeterRollupPlan(ctx, f.db, m, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(changed) != 1 || time.Unix(changed[0], 0).UTC() != rollupStart.AddDate(0, 0, 2) {
		t.Errorf("changed days = %v, want the 3rd of March only", changed)
	}
	for _, step := range []string{"before the refresh", "after the refresh"} {
		got, err := storage.MeterQuantity(ctx, f.db, m, f.cust, from, to)
		if err != nil {
			t.Fatal(err)
		}
		if got != before+2 {
			t.Errorf("%s: quantity = %v, want %v", step, got, before+2)
		}
		checkSameQuantity(t, f.db, m, &f.cust, from, to, step)
		refreshRollups(t, f.db, f.now)
	}
	var marks int
	if err := f.db.GetContext(ctx, &marks, `SELECT count(*) FROM event_day_changes`); err != nil || marks != 0 {
		t.Errorf("%d days still marked after the refresh (%v)", marks, err)
	}
}

// TestMeterEditIgnoresOldRollups: rollups computed with a meter's old filter are never read
// once it changes; the next refresh rebuilds them for the new one.
func TestMeterEditIgnoresOldRollups(t *testing.T) {
	f := newRollupFixture(t)
	ctx := t.Context()
	m := newMeter(t, f.db, f.org, apiCalls, `{"func": "count"}`)
	refreshRollups(t, f.db, f.now)
	from, to := rollupStart, rollupStart.AddDate(0, 1, 0)
	old, err := storage.MeterQuantity(ctx, f.db, m, f.cust, from, to)
	if err != nil {
		t.Fatal(err)
	}
	m, err = storage.UpdateMeter(ctx, f.db, []uuid.UUID{f.org}, m.ID, storage.MeterUpdate{
		Filter: storage.Set(storage.RawJSON(`{"conjunction": "and", "clauses": [{"property": "name", "operator": "eq", "value": "other"}]}`))})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"before the refresh", "after the refresh"} {
		_, _, _, used, err := storage.MeterRollupPlan(ctx, f.db, m, from, to)
		if err != nil {
			t.Fatal(err)
		}
		if want := step == "after the refresh"; used != want {
			t.Errorf("%s: rollups used = %v, want %v", step, used, want)
		}
		got, err := storage.MeterQuantity(ctx, f.db, m, f.cust, from, to)
		if err != nil {
			t.Fatal(err)
		}
		if got == old || got == 0 {
			t.Errorf("%s: quantity = %v, want the count of other events (api_call gave %v)", step, got, old)
		}
		checkSameQuantity(t, f.db, m, &f.cust, from, to, step)
		refreshRollups(t, f.db, f.now)
	}
}

// TestMeterRollupsUnderConcurrentIngest races batches of late events into rolled-up days
// against refreshes and a reader: the reader never sees the count go down, and at the end
// every event is counted exactly once.
func TestMeterRollupsUnderConcurrentIngest(t *testing.T) {
	f := newRollupFixture(t)
	ctx := t.Context()
	m := newMeter(t, f.db, f.org, apiCalls, `{"func": "count"}`)
	refreshRollups(t, f.db, f.now)
	from, to := rollupStart, rollupStart.AddDate(0, 1, 0)
	start, err := storage.MeterQuantity(ctx, f.db, m, f.cust, from, to)
	if err != nil {
		t.Fatal(err)
	}
	const writers, batches, perBatch = 8, 20, 10
	var wg, background sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, writers+2)
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for range batches {
				events := make([]storage.EventWrite, perBatch)
				for i := range events {
					events[i] = storage.EventWrite{ID: uuid.New(), OrganizationID: f.org, Name: "api_call", Metadata: "{}",
						CustomerID: &f.cust.ID, Timestamp: rollupStart.Add(time.Duration(rng.IntN(8*24)) * time.Hour)}
				}
				if _, err := storage.IngestEvents(ctx, f.db, events, time.Now()); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	background.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := storage.RefreshMeterRollups(ctx, f.db, f.now); err != nil {
				errs <- err
				return
			}
		}
	})
	background.Go(func() {
		last := start
		for {
			select {
			case <-done:
				return
			default:
			}
			got, err := storage.MeterQuantity(ctx, f.db, m, f.cust, from, to)
			if err != nil {
				errs <- err
				return
			}
			if got < last {
				errs <- fmt.Errorf("count went down from %v to %v", last, got)
				return
			}
			last = got
		}
	})
	wg.Wait()
	close(done)
	background.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	refreshRollups(t, f.db, f.now)
	got, err := storage.MeterQuantity(ctx, f.db, m, f.cust, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if want := start + writers*batches*perBatch; got != want {
		t.Errorf("count after the race = %v, want %v", got, want)
	}
	checkSameQuantity(t, f.db, m, &f.cust, from, to, "after the race")
}
