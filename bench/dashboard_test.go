package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/resolvers/resolverstest"
	"till/storage"
)

// The dashboard's load shape: one connection for latency, 64 for throughput, short windows
// so that the sixteen of them fit in about two minutes.
const (
	dashboardConns           = 64
	dashboardWarmup          = time.Second
	dashboardDefaultDuration = 4 * time.Second
)

// dashboardCase is one page under load: Till's ways of serving it and the ceiling's, with
// the same rows behind both.
type dashboardCase struct {
	name    string
	ceiling target
	tills   []target
	// info marks a ceiling measured for comparison only, with no Till target beside it.
	info bool
}

// BenchmarkDashboard measures the pages a dashboard and a customer portal load, served by a
// running `till serve`, against a hand-written ceiling on the same database (one prepared
// statement per page, JSON built by PostgreSQL; see dashboardCeiling):
//
//   - an order by id, through GET /v1/orders/{id} and through GraphQL;
//   - a customers page of 50 with each customer's relations (tillCustomerRelations);
//   - a portal home as a customer session (me: customer, orders, subscriptions, license keys).
//
// Each runs at concurrency 1 (p50, p99) and 64 (req/s), ceiling first. The targets, read by
// eye: p50 at concurrency 1 within 2x of the ceiling, and req/s at 64 at least half of it.
// Before the load, each Till answer and its ceiling's must name the same rows (the same ids),
// and every request must answer 200.
func BenchmarkDashboard(b *testing.B) {
	duration := dashboardDuration(b)
	began := time.Now()
	env := []string{"TILL_GRAPHQL_COST_BUDGET=0"}
	if addr := os.Getenv("BENCH_METRICS_ADDR"); addr != "" {
		// The operator's listener, where /debug/pprof/ profiles the server under this load.
		env = append(env, "TILL_METRICS_ADDR="+addr)
	}
	srv := startTill(b, env...)
	seed := srv.demo(b)
	db, err := sqlx.Open("postgres", storage.WithBinaryParameters(srv.dsn(b)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(serverPoolSize)
	db.SetMaxIdleConns(serverPoolSize)

	customers := seedDashboard(b, db, catalogOf(b, db, seed))
	ceil := startDashboardCeiling(b, db)
	cases := dashboardCases(b, srv, db, seed, ceil, customers)
	ctx := context.Background()
	for _, c := range cases {
		preflightDashboard(b, ctx, c)
	}

	b.Logf("set-up (build, start, demo, seed, sessions, checks): %s", time.Since(began).Round(time.Second))
	procs := processes{till: srv.cmd.Process.Pid}
	b.ResetTimer()
	var rows []dashboardRow
	for _, c := range cases {
		row := dashboardRow{dashboardCase: c}
		for _, conns := range []int{1, dashboardConns} {
			plan := loadPlan{conns: conns, warmup: dashboardWarmup, duration: duration}
			for _, t := range append([]target{c.ceiling}, c.tills...) {
				row.results = append(row.results, runLoad(ctx, t, plan, procs))
			}
		}
		rows = append(rows, row)
	}
	b.StopTimer()

	b.Log("\n" + dashboardTable(rows, duration) + peakRSSLine(procs.till))
	reportDashboard(b, rows)
	for _, row := range rows {
		for _, r := range row.results {
			if r.failed > 0 {
				b.Errorf("%s: %d requests did not answer 200; first: %s", r.target, r.failed, r.firstFail)
			}
		}
	}
}

// dashboardDuration is the measured window per target: BENCH_DURATION, or 4s.
func dashboardDuration(b *testing.B) time.Duration {
	b.Helper()
	if os.Getenv("BENCH_DURATION") == "" {
		return dashboardDefaultDuration
	}
	return benchDuration(b)
}

// dashboardCases builds the requests of every case. Connection i asks for its own order,
// its own customers page (of six) and its own customer's portal, so the load is not one
// hot row; the ceiling gets the same request with the token's stored hash.
func dashboardCases(b *testing.B, srv *tillServer, db *sqlx.DB, seed demoSeed, ceil *dashboardCeiling, customers []uuid.UUID) []dashboardCase {
	b.Helper()
	orgHash := storedOrgTokenHash(b, db, seed.Organization.ID)
	orgHeader := http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + seed.OrganizationToken}}
	hashHeader := func(h string) http.Header { return http.Header{"Authorization": {"Bearer " + h}} }
	gql := func(query string, vars map[string]any) []byte {
		body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		return body
	}
	var orders []uuid.UUID
	if err := db.Select(&orders, `SELECT id FROM orders WHERE organization_id = $1 AND discount_id IS NOT NULL
		AND subscription_id IS NOT NULL ORDER BY created_at DESC, id LIMIT $2`, seed.Organization.ID, dashboardConns); err != nil || len(orders) < dashboardConns {
		b.Fatalf("want %d orders with a discount and a subscription, found %d: %v", dashboardConns, len(orders), err)
	}

	order := dashboardCase{name: "order by id",
		ceiling: target{name: "order: ceiling", header: hashHeader(orgHash)},
		tills:   []target{{name: "order: /v1", header: orgHeader}, {name: "order: GraphQL", header: orgHeader}}}
	page := dashboardCase{name: "customers page",
		ceiling: target{name: "customers: ceiling", header: hashHeader(orgHash)},
		tills:   []target{{name: "customers: GraphQL", header: orgHeader}}}
	all := dashboardCase{name: "customers page, all four relations", info: true,
		ceiling: target{name: "customers, all four: ceiling", header: hashHeader(orgHash)}}
	portal := dashboardCase{name: "portal me", ceiling: target{name: "portal: ceiling"},
		tills: []target{{name: "portal: GraphQL"}}}
	pageQuery := customersPageQuery(relationsNamed(tillCustomerRelations))
	for i := range dashboardConns {
		id := orders[i].String()
		order.ceiling.requests = append(order.ceiling.requests, request{method: http.MethodGet, url: ceil.url + "/order?id=" + id})
		order.tills[0].requests = append(order.tills[0].requests, request{method: http.MethodGet, url: srv.baseURL + "/v1/orders/" + id})
		order.tills[1].requests = append(order.tills[1].requests, request{url: srv.baseURL + "/graphql",
			body: gql(resolverstest.OrderPage, map[string]any{"id": id})})

		n := i%(dashboardCustomers/50) + 1
		page.ceiling.requests = append(page.ceiling.requests, request{method: http.MethodGet, url: fmt.Sprintf("%s/customers?page=%d", ceil.url, n)})
		all.ceiling.requests = append(all.ceiling.requests, request{method: http.MethodGet, url: fmt.Sprintf("%s/customers-all?page=%d", ceil.url, n)})
		page.tills[0].requests = append(page.tills[0].requests, request{url: srv.baseURL + "/graphql",
			body: gql(pageQuery, map[string]any{"page": n})})

		token, hash := customerSession(b, srv, db, seed.OrganizationToken, customers[i])
		portal.ceiling.requests = append(portal.ceiling.requests, request{method: http.MethodGet, url: ceil.url + "/me", header: hashHeader(hash)})
		portal.tills[0].requests = append(portal.tills[0].requests, request{url: srv.baseURL + "/graphql", body: gql(portalQuery, nil),
			header: http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + token}}})
	}
	return []dashboardCase{order, page, all, portal}
}

