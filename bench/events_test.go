package bench

import (
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/lib/pq"
)

// Ingest load shape: batches of 1,000 events from 4 concurrent clients, a tenth of each
// batch repeating external ids already sent.
const (
	ingestClients   = 4
	ingestBatch     = 1000
	ingestDupShare  = 10 // percent
	defaultIngest   = 1_000_000
	defaultMeterSet = 10_000_000
)

// envInt reads a positive count from the environment, or def.
func envInt(b *testing.B, name string, def int) int {
	b.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		b.Fatalf("%s=%q: want a count", name, v)
	}
	return n
}

// benchEvent is one generated event: the same values go to the ingest endpoint as JSON and
// to the ceiling's COPY as columns.
type benchEvent struct {
	externalID string
	customerID string // "" when the event names an external customer
	externalC  string
	at         time.Time
	tokens     int
}

// ingestPlan is the generated batches: every batch holds 900 new external ids and 100 that
// an earlier batch of the same client already sent (so each duplicate is a duplicate
// whatever order the clients run in).
type ingestPlan struct {
	batches  [][]benchEvent
	distinct int
}

func newIngestPlan(total int, customers []string, from, to time.Time) ingestPlan {
	rng := rand.New(rand.NewPCG(1, 2))
	var p ingestPlan
	sent := make([][]string, ingestClients) // external ids per client, for repeats
	for n := 0; n < total; n += ingestBatch {
		client := len(p.batches) % ingestClients
		batch := make([]benchEvent, 0, ingestBatch)
		dups := 0
		if len(sent[client]) > 0 {
			dups = ingestBatch * ingestDupShare / 100
		}
		for i := range ingestBatch {
			e := benchEvent{at: from.Add(time.Duration(rng.Int64N(int64(to.Sub(from))))), tokens: rng.IntN(1000)}
			if i < dups {
				e.externalID = sent[client][rng.IntN(len(sent[client]))]
			} else {
				e.externalID = fmt.Sprintf("ev-%d", p.distinct)
				p.distinct++
				sent[client] = append(sent[client], e.externalID)
			}
			if i%2 == 0 {
				e.customerID = customers[rng.IntN(len(customers))]
			} else {
				e.externalC = fmt.Sprintf("ext-%d", rng.IntN(10_000))
			}
			batch = append(batch, e)
		}
		p.batches = append(p.batches, batch)
	}
	return p
}

// body renders a batch as the JSON the upstream SDKs send.
func (p ingestPlan) body(batch []benchEvent) []byte {
	var sb strings.Builder
	sb.WriteString(`{"events":[`)
	for i, e := range batch {
		if i > 0 {
			sb.WriteByte(',')
		}
		who := `"external_customer_id":"` + e.externalC + `"`
		if e.customerID != "" {
			who = `"customer_id":"` + e.customerID + `"`
		}
		fmt.Fprintf(&sb, `{"name":"api_call",%s,"external_id":%q,"timestamp":%q,"metadata":{"tokens":%d,"model":"small"}}`,
			who, e.externalID, e.at.Format(time.RFC3339Nano), e.tokens)
	}
	sb.WriteString(`]}`)
	return []byte(sb.String())
}

// phase is one measured pass over the plan.
type phase struct {
	name       string
	events     int // submitted
	inserted   int
	duplicates int
	elapsed    time.Duration
	cpu        cpuUse
}

func (p phase) rate() float64 { return float64(p.events) / p.elapsed.Seconds() }

