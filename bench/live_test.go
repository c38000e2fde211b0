package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/resolvers/resolverstest"
	"till/storage"
)

// The live benchmark's load, each tunable: BENCH_LIVE_SUBSCRIBERS, BENCH_LIVE_RATE (orders
// per second) and BENCH_DURATION (how long orders are made per target).
const (
	liveDefaultSubscribers = 1000
	liveDefaultRate        = 10
	liveDefaultDuration    = 20 * time.Second
	// liveStall is how long the subscribers may go without receiving anything while they
	// still miss events.
	liveStall = 30 * time.Second
)

// liveTarget is one subscription document every subscriber runs.
type liveTarget struct {
	name      string
	key       string // the metrics' prefix
	doc       string
	withOrder bool
}

var liveTargets = []liveTarget{
	{"orderEvents { cursor type objectId }", "cheap",
		`subscription($after: String) { orderEvents(after: $after) { cursor type objectId } }`, false},
	{"… + order { id status totalAmount }", "order",
		`subscription($after: String) { orderEvents(after: $after) { cursor type objectId order { id status totalAmount } } }`, true},
}

// BenchmarkLive measures GraphQL subscriptions (graphql-transport-ws on /graphql) of a
// running `till serve`: BENCH_LIVE_SUBSCRIBERS (default 1,000) subscribers of one
// organization's orderEvents while orders are made at BENCH_LIVE_RATE per second (default
// 10) for BENCH_DURATION (default 20s), each order emitting order.created and order.paid.
//
// Subscribers stay inside the server's caps (25 subscriptions per connection, 100 per
// credential and process): 20 per connection and 4 connections per organization token, so
// 1,000 subscribers are 50 connections over 13 tokens made with `till token create`.
//
// Orders are written by the benchmark over SQL, one transaction per order with the
// statements Till's createOrder runs (the order, its item, order.created, order.paid): a
// purchase through the API costs tens of milliseconds of CPU on this machine and would make
// the pace unsteady, while a commit's return can be timed to the microsecond only by the
// process that commits. Latency is from the moment the benchmark sent COMMIT to the moment a
// subscriber's frame came off its socket, both read from this process's monotonic clock, so
// it includes the commit itself (its WAL flush; the table shows the COMMIT's own time). The
// moment COMMIT returned would not do on a busy machine: the committing goroutine may run
// only after the subscribers have read the event, which made a tenth of the latencies
// negative in trials. Events' created_at would not do either: it is taken when the row is
// written, before the commit, and on the server's clock.
//
// The ceiling is what the machine can do for a commit that notifies: a transaction of one
// pg_notify on the same PostgreSQL, at the same pace, received by a lib/pq listener in this
// process, timed the same way. It runs before and after the targets.
//
// Every subscription starts after the same cursor (taken before dialing), so each must
// receive every order event committed after it exactly once, in commit order: the benchmark
// compares each subscription's events with the database's and fails on any loss, repeat,
// reordering or stranger. One warm-up order, received by every subscriber before the clock
// starts, shows that all of them are following the feed.
//
// Memory per subscriber is the growth of the server's resident set (VmRSS) and of its Go
// heap and goroutines from before dialing to after the warm-up, over the subscribers. The
// heap is read from /metrics on the operator listener (TILL_METRICS_ADDR) right after its
// /debug/pprof/heap?gc=1 has collected garbage, so it is the live heap, not GOGC's slack.
// With BENCH_LIVE_PROFILE set to a directory, the server's CPU profile over each target's
// orders is saved there as <target>.pprof (cheap.pprof, order.pprof).
func BenchmarkLive(b *testing.B) {
	n := envInt(b, "BENCH_LIVE_SUBSCRIBERS", liveDefaultSubscribers)
	rate := envInt(b, "BENCH_LIVE_RATE", liveDefaultRate)
	duration := liveDefaultDuration
	if os.Getenv("BENCH_DURATION") != "" {
		duration = benchDuration(b)
	}
	if n < 1 || rate < 1 {
		b.Fatal("BENCH_LIVE_SUBSCRIBERS and BENCH_LIVE_RATE must be positive")
	}
	metricsAddr := freeAddr(b)
	// The benchmark measures fan-out, so the per-credential event budget is off unless
	// BENCH_LIVE_EVENT_BUDGET sets it: 77 subscriptions a token at 10 orders a second spend
	// about what the default budget allows.
	budget := cmp.Or(os.Getenv("BENCH_LIVE_EVENT_BUDGET"), "0")
	srv := startTill(b, "TILL_GRAPHQL_COST_BUDGET=0", "TILL_LIVE_EVENT_BUDGET="+budget, "TILL_METRICS_ADDR="+metricsAddr)
	seed := srv.demo(b)
	lb := &liveBench{srv: srv, dsn: srv.dsn(b), metrics: "http://" + metricsAddr,
		procs: processes{till: srv.cmd.Process.Pid}, rate: rate, duration: duration}
	db, err := sqlx.Open("postgres", lb.dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	lb.db, lb.catalog = db, catalogOf(b, db, seed)
	if err := db.Get(&lb.customer, `SELECT id FROM customers WHERE organization_id = $1 ORDER BY created_at, id LIMIT 1`, lb.catalog.org); err != nil {
		b.Fatalf("a demo customer: %v", err)
	}
	conns := (n + liveSubsPerConn - 1) / liveSubsPerConn
	tokens := srv.orgTokens(b, seed.Organization.ID, (conns+liveConnsPerToken-1)/liveConnsPerToken)

	run := liveRun(b)
	b.ResetTimer()
	var rows []liveRow
	if run["ceiling"] {
		rows = append(rows, lb.ceiling(b, "ceiling: commit → LISTEN", "ceiling"))
	}
	for _, t := range liveTargets {
		if run[t.key] {
			rows = append(rows, lb.target(b, t, tokens, n))
		}
	}
	if run["ceiling"] {
		rows = append(rows, lb.ceiling(b, "ceiling again", "ceiling-again"))
	}
	b.StopTimer()

	// The table goes to standard output: the testing package cuts a benchmark's log at ten
	// lines.
	fmt.Printf("\nBenchmarkLive: %d subscribers on %d connections over %d tokens; %d orders/s for %s per target\n%s\n",
		n, conns, len(tokens), rate, duration, liveTable(rows))
	b.ReportMetric(0, "ns/op")
	for _, r := range rows {
		b.ReportMetric(ms(percentile(r.lat, 0.50)), r.key+"-p50-ms")
		b.ReportMetric(ms(percentile(r.lat, 0.99)), r.key+"-p99-ms")
		if r.mem != nil {
			b.ReportMetric(r.mem.perSub().rss/1024, r.key+"-rss-KiB/sub")
			b.ReportMetric(r.mem.perSub().heap/1024, r.key+"-heap-KiB/sub")
		}
	}
	for _, r := range rows {
		for _, p := range r.problems {
			b.Errorf("%s: %s", r.name, p)
		}
	}
	if tail := srv.logTail(); strings.Contains(tail, `"level":"ERROR"`) {
		b.Errorf("till serve logged errors:\n%s", tail)
	}
}

// liveRun is the set of targets to run, by key, from BENCH_LIVE_TARGETS (default
// "ceiling,cheap,order"): comparing two builds on one target takes a third of the time.
func liveRun(b *testing.B) map[string]bool {
	b.Helper()
	run := map[string]bool{}
	for _, key := range positionsList(b, "BENCH_LIVE_TARGETS", "ceiling,cheap,order") {
		known := key == "ceiling"
		for _, t := range liveTargets {
			known = known || key == t.key
		}
		if !known {
			b.Fatalf("BENCH_LIVE_TARGETS: %q is none of ceiling, cheap, order", key)
		}
		run[key] = true
	}
	return run
}

// liveBench is what every target of the benchmark shares.
type liveBench struct {
	srv      *tillServer
	db       *sqlx.DB
	dsn      string
	metrics  string // the operator listener's base URL
	procs    processes
	catalog  dashboardCatalog
	customer uuid.UUID
	rate     int
	duration time.Duration
}

// liveRow is one target's outcome.
type liveRow struct {
	name     string
	key      string
	subs     int
	orders   int
	lat      []time.Duration // sorted
	commit   []time.Duration // sorted: how long each COMMIT took to return
	check    liveCheck
	problems []string
	mem      *liveMemoryGrowth
	cpu      cpuUse
}

// target opens n subscribers of t, makes orders at the benchmark's pace, waits until every
// subscriber has every event, and checks and times what they received.
func (lb *liveBench) target(b *testing.B, t liveTarget, tokens []string, n int) liveRow {
	b.Helper()
	ctx := context.Background()
	lb.settle(b)
	start, err := storage.LivePosition(ctx, lb.db, lb.catalog.org)
	if err != nil {
		b.Fatal(err)
	}
	before := lb.memory(b)
	fleet := openFleet(b, resolverstest.WebsocketURL(lb.srv.baseURL+"/graphql"), tokens, n, t.doc, strconv.FormatInt(start, 10), t.withOrder)
	if _, _, err := lb.order(ctx); err != nil { // warm-up
		b.Fatal(err)
	}
	fleet.waitFor(b, int64(len(lb.orderEventsAfter(b, start))), liveStall)
	mem := &liveMemoryGrowth{before: before, after: lb.memory(b), subs: n}

	profiled := lb.profile(b, t.key)
	began := lb.procs.sample()
	commits := map[uuid.UUID]time.Time{}
	var commit []time.Duration
	lb.paced(b, func() {
		id, c, err := lb.order(ctx)
		if err != nil {
			b.Fatal(err)
		}
		commits[id] = c.sent
		commit = append(commit, c.took())
	})
	<-profiled
	want := lb.orderEventsAfter(b, start)
	fleet.waitFor(b, int64(len(want)), liveStall)
	cpu := began.since(lb.procs.sample())
	fleet.close()
	row := liveRow{name: t.name, key: t.key, subs: n, orders: len(commits), mem: mem, cpu: cpu}
	row.check, row.problems = fleet.check(want)
	row.lat, row.commit = fleet.latencies(commits), commit
	slices.Sort(row.lat)
	slices.Sort(row.commit)
	return row
}

// orderEventsAfter is the organization's committed order events after position start, in
// commit order: what every subscriber must receive.
func (lb *liveBench) orderEventsAfter(b *testing.B, start int64) []liveWant {
	b.Helper()
	var want []liveWant
	if err := lb.db.Select(&want, `SELECT position, object_id, type FROM domain_events
		WHERE organization_id = $1 AND position > $2 AND split_part(type, '.', 1) = 'order' ORDER BY position`,
		lb.catalog.org, start); err != nil {
		b.Fatal(err)
	}
	return want
}

// ceiling times commits of a bare pg_notify to a listener in this process, at the
// benchmark's pace and for its duration.
func (lb *liveBench) ceiling(b *testing.B, name, key string) liveRow {
	b.Helper()
	l := listenCeiling(b, lb.dsn)
	defer l.close()
	began := lb.procs.sample()
	commits := map[string]time.Time{}
	var commit []time.Duration
	lb.paced(b, func() {
		id, c, err := l.notify(lb.db)
		if err != nil {
			b.Fatal(err)
		}
		commits[id] = c.sent
		commit = append(commit, c.took())
	})
	receipts, repeats := l.wait(b, len(commits), liveStall)
	row := liveRow{name: name, key: key, subs: 1, orders: len(commits), cpu: began.since(lb.procs.sample())}
	row.check.expected = len(commits)
	for id, at := range commits {
		got, ok := receipts[id]
		if !ok {
			row.check.lost++
			continue
		}
		row.check.delivered++
		row.lat = append(row.lat, max(got.Sub(at), 0))
	}
	row.check.duplicated = repeats
	if row.check.lost > 0 || row.check.duplicated > 0 {
		row.problems = append(row.problems, fmt.Sprintf("the listener lost %d and repeated %d notifications", row.check.lost, row.check.duplicated))
	}
	row.commit = commit
	slices.Sort(row.lat)
	slices.Sort(row.commit)
	return row
}

// commitTimes is when a COMMIT was sent and when it returned.
type commitTimes struct{ sent, returned time.Time }

func (c commitTimes) took() time.Duration { return c.returned.Sub(c.sent) }

// paced calls fn rate times a second for the benchmark's duration, each call at its own slot
// of a fixed schedule: a slow call delays the next one, never the pace after it.
func (lb *liveBench) paced(b *testing.B, fn func()) {
	b.Helper()
	interval := time.Second / time.Duration(lb.rate)
	start := time.Now()
	for i := 0; ; i++ {
		slot := start.Add(time.Duration(i) * interval)
		if slot.Sub(start) >= lb.duration {
			return
		}
		time.Sleep(time.Until(slot))
		fn()
	}
}

// order commits one paid order of the demo's one-time product, with its item and its
// order.created and order.paid events, and returns it with the times of its COMMIT.
func (lb *liveBench) order(ctx context.Context) (uuid.UUID, commitTimes, error) {
	tx, err := lb.db.BeginTxx(ctx, nil)
	if err != nil {
		return uuid.Nil, commitTimes{}, err
	}
	defer func() { _ = tx.Rollback() }()
	cat := lb.catalog
	id, err := seedOrder(ctx, tx, cat, storage.OrderWrite{CustomerID: lb.customer, ProductID: &cat.oneTime,
		BillingReason: storage.OrderBillingReasonPurchase, SubtotalAmount: oneTimeAmount}, "Live benchmark", &cat.oneTimePrice, time.Now())
	if err != nil {
		return uuid.Nil, commitTimes{}, err
	}
	for _, typ := range []string{"order.created", "order.paid"} {
		if _, err := storage.InsertDomainEvent(ctx, tx, cat.org, typ, id); err != nil {
			return uuid.Nil, commitTimes{}, err
		}
	}
	c := commitTimes{sent: time.Now()}
	if err := tx.Commit(); err != nil {
		return uuid.Nil, commitTimes{}, err
	}
	c.returned = time.Now()
	return id, c, nil
}

// settle waits until the server has dropped the previous target's subscriptions (its
// goroutines are back near what they were before any), so each target starts from the same
// place and within the per-credential cap.
func (lb *liveBench) settle(b *testing.B) {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last := -1.0
	for {
		g := lb.memory(b).goroutines
		if g == last || time.Now().After(deadline) {
			return
		}
		last = g
		time.Sleep(500 * time.Millisecond)
	}
}

// liveTable renders the rows for people, with the memory lines under the table.
func liveTable(rows []liveRow) string {
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tsubs\torders\tp50 ms\tp99 ms\tmax ms\tcommit p50 / p99\tdelivered / expected\tlost\tdup\tdisorder\tcpu till\tcpu pg\tcpu bench\tbusy\t")
	for _, r := range rows {
		var worst time.Duration
		if len(r.lat) > 0 {
			worst = r.lat[len(r.lat)-1]
		}
		cpu := "-\t-\t-\t-\t"
		if r.cpu.ok {
			cpu = fmt.Sprintf("%.2f\t%.2f\t%.2f\t%.0f%%\t", r.cpu.till, r.cpu.pg, r.cpu.bench, 100*r.cpu.busy)
		}
		c := r.check
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f / %.2f\t%d / %d\t%d\t%d\t%d\t%s\n", r.name, r.subs, r.orders,
			ms(percentile(r.lat, 0.50)), ms(percentile(r.lat, 0.99)), ms(worst), ms(percentile(r.commit, 0.50)), ms(percentile(r.commit, 0.99)),
			c.delivered, c.expected, c.lost, c.duplicated, c.disordered+c.unexpected+c.badOrder, cpu)
	}
	_ = tw.Flush()
	sb.WriteString("latency: COMMIT sent → frame read by the client; commit: COMMIT sent → returned, in ms;\n" +
		"disorder: events out of commit order, not committed, or (with order) without their order;\n" +
		"cpu: cores used by till serve, PostgreSQL and the benchmark from the first order to the last receipt\n")
	for _, r := range rows {
		if r.mem == nil {
			continue
		}
		p := r.mem.perSub()
		fmt.Fprintf(&sb, "memory per subscriber, %s: RSS %.1f KiB (%.0f → %.0f MiB), live heap %.1f KiB (%.1f → %.1f MiB), goroutines %.2f (%.0f → %.0f)\n",
			r.name, p.rss/1024, r.mem.before.rss/(1<<20), r.mem.after.rss/(1<<20), p.heap/1024,
			r.mem.before.heap/(1<<20), r.mem.after.heap/(1<<20), p.goroutines, r.mem.before.goroutines, r.mem.after.goroutines)
	}
	return sb.String()
}