// storedOrgTokenHash is what Till stores for the demo organization's token: the ceiling
// authenticates with it, having no server secret to hash a token with.
func storedOrgTokenHash(b *testing.B, db *sqlx.DB, orgID string) string {
	b.Helper()
	var hashes []string
	if err := db.Select(&hashes, `SELECT token FROM organization_access_tokens WHERE organization_id = $1 AND deleted_at IS NULL`, orgID); err != nil || len(hashes) != 1 {
		b.Fatalf("want the demo organization's one token, found %d: %v", len(hashes), err)
	}
	return hashes[0]
}

// customerSession opens a portal session for the customer through GraphQL and returns its
// token and the hash Till stored for it.
func customerSession(b *testing.B, srv *tillServer, db *sqlx.DB, orgToken string, customer uuid.UUID) (string, string) {
	b.Helper()
	var out struct {
		CreateCustomerSession struct {
			ID    uuid.UUID
			Token string
		}
	}
	srv.graphql(b, orgToken, fmt.Sprintf(`mutation { createCustomerSession(input: {customerId: %q}) { id token } }`, customer), &out)
	var hash string
	if err := db.Get(&hash, `SELECT token FROM customer_sessions WHERE id = $1`, out.CreateCustomerSession.ID); err != nil {
		b.Fatal(err)
	}
	return out.CreateCustomerSession.Token, hash
}

// preflightDashboard sends connection 0's request to the ceiling and to each Till target
// of c, and checks that each answered 200 without GraphQL errors and that Till's answer names
// exactly the rows (ids) the ceiling's does.
func preflightDashboard(b *testing.B, ctx context.Context, c dashboardCase) {
	b.Helper()
	want := fetchIDs(b, ctx, c.ceiling)
	for _, t := range c.tills {
		if got := fetchIDs(b, ctx, t); !equalCounts(got, want) {
			b.Fatalf("%s and %s read different rows:\n till    %v\n ceiling %v", t.name, c.ceiling.name, got, want)
		}
	}
}