// BenchmarkEventIngest posts the plan's batches to /v1/events/ingest from 4 clients, between
// two runs of the ceiling: the same rows sent with COPY straight into the events table by 4
// connections, 1,000 rows per COPY, no dedupe and no checks. It prints events/s and the
// ratio to the mean ceiling, checks that every distinct external id was stored exactly once,
// then grows the table to BENCH_METER_EVENTS events and times a month's meter quantity for
// one customer through GraphQL.
func BenchmarkEventIngest(b *testing.B) {
	total := envInt(b, "BENCH_EVENTS", defaultIngest)
	meterSet := envInt(b, "BENCH_METER_EVENTS", defaultMeterSet)
	srv := startTill(b)
	seed := srv.demo(b)
	db, err := sql.Open("postgres", srv.dsn(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(ingestClients + 2)
	org := uuid.MustParse(seed.Organization.ID)
	customers := orgCustomers(b, db, org)
	now := time.Now().UTC()
	monthStart := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	plan := newIngestPlan(total, customers, monthStart, now.Add(-time.Minute))
	bodies := make([][]byte, len(plan.batches))
	for i, batch := range plan.batches {
		bodies[i] = plan.body(batch)
	}
	ceilingOrg := newBareOrganization(b, db)
	procs := processes{till: srv.cmd.Process.Pid}

	b.ResetTimer()
	phases := []phase{
		copyCeiling(b, db, ceilingOrg, plan, procs, "ceiling"),
		postBatches(b, srv.baseURL+"/v1/events/ingest", seed.OrganizationToken, bodies, procs),
		copyCeiling(b, db, ceilingOrg, plan, procs, "ceiling-again"),
	}
	b.StopTimer()

	ingest := phases[1]
	var stored int
	if err := db.QueryRow(`SELECT count(*) FROM events WHERE organization_id = $1 AND name = 'api_call'`, org).Scan(&stored); err != nil {
		b.Fatal(err)
	}
	if ingest.inserted != plan.distinct || stored != plan.distinct || ingest.inserted+ingest.duplicates != ingest.events {
		b.Fatalf("exactly once broken: %d distinct ids sent, %d reported inserted (%d duplicates), %d stored",
			plan.distinct, ingest.inserted, ingest.duplicates, stored)
	}
	ceilingRate := (phases[0].rate() + phases[2].rate()) / 2
	report := ingestTable(phases, ceilingRate)
	b.ReportMetric(ceilingRate, "ceiling-events/s")
	b.ReportMetric(ingest.rate(), "ingest-events/s")
	b.ReportMetric(ingest.rate()/ceilingRate, "ingest-ratio")
	if meterSet > 0 {
		report += "\n" + meterLatency(b, srv, seed.OrganizationToken, db, org, customers[0], meterSet, monthStart, now)
	}
	b.Log("\n" + report)
	b.ReportMetric(0, "ns/op")
}

// orgCustomers lists the demo organization's customer ids.
func orgCustomers(b *testing.B, db *sql.DB, org uuid.UUID) []string {
	b.Helper()
	rows, err := db.Query(`SELECT id FROM customers WHERE organization_id = $1 AND deleted_at IS NULL ORDER BY created_at`, org)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		b.Fatal("the demo organization has no customers")
	}
	return ids
}

// newBareOrganization makes the organization the ceiling's rows go to, with the event type
// they point at, so the ceiling writes the same columns Till writes.
func newBareOrganization(b *testing.B, db *sql.DB) uuid.UUID {
	b.Helper()
	var id uuid.UUID
	if err := db.QueryRow(`INSERT INTO organizations (name, slug) VALUES ('Ceiling', 'ceiling-' || gen_random_uuid()) RETURNING id`).Scan(&id); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO event_types (organization_id, name, label) VALUES ($1, 'api_call', 'api_call')`, id); err != nil {
		b.Fatal(err)
	}
	return id
}

// postBatches sends the bodies from ingestClients clients, each taking the next batch.
func postBatches(b *testing.B, url, token string, bodies [][]byte, procs processes) phase {
	b.Helper()
	next := make(chan []byte, len(bodies))
	for _, body := range bodies {
		next <- body
	}
	close(next)
	var mu sync.Mutex
	ph := phase{name: "ingest"}
	var firstErr error
	before := procs.sample()
	start := time.Now()
	var wg sync.WaitGroup
	for range ingestClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := newClient(1)
			defer client.CloseIdleConnections()
			for body := range next {
				ins, dup, err := postBatch(client, url, token, body)
				mu.Lock()
				ph.events += ins + dup
				ph.inserted += ins
				ph.duplicates += dup
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	ph.elapsed = time.Since(start)
	ph.cpu = before.since(procs.sample())
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	return ph
}

func postBatch(client *http.Client, url, token string, body []byte) (inserted, duplicates int, err error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("ingest answered %d: %.300s", resp.StatusCode, raw)
	}
	if _, err := fmt.Sscanf(string(raw), `{"inserted":%d,"duplicates":%d}`, &inserted, &duplicates); err != nil {
		return 0, 0, fmt.Errorf("ingest answer %s: %w", raw, err)
	}
	return inserted, duplicates, nil
}

// copyCeiling sends every batch's rows with COPY straight into events, one transaction per
// batch, from ingestClients connections: the database's own bulk-load speed for these rows.
func copyCeiling(b *testing.B, db *sql.DB, org uuid.UUID, plan ingestPlan, procs processes, name string) phase {
	b.Helper()
	var typeID uuid.UUID
	if err := db.QueryRow(`SELECT id FROM event_types WHERE organization_id = $1`, org).Scan(&typeID); err != nil {
		b.Fatal(err)
	}
	next := make(chan []benchEvent, len(plan.batches))
	for _, batch := range plan.batches {
		next <- batch
	}
	close(next)
	errs := make(chan error, ingestClients)
	before := procs.sample()
	start := time.Now()
	var wg sync.WaitGroup
	for range ingestClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range next {
				if err := copyBatch(db, org, typeID, batch); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	ph := phase{name: name, events: len(plan.batches) * ingestBatch, elapsed: time.Since(start), cpu: before.since(procs.sample())}
	ph.inserted = ph.events
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	return ph
}

func copyBatch(db *sql.DB, org, typeID uuid.UUID, batch []benchEvent) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.Prepare(pq.CopyIn("events", "id", "organization_id", "timestamp", "name", "source",
		"customer_id", "external_customer_id", "external_id", "event_type_id", "metadata"))
	if err != nil {
		return err
	}
	orgText, typeText := org.String(), typeID.String()
	for _, e := range batch {
		var customer, external any
		if e.customerID != "" {
			customer = e.customerID
		} else {
			external = e.externalC
		}
		if _, err := stmt.Exec(uuid.NewString(), orgText, e.at, "api_call", "user", customer, external, e.externalID,
			typeText, `{"tokens":`+strconv.Itoa(e.tokens)+`,"model":"small"}`); err != nil {
			return err
		}
	}
	if _, err := stmt.Exec(); err != nil {
		return err
	}
	if err := stmt.Close(); err != nil {
		return err
	}
	return tx.Commit()
}

// ingestTable renders the phases for people.
func ingestTable(phases []phase, ceilingRate float64) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d clients, batches of %d events, %d%% of each batch repeating earlier external ids\n",
		ingestClients, ingestBatch, ingestDupShare)
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tevents\tinserted\tseconds\tevents/s\tratio\tcpu bench\tcpu till\tcpu pg\tmachine busy\t")
	for _, p := range phases {
		cpu := "-\t-\t-\t-\t"
		if p.cpu.ok {
			cpu = fmt.Sprintf("%.2f\t%.2f\t%.2f\t%.0f%%\t", p.cpu.bench, p.cpu.till, p.cpu.pg, 100*p.cpu.busy)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.0f\t%.2f\t%s\n", p.name, p.events, p.inserted, p.elapsed.Seconds(), p.rate(),
			ratio(p.rate(), ceilingRate), cpu)
	}
	_ = tw.Flush()
	sb.WriteString("events/s: events submitted (duplicates included) per second; ratio: over the mean of the two ceilings")
	return sb.String()
}
