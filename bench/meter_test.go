package bench

import (
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
)

// meterQueries is how many times the month's quantity is asked for.
const meterQueries = 30

// meterLatency grows the events table to total events, spread over the last six months and
// 10,000 external customers, creates a meter (sum of the tokens of api_call events) and
// times a month's quantity, in daily buckets, through GraphQL (HTTP, GraphQL and the query,
// as a dashboard sees it) for two customers: a typical one of the 10,000, named by external
// id, and the heavy demo customer that received a large share of the ingested events.
func meterLatency(b *testing.B, srv *tillServer, token string, db *sql.DB, org uuid.UUID, heavy string, total int,
	monthStart, now time.Time) string {
	b.Helper()
	seeded := seedEvents(b, db, org, total, now)
	var out struct {
		CreateMeter struct{ ID string }
	}
	srv.graphql(b, token, `mutation { createMeter(input: {name: "API tokens",
		filter: {conjunction: and, clauses: [{property: "name", operator: eq, value: "api_call"}]},
		aggregation: {func: sum, property: "tokens"}}) { id } }`, &out)
	report := fmt.Sprintf("meter quantity for one customer, this month in daily buckets, over %d events (%d seeded with SQL), %d queries each:",
		total, seeded, meterQueries)
	for _, c := range []struct{ name, arg, where string }{
		{"typical", `externalCustomerId: "seed-42"`, `external_customer_id = 'seed-42'`},
		{"heavy", fmt.Sprintf(`customerId: %q`, heavy), fmt.Sprintf(`customer_id = '%s'`, heavy)},
	} {
		query := fmt.Sprintf(`{ meterQuantities(id: %q, startTimestamp: %q, endTimestamp: %q, interval: day, %s)
			{ total quantities { timestamp quantity } } }`, out.CreateMeter.ID, monthStart.Format(time.RFC3339),
			now.Format(time.RFC3339), c.arg)
		var events int
		if err := db.QueryRow(`SELECT count(*) FROM events WHERE `+c.where+` AND "timestamp" >= $1`, monthStart).Scan(&events); err != nil {
			b.Fatal(err)
		}
		latencies := timeQuery(b, srv, token, query)
		b.ReportMetric(ms(percentile(latencies, 0.50)), "meter-"+c.name+"-p50-ms")
		report += fmt.Sprintf("\n  %-7s customer, %7d events this month: p50 %6.1f ms, slowest %6.1f ms, fastest %6.1f ms",
			c.name, events, ms(percentile(latencies, 0.50)), ms(latencies[len(latencies)-1]), ms(latencies[0]))
	}
	return report
}

// timeQuery runs a GraphQL query meterQueries times after three warm-up calls and returns
// the sorted latencies.
func timeQuery(b *testing.B, srv *tillServer, token, query string) []time.Duration {
	b.Helper()
	latencies := make([]time.Duration, 0, meterQueries+3)
	for range meterQueries + 3 {
		var res struct {
			MeterQuantities struct{ Total float64 }
		}
		start := time.Now()
		srv.graphql(b, token, query, &res)
		latencies = append(latencies, time.Since(start))
	}
	latencies = latencies[3:]
	slices.Sort(latencies)
	return latencies
}

// seedEvents adds rows with SQL until the events table holds total, returning how many it
// added: events of the organization's api_call type over the last six months, for external
// customers, in statements of half a million rows.
func seedEvents(b *testing.B, db *sql.DB, org uuid.UUID, total int, now time.Time) int {
	b.Helper()
	if _, err := db.Exec(`SELECT ensure_event_partitions($1::timestamptz - interval '6 months', 7)`, now); err != nil {
		b.Fatal(err)
	}
	var have int
	if err := db.QueryRow(`SELECT count(*) FROM events`).Scan(&have); err != nil {
		b.Fatal(err)
	}
	var typeID uuid.UUID
	if err := db.QueryRow(`SELECT id FROM event_types WHERE organization_id = $1 AND name = 'api_call'`, org).Scan(&typeID); err != nil {
		b.Fatal(err)
	}
	added := 0
	for have+added < total {
		n := min(500_000, total-have-added)
		if _, err := db.Exec(`INSERT INTO events (organization_id, "timestamp", name, source, external_customer_id,
				event_type_id, metadata)
			SELECT $1, $2::timestamptz - random() * interval '180 days', 'api_call', 'user', 'seed-' || (g % 10000),
				$3, jsonb_build_object('tokens', g % 1000, 'model', 'small')
			FROM generate_series(1, $4::int) g`, org, now, typeID, n); err != nil {
			b.Fatal(err)
		}
		added += n
	}
	if _, err := db.Exec(`ANALYZE events`); err != nil {
		b.Fatal(err)
	}
	return added
}
