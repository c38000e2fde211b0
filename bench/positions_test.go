package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/resolvers/resolverstest"
	"till/storage"
)

// positionsWarmup is each round's unmeasured start.
const positionsWarmup = 2 * time.Second

// positionsTrigger is the deferred trigger of migration 00090 that numbers each domain event
// as its transaction commits, under a lock on the organization's counters row (order_numbers
// since 00104, live_positions before).
const positionsTrigger = "domain_events_position"

// BenchmarkPositions measures what numbering domain events at commit (migration 00090)
// costs the writes that emit them. The trigger locks the organization's counters row until
// the commit is visible, so the ends of one organization's event-emitting commits queue
// behind each other, each through its WAL flush.
//
// N writers (BENCH_POSITIONS_WRITERS, default "8,16") work for one organization, on three
// paths (BENCH_POSITIONS_PATHS, default all):
//
//   - api: each writer opens a checkout and pays it through GraphQL (createCheckout, then
//     confirmCheckout with tok_visa; every other purchase by a new buyer, the rest by the
//     writer's returning buyer), the purchase path with everything it commits and the
//     background work it causes;
//   - order: each writer commits, over SQL, the transaction of createOrder (a paid order, its
//     item, order.created and order.paid), so PostgreSQL rather than the server's CPU sets
//     the pace. Its commit draws the order's numbers from the same row (migration 00028), so
//     disabling the position trigger leaves that queue in place;
//   - checkout: each writer commits, over SQL, an update of its own open checkout with its
//     checkout.updated event, as a buyer's changes to a checkout do: no order number, so the
//     position's lock is the only queue per organization.
//
// Each (path, N) runs three rounds of BENCH_DURATION after a 2 s warm-up: the ceiling, with
// the trigger disabled (ALTER TABLE domain_events DISABLE TRIGGER in the benchmark's own
// database), the trigger as shipped, and the ceiling again. Ratios are against the mean of
// the two ceilings. The benchmark fails when a unit failed or till serve logged an error.
func BenchmarkPositions(b *testing.B) {
	duration := benchDuration(b)
	var writers []int
	for _, w := range positionsList(b, "BENCH_POSITIONS_WRITERS", "8,16") {
		n, err := strconv.Atoi(w)
		if err != nil || n < 1 {
			b.Fatalf("BENCH_POSITIONS_WRITERS: %q is not a positive count", w)
		}
		writers = append(writers, n)
	}
	srv := startTill(b, "TILL_GRAPHQL_COST_BUDGET=0")
	seed := srv.demo(b)
	db, err := sqlx.Open("postgres", srv.dsn(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	pb := &positionsBench{srv: srv, db: db, token: seed.OrganizationToken, catalog: catalogOf(b, db, seed),
		procs: processes{till: srv.cmd.Process.Pid}}
	if err := db.Get(&pb.customer, `SELECT id FROM customers WHERE organization_id = $1 ORDER BY created_at, id LIMIT 1`, pb.catalog.org); err != nil {
		b.Fatalf("a demo customer: %v", err)
	}
	var product struct{ CreateProduct struct{ ID string } }
	srv.graphql(b, seed.OrganizationToken, `mutation { createProduct(input: {name: "Positions ebook",
		prices: [{amountType: fixed, priceAmount: 900}]}) { id } }`, &product)
	pb.product = product.CreateProduct.ID

	b.ResetTimer()
	var rows []positionsRow
	pb.started = time.Now()
	pb.openCheckouts(b, slices.Max(writers))
	for _, path := range positionsList(b, "BENCH_POSITIONS_PATHS", "api,order,checkout") {
		for _, n := range writers {
			for _, round := range []struct {
				name    string
				trigger bool
			}{{"ceiling", false}, {"positions", true}, {"ceiling again", false}} {
				pb.setTrigger(b, round.trigger)
				pb.settle(b)
				rows = append(rows, pb.round(b, path, round.name, n, duration))
			}
		}
	}
	pb.setTrigger(b, true)
	b.StopTimer()

	fmt.Printf("\nBenchmarkPositions: %s per round after %s of warm-up; one organization\n%s\n",
		duration, positionsWarmup, positionsTable(rows))
	b.ReportMetric(0, "ns/op")
	for i := 0; i+2 < len(rows); i += 3 {
		r, ceiling := rows[i+1], (rows[i].rate()+rows[i+2].rate())/2
		key := fmt.Sprintf("%s-%d", r.path, r.writers)
		b.ReportMetric(r.rate(), key+"-tx/s")
		b.ReportMetric(ratio(r.rate(), ceiling), key+"-ratio")
		b.ReportMetric(ms(percentile(r.lat, 0.50)), key+"-p50-ms")
		b.ReportMetric(ms(percentile(r.lat, 0.99)), key+"-p99-ms")
	}
	for _, r := range rows {
		if r.failed > 0 {
			b.Errorf("%s %d writers, %s: %d failed; first: %s", r.path, r.writers, r.name, r.failed, r.firstFail)
		}
	}
	if tail := srv.logTail(); strings.Contains(tail, `"level":"ERROR"`) {
		b.Errorf("till serve logged errors:\n%s", tail)
	}
}

// positionsList reads the comma-separated list in the environment variable name, or def.
func positionsList(b *testing.B, name, def string) []string {
	b.Helper()
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		v = def
	}
	var out []string
	for f := range strings.SplitSeq(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			b.Fatalf("%s=%q: an empty item", name, v)
		}
		out = append(out, f)
	}
	return out
}

