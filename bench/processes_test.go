package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"till/resolvers/resolverstest"

	"github.com/jmoiron/sqlx"
)

// processesClients is how many buyers drive the servers at once.
const processesClients = 16

// BenchmarkProcesses measures what more `till serve` processes on one database add: with 1,
// 2 and 3 servers (the first with the embedded cluster, the others on it through
// DATABASE_URL, all sharing its documents), 16 buyers spread over the servers each open a
// checkout and pay it, again and again, while every checkout's and order's events are
// delivered to a local webhook endpoint. It prints checkouts/s and deliveries/s with their
// ratio to one server, and the CPU of the servers and of PostgreSQL, which all of them share.
func BenchmarkProcesses(b *testing.B) {
	duration := benchDuration(b)
	hits := new(atomic.Int64)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		hits.Add(1)
	}))
	b.Cleanup(receiver.Close)

	primary := startTill(b, "TILL_GRAPHQL_COST_BUDGET=0", "TILL_WEBHOOK_ALLOW_PRIVATE=true")
	seed := primary.demo(b)
	dsn := primary.dsn(b)
	secret, err := os.ReadFile(filepath.Join(primary.dataDir, "secret"))
	if err != nil {
		b.Fatal(err)
	}
	servers := []*tillServer{primary}
	for range 2 {
		servers = append(servers, startTill(b, "TILL_GRAPHQL_COST_BUDGET=0", "TILL_WEBHOOK_ALLOW_PRIVATE=true",
			"DATABASE_URL="+dsn, "TILL_BLOB_DIR="+filepath.Join(primary.dataDir, "blobs"),
			"TILL_SECRET="+strings.TrimSpace(string(secret))))
	}
	var hook struct{ CreateWebhookEndpoint struct{ ID string } }
	primary.graphql(b, seed.OrganizationToken, fmt.Sprintf(`mutation { createWebhookEndpoint(input: {url: %q, format: raw,
		events: ["checkout.created", "checkout.updated", "order.created", "order.paid"]}) { id } }`, receiver.URL), &hook)
	var product struct{ CreateProduct struct{ ID string } }
	primary.graphql(b, seed.OrganizationToken, `mutation { createProduct(input: {name: "Bench ebook",
		prices: [{amountType: fixed, priceAmount: 900}]}) { id } }`, &product)
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })

	started := time.Now()
	b.ResetTimer()
	var rows []processesRow
	for n := 1; n <= len(servers); n++ {
		drainWebhooks(b, db, hook.CreateWebhookEndpoint.ID, started)
		row := processesRow{servers: n}
		before, hitsBefore := sampleAll(servers), hits.Load()
		row.checkouts = buyFor(b, servers[:n], seed.OrganizationToken, product.CreateProduct.ID, duration)
		row.deliveries = hits.Load() - hitsBefore
		row.cpu = before.since(sampleAll(servers))
		row.elapsed = duration
		rows = append(rows, row)
	}
	b.StopTimer()
	b.Log("\n" + processesTable(rows))
	for _, r := range rows {
		b.ReportMetric(float64(r.checkouts)/r.elapsed.Seconds(), fmt.Sprintf("checkouts/s-%d", r.servers))
		b.ReportMetric(float64(r.deliveries)/r.elapsed.Seconds(), fmt.Sprintf("deliveries/s-%d", r.servers))
	}
}

// processesRow is one round: how many servers, what they did and what it cost.
type processesRow struct {
	servers               int
	checkouts, deliveries int64
	elapsed               time.Duration
	cpu                   serversCPU
}

