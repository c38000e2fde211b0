package storage_test

import (
	"math"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// usage is one event to insert: who sent it, when it happened and its metadata.
type usage struct {
	name       string
	source     string
	customerID *uuid.UUID
	externalID *string
	at         time.Time
	metadata   string
}

func insertEvents(t testing.TB, db sqlx.ExtContext, orgID uuid.UUID, events ...usage) {
	t.Helper()
	for _, e := range events {
		if e.source == "" {
			e.source = "user"
		}
		if e.metadata == "" {
			e.metadata = "{}"
		}
		if _, err := db.ExecContext(t.Context(), `INSERT INTO events (organization_id, name, source, customer_id,
			external_customer_id, "timestamp", metadata) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			orgID, e.name, e.source, e.customerID, e.externalID, e.at, e.metadata); err != nil {
			t.Fatal(err)
		}
	}
}

func newMeter(t testing.TB, db sqlx.ExtContext, orgID uuid.UUID, filter, aggregation string) *storage.Meter {
	t.Helper()
	m, err := storage.CreateMeter(t.Context(), db, orgID, "m", storage.RawJSON(filter), storage.RawJSON(aggregation))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newMeterCustomer(t testing.TB, db sqlx.ExtContext, orgID uuid.UUID, externalID string) storage.MeterCustomer {
	t.Helper()
	email := externalID + "@example.com"
	c, err := storage.CreateCustomer(t.Context(), db, orgID, storage.CustomerWrite{ExternalID: &externalID, Email: &email})
	if err != nil {
		t.Fatal(err)
	}
	return storage.MeterCustomer{OrganizationID: orgID, ID: c.ID, ExternalID: &externalID}
}

const apiCalls = `{"conjunction": "and", "clauses": [{"property": "name", "operator": "eq", "value": "api_call"}]}`

// TestMeterQuantityAggregations covers every aggregation over one customer's events, which
// are sent by id, by external id, and by both at once (counted once), among events of
// another customer, another name, and a non-numeric property.
func TestMeterQuantityAggregations(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	org := newOrganization(t, db, "acme")
	cust := newMeterCustomer(t, db, org.ID, "ext-1")
	other := newMeterCustomer(t, db, org.ID, "ext-2")
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	at := from.Add(time.Hour)
	insertEvents(t, db, org.ID,
		usage{name: "api_call", customerID: &cust.ID, at: at, metadata: `{"tokens": 10, "user": "a"}`},
		usage{name: "api_call", customerID: &cust.ID, at: at, metadata: `{"tokens": 20.5, "user": "b"}`},
		usage{name: "api_call", externalID: cust.ExternalID, at: at, metadata: `{"tokens": 30, "user": "a"}`},
		usage{name: "api_call", customerID: &cust.ID, externalID: cust.ExternalID, at: at, metadata: `{"tokens": 40, "user": "c"}`},
		usage{name: "api_call", customerID: &cust.ID, at: at, metadata: `{"tokens": "many"}`},
		usage{name: "other", customerID: &cust.ID, at: at, metadata: `{"tokens": 500}`},
		usage{name: "api_call", customerID: &other.ID, at: at, metadata: `{"tokens": 1000, "user": "z"}`},
		usage{name: "api_call", externalID: other.ExternalID, at: at, metadata: `{"tokens": 2000}`},
		usage{name: "api_call", customerID: &cust.ID, at: from.AddDate(0, 1, 0), metadata: `{"tokens": 7}`},
	)
	to := from.AddDate(0, 1, 0)
	cases := []struct {
		aggregation string
		want        float64
	}{
		{`{"func": "count"}`, 5},
		{`{"func": "sum", "property": "tokens"}`, 100.5},
		{`{"func": "sum", "property": "metadata.tokens"}`, 100.5},
		{`{"func": "max", "property": "tokens"}`, 40},
		{`{"func": "min", "property": "tokens"}`, 10},
		{`{"func": "avg", "property": "tokens"}`, 100.5 / 4},
		{`{"func": "unique", "property": "user"}`, 3},
		{`{"func": "sum", "property": "name"}`, 0},
		{`{"func": "sum", "property": "missing"}`, 0},
	}
	for _, c := range cases {
		m := newMeter(t, db, org.ID, apiCalls, c.aggregation)
		got, err := storage.MeterQuantity(ctx, db, m, cust, from, to)
		if err != nil {
			t.Fatalf("%s: %v", c.aggregation, err)
		}
		if got != c.want {
			t.Errorf("%s = %v, want %v", c.aggregation, got, c.want)
		}
	}
}

// Two events at the largest finite number would overflow a float8 sum or average; each
// counts at the bound instead, and every aggregation still answers.
func TestMeterQuantityOfHugeValuesStaysFinite(t *testing.T) {
	db := storagetest.New(t)
	org := newOrganization(t, db, "acme")
	cust := newMeterCustomer(t, db, org.ID, "ext-1")
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	insertEvents(t, db, org.ID,
		usage{name: "api_call", customerID: &cust.ID, at: from.Add(time.Hour), metadata: `{"tokens": 1e308}`},
		usage{name: "api_call", customerID: &cust.ID, at: from.Add(2 * time.Hour), metadata: `{"tokens": 1.7e308}`},
		usage{name: "api_call", customerID: &cust.ID, at: from.Add(3 * time.Hour), metadata: `{"tokens": -1e308}`},
	)
	for _, c := range []struct {
		aggregation string
		want        float64
	}{
		{`{"func": "sum", "property": "tokens"}`, 1e280},
		{`{"func": "avg", "property": "tokens"}`, 1e280 / 3},
		{`{"func": "max", "property": "tokens"}`, 1e280},
		{`{"func": "min", "property": "tokens"}`, -1e280},
	} {
		m := newMeter(t, db, org.ID, apiCalls, c.aggregation)
		got, err := storage.MeterQuantity(t.Context(), db, m, cust, from, from.AddDate(0, 1, 0))
		if err != nil {
			t.Fatalf("%s: %v", c.aggregation, err)
		}
		if math.Abs(got-c.want) > math.Abs(c.want)*1e-12 {
			t.Errorf("%s = %v, want %v", c.aggregation, got, c.want)
		}
	}
}

// TestMeterQuantityCustomerMatch checks each way of naming a customer on its own: by id, by
// external id (even before the customer exists), and that another organization's events
// with the same external id never count.
func TestMeterQuantityCustomerMatch(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	org, rival := newOrganization(t, db, "acme"), newOrganization(t, db, "rival")
	byID := newMeterCustomer(t, db, org.ID, "by-id")
	byExt := newMeterCustomer(t, db, org.ID, "by-ext")
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	at := from.Add(time.Minute)
	future := "not-yet-a-customer"
	insertEvents(t, db, org.ID,
		usage{name: "api_call", customerID: &byID.ID, at: at},
		usage{name: "api_call", customerID: &byID.ID, at: at},
		usage{name: "api_call", externalID: byExt.ExternalID, at: at},
		usage{name: "api_call", externalID: &future, at: at},
		usage{name: "api_call", externalID: &future, at: at},
		usage{name: "api_call", externalID: &future, at: at},
	)
	insertEvents(t, db, rival.ID, usage{name: "api_call", externalID: byExt.ExternalID, at: at})
	m := newMeter(t, db, org.ID, apiCalls, `{"func": "count"}`)
	cases := []struct {
		name     string
		customer storage.MeterCustomer
		want     float64
	}{
		{"by id", byID, 2},
		{"by external id", byExt, 1},
		{"id only", storage.MeterCustomer{OrganizationID: org.ID, ID: byID.ID}, 2},
		{"external id of no customer yet", storage.MeterCustomer{OrganizationID: org.ID, ExternalID: &future}, 3},
		{"nobody", storage.MeterCustomer{OrganizationID: org.ID}, 0},
	}
	for _, c := range cases {
		got, err := storage.MeterQuantity(ctx, db, m, c.customer, from, from.AddDate(0, 1, 0))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want {
			t.Errorf("%s: quantity = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestMeterQuantitySeriesWindows checks bucket boundaries for every interval: a bucket per
// step from the one holding the start, empty buckets at 0, an event exactly on a boundary in
// the later bucket, the end excluded, and a late-ingested event in the bucket of its own
// timestamp.
func TestMeterQuantitySeriesWindows(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	if _, err := db.ExecContext(ctx, `SELECT ensure_event_partitions('2026-01-01', 3)`); err != nil {
		t.Fatal(err)
	}
	org := newOrganization(t, db, "acme")
	cust := newMeterCustomer(t, db, org.ID, "ext")
	day := func(d, h int) time.Time { return time.Date(2026, 1, d, h, 0, 0, 0, time.UTC) }
	insertEvents(t, db, org.ID,
		usage{name: "api_call", customerID: &cust.ID, at: day(5, 0)},         // Monday 5 Jan, on every boundary but month
		usage{name: "api_call", customerID: &cust.ID, at: day(4, 23)},        // Sunday, the week before
		usage{name: "api_call", customerID: &cust.ID, at: day(5, 2)},         // two hours later
		usage{name: "api_call", customerID: &cust.ID, at: day(31, 23)},       // last hour of January
		usage{name: "api_call", customerID: &cust.ID, at: day(32, 0)},        // 1 February
		usage{name: "api_call", customerID: &cust.ID, at: day(60, 0)},        // 1 March: past the end
		usage{name: "api_call", externalID: cust.ExternalID, at: day(12, 0)}, // Monday 12 Jan
	)
	// An event of 6 January ingested a month later still belongs to 6 January.
	if _, err := db.ExecContext(ctx, `INSERT INTO events (organization_id, name, customer_id, "timestamp", created_at)
		VALUES ($1, 'api_call', $2, $3, $4)`, org.ID, cust.ID, day(6, 12), day(36, 0)); err != nil {
		t.Fatal(err)
	}
	m := newMeter(t, db, org.ID, apiCalls, `{"func": "count"}`)
	cases := []struct {
		interval string
		from, to time.Time
		want     map[time.Time]float64
		buckets  int
		total    float64
	}{
		{"hour", day(4, 23), day(5, 3), map[time.Time]float64{day(4, 23): 1, day(5, 0): 1, day(5, 2): 1}, 4, 3},
		{"day", day(4, 0), day(7, 0), map[time.Time]float64{day(4, 0): 1, day(5, 0): 2, day(6, 0): 1}, 3, 4},
		{"week", day(5, 0), day(19, 0), map[time.Time]float64{day(5, 0): 3, day(12, 0): 1}, 2, 4},
		{"week", day(7, 0), day(19, 0), map[time.Time]float64{day(5, 0): 0, day(12, 0): 1}, 2, 1},
		{"month", day(1, 0), day(60, 0), map[time.Time]float64{day(1, 0): 6, day(32, 0): 1}, 2, 7},
		{"month", day(1, 0), day(91, 0), map[time.Time]float64{day(1, 0): 6, day(32, 0): 1, day(60, 0): 1}, 3, 8},
	}
	for _, c := range cases {
		got, err := storage.MeterQuantitySeries(ctx, db, m, &cust, c.from, c.to, c.interval)
		if err != nil {
			t.Fatalf("%s: %v", c.interval, err)
		}
		if len(got.Quantities) != c.buckets || got.Total != c.total {
			t.Errorf("%s %s–%s: %d buckets, total %v; want %d, %v (%+v)", c.interval, c.from, c.to,
				len(got.Quantities), got.Total, c.buckets, c.total, got.Quantities)
		}
		for i, q := range got.Quantities {
			if i > 0 && !q.Timestamp.After(got.Quantities[i-1].Timestamp) {
				t.Errorf("%s: buckets out of order: %+v", c.interval, got.Quantities)
			}
			if q.Quantity != c.want[q.Timestamp] {
				t.Errorf("%s: bucket %s = %v, want %v", c.interval, q.Timestamp, q.Quantity, c.want[q.Timestamp])
			}
		}
	}
}

// TestMeterQuantitySeriesTotals checks that the window total aggregates the window, not the
// buckets: an average of all events and distinct values across buckets.
func TestMeterQuantitySeriesTotals(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	org := newOrganization(t, db, "acme")
	from := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	insertEvents(t, db, org.ID,
		usage{name: "api_call", at: from, metadata: `{"n": 1, "u": "a"}`},
		usage{name: "api_call", at: from.Add(time.Hour), metadata: `{"n": 2, "u": "b"}`},
		usage{name: "api_call", at: from.AddDate(0, 0, 1), metadata: `{"n": 6, "u": "a"}`},
	)
	cases := []struct {
		aggregation string
		buckets     []float64
		total       float64
	}{
		{`{"func": "avg", "property": "n"}`, []float64{1.5, 6, 0}, 3},
		{`{"func": "unique", "property": "u"}`, []float64{2, 1, 0}, 2},
		{`{"func": "max", "property": "n"}`, []float64{2, 6, 0}, 6},
		{`{"func": "sum", "property": "n"}`, []float64{3, 6, 0}, 9},
	}
	for _, c := range cases {
		m := newMeter(t, db, org.ID, apiCalls, c.aggregation)
		got, err := storage.MeterQuantitySeries(ctx, db, m, nil, from, from.AddDate(0, 0, 3), "day")
		if err != nil {
			t.Fatalf("%s: %v", c.aggregation, err)
		}
		if got.Total != c.total || len(got.Quantities) != len(c.buckets) {
			t.Fatalf("%s: total %v over %d buckets, want %v over %d", c.aggregation, got.Total, len(got.Quantities), c.total, len(c.buckets))
		}
		for i, q := range got.Quantities {
			if q.Quantity != c.buckets[i] {
				t.Errorf("%s: bucket %d = %v, want %v", c.aggregation, i, q.Quantity, c.buckets[i])
			}
		}
	}
}

// BenchmarkMeterQuantityMonth measures one customer's monthly quantity among ten million
// events of 10,000 customers over six months (half sent by customer id, half by external
// id), the customer itself holding 40,000 events in the month. Seeding takes minutes, which
// is why it is a benchmark: go test ./storage -run '^$' -bench MeterQuantityMonth -benchtime 50x.
// The first iteration's plan is logged (-v) to show both index branches at work.
func BenchmarkMeterQuantityMonth(b *testing.B) {
	db := storagetest.New(b)
	ctx := b.Context()
	org, err := storage.CreateOrganization(ctx, db, "Org bench", "bench")
	if err != nil {
		b.Fatal(err)
	}
	for _, stmt := range []string{
		`SELECT ensure_event_partitions('2026-01-01', 6)`,
		`INSERT INTO customers (organization_id, external_id, email)
			SELECT $1, 'ext-' || n, 'c' || n || '@example.com' FROM generate_series(0, 9999) n`,
		`INSERT INTO events (organization_id, name, customer_id, external_customer_id, "timestamp", metadata)
			SELECT $1, CASE WHEN i % 10 = 0 THEN 'upload' ELSE 'api_call' END,
				CASE WHEN i % 2 = 0 THEN c.ids[i % 10000 + 1] END,
				CASE WHEN i % 2 = 1 THEN 'ext-' || (i % 10000) END,
				'2026-01-01'::timestamptz + random() * interval '181 days', jsonb_build_object('tokens', i % 100)
			FROM generate_series(1, 10000000) i,
				(SELECT array_agg(id ORDER BY id) AS ids FROM customers WHERE organization_id = $1) c`,
		`ANALYZE events`,
	} {
		args := []any{org.ID}
		if stmt[:6] != "INSERT" {
			args = nil
		}
		if _, err := db.ExecContext(ctx, stmt, args...); err != nil {
			b.Fatal(err)
		}
	}
	cust := newMeterCustomer(b, db, org.ID, "heavy")
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 1, 0)
	if _, err := db.ExecContext(ctx, `INSERT INTO events (organization_id, name, customer_id, external_customer_id, "timestamp", metadata)
		SELECT $1, 'api_call', CASE WHEN i % 2 = 0 THEN $2::uuid END, CASE WHEN i % 2 = 1 THEN $3 END,
			$4::timestamptz + random() * interval '31 days', jsonb_build_object('tokens', i % 100)
		FROM generate_series(1, 40000) i`, org.ID, cust.ID, *cust.ExternalID, from); err != nil {
		b.Fatal(err)
	}
	m := newMeter(b, db, org.ID, apiCalls, `{"func": "sum", "property": "tokens"}`)
	plan, err := storage.ExplainMeterQuantity(ctx, db, m, cust, from, to)
	if err != nil {
		b.Fatal(err)
	}
	b.Log("\n" + plan)
	b.ResetTimer()
	for b.Loop() {
		if _, err := storage.MeterQuantity(ctx, db, m, cust, from, to); err != nil {
			b.Fatal(err)
		}
	}
}