// positionsBench is what every round shares.
type positionsBench struct {
	srv      *tillServer
	db       *sqlx.DB
	token    string
	catalog  dashboardCatalog
	customer uuid.UUID
	product  string
	// started is when the rounds began: settle waits for the events written since.
	started time.Time
	// purchases counts the api path's purchases, to name their buyers.
	purchases atomic.Int64
	// checkouts are open checkouts, one per writer of the checkout path.
	checkouts []uuid.UUID
	procs     processes
}

// positionsRow is one round's outcome.
type positionsRow struct {
	path, name string
	writers    int
	done       int             // units finished in the measured window
	elapsed    time.Duration   // from the end of warm-up until the last of them finished
	lat        []time.Duration // sorted
	failed     int
	firstFail  string
	cpu        cpuUse
}

func (r positionsRow) rate() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.done) / r.elapsed.Seconds()
}

// setTrigger enables or disables the position trigger. The ALTER waits for the previous
// round's transactions, which settle has let finish.
func (pb *positionsBench) setTrigger(b *testing.B, on bool) {
	b.Helper()
	verb := "DISABLE"
	if on {
		verb = "ENABLE"
	}
	if _, err := pb.db.Exec(`ALTER TABLE domain_events ` + verb + ` TRIGGER ` + positionsTrigger); err != nil {
		b.Fatalf("%s the position trigger: %v", verb, err)
	}
}

// settle waits until the background work of the previous round (rendering events, granting
// benefits, delivering webhooks) has run out, so each round pays for its own.
func (pb *positionsBench) settle(b *testing.B) {
	b.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		var pending int
		if err := pb.db.Get(&pending, `SELECT (SELECT count(*) FROM jobs WHERE state = 'available' AND scheduled_at <= now())
			+ (SELECT count(*) FROM domain_events WHERE payload IS NULL AND render_attempts < 5 AND created_at > $1)`, pb.started); err != nil {
			b.Fatal(err)
		}
		if pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d jobs or events still pending after 2 minutes", pending)
		}
	}
}

// round runs n writers on path for the warm-up and d, and times the units finished in the
// measured window.
func (pb *positionsBench) round(b *testing.B, path, name string, n int, d time.Duration) positionsRow {
	b.Helper()
	unit := pb.order
	switch path {
	case "api":
		client := newClient(n)
		defer client.CloseIdleConnections()
		unit = func(ctx context.Context, i int) error { return pb.purchase(ctx, client, pb.buyer(i)) }
	case "checkout":
		unit = pb.updateCheckout
	}
	ctx := context.Background()
	warmEnd := time.Now().Add(positionsWarmup)
	end := warmEnd.Add(d)
	var wg sync.WaitGroup
	lats := make([][]time.Duration, n)
	lasts := make([]time.Time, n)
	fails := make([]int, n)
	var firstFail atomic.Value
	for i := range n {
		wg.Go(func() {
			for {
				t0 := time.Now()
				if !t0.Before(end) {
					return
				}
				err := unit(ctx, i)
				t1 := time.Now()
				if err != nil {
					fails[i]++
					firstFail.CompareAndSwap(nil, err.Error())
					continue
				}
				if !t0.Before(warmEnd) {
					lats[i] = append(lats[i], t1.Sub(t0))
					lasts[i] = t1
				}
			}
		})
	}
	time.Sleep(time.Until(warmEnd))
	began := pb.procs.sample()
	wg.Wait()
	row := positionsRow{path: path, name: name, writers: n, cpu: began.since(pb.procs.sample())}
	last := warmEnd
	for i := range n {
		row.lat = append(row.lat, lats[i]...)
		row.failed += fails[i]
		if lasts[i].After(last) {
			last = lasts[i]
		}
	}
	row.done, row.elapsed = len(row.lat), last.Sub(warmEnd)
	if s, ok := firstFail.Load().(string); ok {
		row.firstFail = s
	}
	slices.Sort(row.lat)
	return row
}