// buyFor runs the buyers against servers for d and counts the checkouts paid.
func buyFor(b *testing.B, servers []*tillServer, token, product string, d time.Duration) int64 {
	b.Helper()
	var paid, failed, buyer atomic.Int64
	var firstFail atomic.Value
	end := time.Now().Add(d)
	client := newClient(processesClients)
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	for i := range processesClients {
		wg.Go(func() {
			for j := i; time.Now().Before(end); j++ {
				s := servers[j%len(servers)]
				var c struct{ CreateCheckout struct{ ID string } }
				err := resolverstest.Call(context.Background(), client, s.baseURL+"/graphql", token, `mutation($p: UUID!) { createCheckout(input: {products: [$p]}) { id } }`,
					map[string]any{"p": product}, &c)
				if err == nil {
					err = resolverstest.Call(context.Background(), client, servers[(j+1)%len(servers)].baseURL+"/graphql", token,
						`mutation($id: UUID!, $email: String!) { confirmCheckout(input: {id: $id, paymentToken: "tok_visa",
							customerEmail: $email}) { status } }`, map[string]any{"id": c.CreateCheckout.ID,
							"email": fmt.Sprintf("buyer-%d@example.com", buyer.Add(1))}, nil)
				}
				if err != nil {
					failed.Add(1)
					firstFail.CompareAndSwap(nil, err.Error())
					continue
				}
				paid.Add(1)
			}
		})
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		b.Errorf("%d purchases failed; first: %v", n, firstFail.Load())
	}
	return paid.Load()
}

// drainWebhooks waits until the previous round's events are delivered to the endpoint, so
// each round counts its own (the demo's endpoints and events are not the benchmark's).
func drainWebhooks(b *testing.B, db *sqlx.DB, endpoint string, since time.Time) {
	b.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		var pending int
		if err := db.Get(&pending, `SELECT (SELECT count(*) FROM webhook_events WHERE webhook_endpoint_id = $1 AND succeeded IS NULL)
			+ (SELECT count(*) FROM domain_events WHERE payload IS NULL AND render_attempts < 5 AND created_at > $2)`,
			endpoint, since); err != nil {
			b.Fatal(err)
		}
		if pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d events still undelivered after 2 minutes", pending)
		}
	}
}

// serversSample is the CPU ticks of every server and of PostgreSQL (the first server's
// descendants) at one moment.
type serversSample struct {
	at      time.Time
	servers []float64
	pg      cpuSample
}

// serversCPU is the cores the servers and PostgreSQL used over a round, and how busy the
// machine was.
type serversCPU struct {
	servers, pg, busy float64
	ok                bool
}

func sampleAll(servers []*tillServer) serversSample {
	s := serversSample{at: time.Now(), pg: processes{till: servers[0].cmd.Process.Pid}.sample()}
	for _, srv := range servers {
		t, _, _ := readStat(fmt.Sprintf("/proc/%d/stat", srv.cmd.Process.Pid))
		s.servers = append(s.servers, t)
	}
	return s
}

func (s serversSample) since(later serversSample) serversCPU {
	wall := later.at.Sub(s.at).Seconds()
	use := s.pg.since(later.pg)
	if !use.ok || wall <= 0 {
		return serversCPU{}
	}
	var servers float64
	for i := range s.servers {
		servers += (later.servers[i] - s.servers[i]) / clockTicks / wall
	}
	return serversCPU{servers: servers, pg: use.pg, busy: use.busy, ok: true}
}

// processesTable is the round-by-round table, ratios against one server.
func processesTable(rows []processesRow) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d buyers, %s per round; ratios against one server\n", processesClients, rows[0].elapsed)
	sb.WriteString("| servers | checkouts/s | ratio | deliveries/s | ratio | CPU cores: servers + PostgreSQL | machine busy |\n")
	sb.WriteString("|---|---|---|---|---|---|---|\n")
	base := rows[0]
	for _, r := range rows {
		cps, dps := float64(r.checkouts)/r.elapsed.Seconds(), float64(r.deliveries)/r.elapsed.Seconds()
		cpu := "-"
		if r.cpu.ok {
			cpu = fmt.Sprintf("%.2f + %.2f", r.cpu.servers, r.cpu.pg)
		}
		fmt.Fprintf(&sb, "| %d | %.0f | %.2f | %.0f | %.2f | %s | %.0f%% |\n", r.servers, cps,
			cps/(float64(base.checkouts)/base.elapsed.Seconds()), dps,
			dps/max(float64(base.deliveries)/base.elapsed.Seconds(), 1e-9), cpu, 100*r.cpu.busy)
	}
	return sb.String()
}