// fetchIDs sends t's first request and counts every "id" in its JSON answer.
func fetchIDs(b *testing.B, ctx context.Context, t target) map[string]int {
	b.Helper()
	client := newClient(1)
	defer client.CloseIdleConnections()
	r := t.requests[0]
	body, status, err := t.fetch(ctx, client, r)
	if err != nil || status != http.StatusOK {
		b.Fatalf("%s: %s %s answered %d (%v): %s", t.name, r.method, r.url, status, err, body)
	}
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		b.Fatalf("%s: %v: %s", t.name, err, body)
	}
	if m, ok := doc.(map[string]any); ok && m["errors"] != nil {
		b.Fatalf("%s: %s", t.name, body)
	}
	ids := map[string]int{}
	collectIDs(doc, ids)
	if len(ids) == 0 {
		b.Fatalf("%s: no ids in %s", t.name, body)
	}
	return ids
}

// collectIDs counts the string values of every "id" key in a decoded JSON document.
func collectIDs(v any, into map[string]int) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "id" {
				into[s]++
			}
			collectIDs(e, into)
		}
	case []any:
		for _, e := range v {
			collectIDs(e, into)
		}
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, n := range a {
		if b[k] != n {
			return false
		}
	}
	return true
}

// dashboardRow is one case's results: the ceiling and each Till target at concurrency 1,
// then the same at 64.
type dashboardRow struct {
	dashboardCase
	results []result
}

// at returns target i's result (0 the ceiling) at concurrency 1 (high false) or 64.
func (r dashboardRow) at(i int, high bool) result {
	if high {
		return r.results[len(r.results)/2+i]
	}
	return r.results[i]
}

// dashboardTable renders one line per Till target, with its ceiling's figures in brackets.
func dashboardTable(rows []dashboardRow, duration time.Duration) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s warm-up and %s measured per target; concurrency 1, then %d connections; (ceiling) in brackets\n",
		dashboardWarmup, duration, dashboardConns)
	fmt.Fprintln(&sb, "| target | c=1 p50 ms | p50 × | c=1 p99 ms | c=64 req/s | req/s ratio | CPU ms per request at c=64: till + pg (ceiling: pg) | targets met |")
	fmt.Fprintln(&sb, "|---|---|---|---|---|---|---|---|")
	for _, row := range rows {
		c1, c64 := row.at(0, false), row.at(0, true)
		if row.info {
			fmt.Fprintf(&sb, "| %s | (%.2f) | - | (%.2f) | (%.0f) | - | (%s) | - |\n",
				row.ceiling.name, ms(c1.p50), ms(c1.p99), c64.rate(), cpuPerRequest(c64.cpu.pg, c64))
			continue
		}
		for i, t := range row.tills {
			t1, t64 := row.at(i+1, false), row.at(i+1, true)
			p50x, rps := ratio(ms(t1.p50), ms(c1.p50)), ratio(t64.rate(), c64.rate())
			met := "yes"
			if p50x > 2 || rps < 0.5 {
				met = "no"
			}
			fmt.Fprintf(&sb, "| %s | %.2f (%.2f) | %.2f | %.2f (%.2f) | %.0f (%.0f) | %.2f | %s + %s (%s) | %s |\n",
				t.name, ms(t1.p50), ms(c1.p50), p50x, ms(t1.p99), ms(c1.p99), t64.rate(), c64.rate(), rps,
				cpuPerRequest(t64.cpu.till, t64), cpuPerRequest(t64.cpu.pg, t64), cpuPerRequest(c64.cpu.pg, c64), met)
		}
	}
	sb.WriteString("targets: p50 at c=1 within 2x of the ceiling, req/s at c=64 at least half of it; CPU per request\n" +
		"is the cores a process used over the window divided by the requests per second")
	return sb.String()
}

// cpuPerRequest is the CPU milliseconds one request cost a process, from the cores it used
// during r's window; "-" where /proc was not readable.
func cpuPerRequest(cores float64, r result) string {
	if !r.cpu.ok || r.rate() == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", cores*1000/r.rate())
}

// reportDashboard publishes each Till target's figures as benchmark metrics for benchstat.
func reportDashboard(b *testing.B, rows []dashboardRow) {
	b.ReportMetric(0, "ns/op")
	for _, row := range rows {
		for i, t := range row.tills {
			name := strings.NewReplacer(": ", "-", " ", "-", "/", "").Replace(t.name)
			t1, t64 := row.at(i+1, false), row.at(i+1, true)
			b.ReportMetric(ms(t1.p50), name+"-p50-ms")
			b.ReportMetric(ratio(ms(t1.p50), ms(row.at(0, false).p50)), name+"-p50-x")
			b.ReportMetric(t64.rate(), name+"-req/s")
			b.ReportMetric(ratio(t64.rate(), row.at(0, true).rate()), name+"-ratio")
		}
	}
}