// buyer is the email of writer i's next purchase: every other one a new buyer, the rest
// writer i's returning buyer. A new buyer's purchase writes customer.created before its
// order, a returning buyer's the order first, so the commits draw their counters in both
// orders, as a shop's do.
func (pb *positionsBench) buyer(i int) string {
	n := pb.purchases.Add(1)
	if n%2 == 0 {
		return fmt.Sprintf("returning-%d@example.com", i)
	}
	return fmt.Sprintf("new-%d@example.com", n)
}

// purchase opens a checkout of the benchmark's product and pays it as email.
func (pb *positionsBench) purchase(ctx context.Context, hc *http.Client, email string) error {
	var c struct{ CreateCheckout struct{ ID string } }
	if err := resolverstest.Call(ctx, hc, pb.srv.baseURL+"/graphql", pb.token,
		`mutation($p: UUID!) { createCheckout(input: {products: [$p]}) { id } }`, map[string]any{"p": pb.product}, &c); err != nil {
		return err
	}
	return resolverstest.Call(ctx, hc, pb.srv.baseURL+"/graphql", pb.token,
		`mutation($id: UUID!, $email: String!) { confirmCheckout(input: {id: $id, paymentToken: "tok_visa", customerEmail: $email}) { status } }`,
		map[string]any{"id": c.CreateCheckout.ID, "email": email}, nil)
}

// order commits one paid order of the demo's one-time product with its item and its
// order.created and order.paid events, the statements of createOrder.
func (pb *positionsBench) order(ctx context.Context, _ int) error {
	tx, err := pb.db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	cat := pb.catalog
	id, err := seedOrder(ctx, tx, cat, storage.OrderWrite{CustomerID: pb.customer, ProductID: &cat.oneTime,
		BillingReason: storage.OrderBillingReasonPurchase, SubtotalAmount: oneTimeAmount}, "Positions benchmark", &cat.oneTimePrice, time.Now())
	if err != nil {
		return err
	}
	for _, typ := range []string{"order.created", "order.paid"} {
		if _, err := storage.InsertDomainEvent(ctx, tx, cat.org, typ, id); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// openCheckouts opens n checkouts of the benchmark's product through GraphQL.
func (pb *positionsBench) openCheckouts(b *testing.B, n int) {
	b.Helper()
	for range n {
		var c struct{ CreateCheckout struct{ ID uuid.UUID } }
		pb.srv.graphql(b, pb.token, fmt.Sprintf(`mutation { createCheckout(input: {products: [%q]}) { id } }`, pb.product), &c)
		pb.checkouts = append(pb.checkouts, c.CreateCheckout.ID)
	}
}

// updateCheckout commits writer i's change to its checkout with the checkout.updated event.
func (pb *positionsBench) updateCheckout(ctx context.Context, i int) error {
	tx, err := pb.db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	id := pb.checkouts[i]
	if _, err := tx.ExecContext(ctx, `UPDATE checkouts SET modified_at = now() WHERE id = $1 AND organization_id = $2`, id, pb.catalog.org); err != nil {
		return err
	}
	if _, err := storage.InsertDomainEvent(ctx, tx, pb.catalog.org, "checkout.updated", id); err != nil {
		return err
	}
	return tx.Commit()
}

// positionsTable renders the rows, each path and writer count against its two ceilings.
func positionsTable(rows []positionsRow) string {
	var sb strings.Builder
	sb.WriteString("| path | writers | round | tx/s | ratio | p50 ms | p99 ms | cpu till + pg | busy | failed |\n")
	sb.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for i, r := range rows {
		g := rows[i-i%3 : min(i-i%3+3, len(rows))]
		ceiling := g[0].rate()
		if len(g) == 3 {
			ceiling = (g[0].rate() + g[2].rate()) / 2
		}
		cpu := "-"
		if r.cpu.ok {
			cpu = fmt.Sprintf("%.2f + %.2f", r.cpu.till, r.cpu.pg)
		}
		fmt.Fprintf(&sb, "| %s | %d | %s | %.0f | %.2f | %.2f | %.2f | %s | %.0f%% | %d |\n", r.path, r.writers, r.name,
			r.rate(), ratio(r.rate(), ceiling), ms(percentile(r.lat, 0.50)), ms(percentile(r.lat, 0.99)), cpu, 100*r.cpu.busy, r.failed)
	}
	sb.WriteString("tx/s: purchases (api: createCheckout + confirmCheckout) or transactions (order, checkout) finished in the window;\n" +
		"ratio: against the mean of the two ceilings (position trigger disabled); p50/p99: one unit, start to finish\n")
	return sb.String()
}
