package bench

import (
	"database/sql"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
)

// meterQueries is how many times the month's quantity is asked for.
const meterQueries = 30

// meterLatency grows the events table to total events, spread over the last six months and
// 10,000 external customers, creates a meter (sum of the tokens of api_call events), rolls
// it up as the server's minute task would (timing that backfill), and times a month's
// quantity, in daily buckets, through GraphQL (HTTP, GraphQL and the query, as a dashboard
// sees it) for two customers: a typical one of the 10,000, named by external id, and the
// heavy demo customer that received a large share of the ingested events. The heavy customer
// is timed again after a late event lands in a rolled-up day, which that day is then read
// from the events until the next refresh.
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
	backfill := rollUp(b, db, out.CreateMeter.ID)
	b.ReportMetric(backfill.Seconds(), "rollup-backfill-s")
	report := fmt.Sprintf("meter rollups built from %d events in %.1f s\n"+
		"meter quantity for one customer, this month in daily buckets, over %d events (%d seeded with SQL), %d queries each:",
		total, backfill.Seconds(), total, seeded, meterQueries)
	lateAt := now.AddDate(0, 0, -3)
	if lateAt.Before(monthStart) {
		lateAt = monthStart
	}
	late := fmt.Sprintf(`{"events":[{"name":"api_call","customer_id":%q,"timestamp":%q,"metadata":{"tokens":5}}]}`,
		heavy, lateAt.Format(time.RFC3339))
	for _, c := range []struct{ name, arg, where, before string }{
		{"typical", `externalCustomerId: "seed-42"`, `external_customer_id = 'seed-42'`, ""},
		{"heavy", fmt.Sprintf(`customerId: %q`, heavy), fmt.Sprintf(`customer_id = '%s'`, heavy), ""},
		{"heavy, a day changed", fmt.Sprintf(`customerId: %q`, heavy), fmt.Sprintf(`customer_id = '%s'`, heavy), late},
	} {
		if c.before != "" {
			if _, _, err := postBatch(http.DefaultClient, srv.baseURL+"/v1/events/ingest", token, []byte(c.before)); err != nil {
				b.Fatal(err)
			}
		}
		query := fmt.Sprintf(`{ meterQuantities(id: %q, startTimestamp: %q, endTimestamp: %q, interval: day, %s)
			{ total quantities { timestamp quantity } } }`, out.CreateMeter.ID, monthStart.Format(time.RFC3339),
			now.Format(time.RFC3339), c.arg)
		var events int
		if err := db.QueryRow(`SELECT count(*) FROM events WHERE `+c.where+` AND "timestamp" >= $1`, monthStart).Scan(&events); err != nil {
			b.Fatal(err)
		}
		latencies := timeQuery(b, srv, token, query)
		b.ReportMetric(ms(percentile(latencies, 0.50)), "meter-"+strings.ReplaceAll(strings.ReplaceAll(c.name, ",", ""), " ", "-")+"-p50-ms")
		report += fmt.Sprintf("\n  %-21s customer, %7d events this month: p50 %6.1f ms, slowest %6.1f ms, fastest %6.1f ms",
			c.name, events, ms(percentile(latencies, 0.50)), ms(latencies[len(latencies)-1]), ms(latencies[0]))
	}
	return report
}

// rollUp refreshes the meter rollups until the meter's are built (the server's own minute
// task may hold the organization's refresh for a while) and returns how long that took.
func rollUp(b *testing.B, db *sql.DB, meterID string) time.Duration {
	b.Helper()
	x := sqlx.NewDb(db, "postgres")
	start := time.Now()
	for {
		if _, err := storage.RefreshMeterRollups(b.Context(), x, time.Now()); err != nil {
			b.Fatal(err)
		}
		var built bool
		if err := db.QueryRow(`SELECT EXISTS (SELECT 1 FROM meter_rollup_states WHERE meter_id = $1)`, meterID).Scan(&built); err != nil {
			b.Fatal(err)
		}
		if built {
			return time.Since(start)
		}
		time.Sleep(100 * time.Millisecond)
	}
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
