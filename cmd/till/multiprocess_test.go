package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/resolvers/resolverstest"
	"till/storage/storagetest"
)

// TestManyProcessesKeepEveryGuarantee runs Till the way it scales: two `till serve` and one
// `till worker` on one database. It buys (half of it subscriptions) through both servers,
// ingests usage events with repeats through both, delivers webhooks to two endpoints that
// refuse some first attempts, kills one server with SIGKILL mid-run before starting it again,
// and has both servers advance the test clock past a period at once. Then: one order and one
// charge per checkout and per renewal, gapless invoice and receipt numbers, each
// subscription renewed once, each event once, every webhook delivered with each object's
// events in order at each endpoint, and no ERROR in any process's log.
func TestManyProcessesKeepEveryGuarantee(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three till processes")
	}
	dsn := storagetest.DSN(t)
	shared := map[string]string{"DATABASE_URL": dsn, "TILL_BLOB_DIR": t.TempDir(), "TILL_SECRET": "many-processes",
		"TILL_LOG_LEVEL": "warn", "TILL_WEBHOOK_ALLOW_PRIVATE": "true", "TILL_WEBHOOK_TIMEOUT": "2s",
		"TILL_GRAPHQL_COST_BUDGET": "0"}
	own := func() map[string]string {
		vars := map[string]string{"TILL_DATA_DIR": t.TempDir()}
		for k, v := range shared {
			vars[k] = v
		}
		return vars
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"org", "create", "--name", "Many", "--slug", "many"}, getenvOf(shared), &out); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"token", "create", "--org", "many", "--scopes", "all"}, getenvOf(shared), &out); err != nil {
		t.Fatal(err)
	}
	token := tokenLine.FindStringSubmatch(out.String())[1]
	hooks := newHookReceiver(t)

	a, b, w := startTill(t, "serve", own()), startTill(t, "serve", own()), startTill(t, "worker", own())
	logs := []*syncBuffer{a.out, b.out, w.out}
	for _, path := range []string{"/one", "/two"} {
		mustGraphQL(t, a.base, token, `mutation($url: String!) { createWebhookEndpoint(input: {url: $url, format: raw,
			events: ["checkout.created", "checkout.updated", "customer.created", "order.created", "order.paid"]}) { id } }`,
			map[string]any{"url": hooks.url + path}, nil)
	}
	var ebook, plan struct{ CreateProduct struct{ ID uuid.UUID } }
	mustGraphQL(t, b.base, token, `mutation { createProduct(input: {name: "Ebook",
		prices: [{amountType: fixed, priceAmount: 900}]}) { id } }`, nil, &ebook)
	mustGraphQL(t, a.base, token, `mutation { createProduct(input: {name: "Plan", recurringInterval: month,
		prices: [{amountType: fixed, priceAmount: 1000}]}) { id } }`, nil, &plan)
	products := []uuid.UUID{ebook.CreateProduct.ID, plan.CreateProduct.ID} // odd checkouts subscribe

	// servers is where requests go: both servers, with b replaced after it is killed.
	var mu sync.Mutex
	servers := []string{a.base, b.base}
	server := func(i int) string {
		mu.Lock()
		defer mu.Unlock()
		return servers[i%len(servers)]
	}
	const checkouts, events = 40, 300
	var bought atomic.Int64
	var wg sync.WaitGroup
	for worker := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := worker; i < checkouts; i += 4 {
				buy(t, server, i, token, products[i%2])
				bought.Add(1)
			}
		}()
	}
	for half := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ingestTwice(t, server, half, token, events)
		}()
	}
	for bought.Load() < checkouts/3 {
		time.Sleep(10 * time.Millisecond)
	}
	b.kill() // mid-run: requests, claims and leases of b die with it
	logs = append(logs, startAgain(t, &mu, servers, 1, own()))
	wg.Wait()

	// Both servers advance the organization's test clock past every subscription's first
	// period at once: each period is renewed once, by one of them.
	month := time.Now().AddDate(0, 1, 2).UTC().Format(time.RFC3339)
	var advanced sync.WaitGroup
	for i := range 2 {
		advanced.Go(func() {
			_ = resolverstest.Call(t.Context(), http.DefaultClient, server(i)+"/graphql", token, `mutation($to: DateTime!) { advanceTestClock(input: {to: $to}) { renewals } }`,
				map[string]any{"to": month}, nil)
		})
	}
	advanced.Wait()

	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	waitForDeliveries(t, db)
	checkSums(t, db, checkouts, events)
	hooks.checkOrder(t, db)
	for i, log := range logs {
		if strings.Contains(log.String(), `"level":"ERROR"`) {
			t.Errorf("process %d logged an error:\n%s", i, log.String())
		}
	}
}

// startAgain starts a server in place of servers[i] and returns its log.
func startAgain(t *testing.T, mu *sync.Mutex, servers []string, i int, vars map[string]string) *syncBuffer {
	p := startTill(t, "serve", vars)
	mu.Lock()
	servers[i] = p.base
	mu.Unlock()
	return p.out
}

// buy opens checkout i through one server and pays it, retrying through the other servers
// while the one it used dies: a confirmed checkout whose purchase died reopens after its
// lease, and is paid again with the same idempotency key.
func buy(t *testing.T, server func(int) string, i int, token string, product uuid.UUID) {
	var id uuid.UUID
	for try := i; ; try++ {
		var c struct{ CreateCheckout struct{ ID uuid.UUID } }
		if resolverstest.Call(t.Context(), http.DefaultClient, server(try)+"/graphql", token, `mutation($in: CheckoutCreateInput!) { createCheckout(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"products": []uuid.UUID{product}, "customerEmail": fmt.Sprintf("buyer-%d@example.com", i)}},
			&c) == nil {
			id = c.CreateCheckout.ID
			break
		}
	}
	deadline := time.Now().Add(90 * time.Second)
	for try := i; time.Now().Before(deadline); try++ {
		var c struct{ Checkout struct{ Status string } }
		if resolverstest.Call(t.Context(), http.DefaultClient, server(try)+"/graphql", token, `query($id: UUID!) { checkout(id: $id) { status } }`, map[string]any{"id": id}, &c) != nil {
			continue
		}
		switch c.Checkout.Status {
		case "succeeded":
			return
		case "open":
			_ = resolverstest.Call(t.Context(), http.DefaultClient, server(try)+"/graphql", token, `mutation($id: UUID!) { confirmCheckout(input: {id: $id, paymentToken: "tok_visa"}) { status } }`,
				map[string]any{"id": id}, nil)
		default: // confirmed: a purchase is running, or died and waits for its lease
			time.Sleep(200 * time.Millisecond)
		}
	}
	t.Errorf("checkout %d (%s) did not succeed within 90s", i, id)
}

// ingestTwice sends its half of the events through the servers, each batch twice.
func ingestTwice(t *testing.T, server func(int) string, half int, token string, events int) {
	for start := half * events / 2; start < (half+1)*events/2; start += 25 {
		items := make([]string, 0, 25)
		for i := start; i < start+25; i++ {
			items = append(items, fmt.Sprintf(`{"name":"call","external_customer_id":"mp-%d","external_id":"mp-%d"}`, i%10, i))
		}
		body := `{"events":[` + strings.Join(items, ",") + `]}`
		for sent, try := 0, start; sent < 2 && try < start+50; try++ {
			req, _ := http.NewRequest(http.MethodPost, server(try)+"/v1/events/ingest", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				continue // that server died: send again elsewhere
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				sent++
			}
		}
	}
}

// mustGraphQL runs an operation against the server at base and fails the test unless it
// succeeds.
func mustGraphQL(t *testing.T, base, token, query string, vars map[string]any, out any) {
	t.Helper()
	if err := resolverstest.Call(t.Context(), http.DefaultClient, base+"/graphql", token, query, vars, out); err != nil {
		t.Fatal(err)
	}
}

// waitForDeliveries waits until every queued webhook event was delivered.
func waitForDeliveries(t *testing.T, db *sqlx.DB) {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for {
		var pending int
		if err := db.Get(&pending, `SELECT count(*) FROM webhook_events WHERE succeeded IS NOT TRUE`); err != nil {
			t.Fatal(err)
		}
		var unrendered int
		if err := db.Get(&unrendered, `SELECT count(*) FROM domain_events WHERE payload IS NULL`); err != nil {
			t.Fatal(err)
		}
		if pending == 0 && unrendered == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 120s: %d webhook events undelivered, %d domain events unrendered", pending, unrendered)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkSums checks the money, the counts and the numbering.
func checkSums(t *testing.T, db *sqlx.DB, checkouts, events int) {
	t.Helper()
	checks := []struct {
		name  string
		query string
		want  int
	}{
		{"checkouts succeeded", `SELECT count(*) FROM checkouts WHERE status = 'succeeded'`, checkouts},
		{"subscriptions", `SELECT count(*) FROM subscriptions`, checkouts / 2},
		{"orders: one per checkout, one per renewal", `SELECT count(*) FROM orders`, checkouts + checkouts/2},
		{"checkouts with more than one order", `SELECT count(*) FROM (SELECT checkout_id FROM orders
			WHERE checkout_id IS NOT NULL GROUP BY checkout_id HAVING count(*) > 1) x`, 0},
		{"subscriptions not renewed exactly once", `SELECT count(*) FROM subscriptions s WHERE (SELECT count(*)
			FROM orders o WHERE o.subscription_id = s.id AND o.billing_reason = 'subscription_cycle') <> 1`, 0},
		{"succeeded payments", `SELECT count(*) FROM payments WHERE status = 'succeeded'`, checkouts + checkouts/2},
		{"charges taken by the processor", `SELECT count(*) FROM test_payment_charges WHERE charge_id IS NOT NULL`, checkouts + checkouts/2},
		{"usage events", `SELECT count(*) FROM events WHERE external_id LIKE 'mp-%'`, events},
		{"invoice numbers missing, repeated or skipped", `SELECT count(*) FROM (SELECT substring(invoice_number FROM '[0-9]+$')::int AS n,
			row_number() OVER (PARTITION BY organization_id ORDER BY substring(invoice_number FROM '[0-9]+$')::int) AS i
			FROM orders) x WHERE n IS DISTINCT FROM i`, 0},
		{"receipt numbers missing, repeated or skipped", `SELECT count(*) FROM (SELECT substring(receipt_number FROM '[0-9]+$')::int AS n,
			row_number() OVER (PARTITION BY organization_id ORDER BY substring(receipt_number FROM '[0-9]+$')::int) AS i
			FROM orders WHERE status = 'paid') x WHERE n IS DISTINCT FROM i`, 0},
		{"domain events rendered twice into one endpoint", `SELECT count(*) FROM (SELECT 1 FROM webhook_events
			GROUP BY domain_event_id, webhook_endpoint_id HAVING count(*) > 1) x`, 0},
	}
	for _, c := range checks {
		var got int
		if err := db.Get(&got, c.query); err != nil {
			t.Errorf("%s: %v", c.name, err)
		} else if got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// hookReceiver is two webhook endpoints (/one and /two) that record each arrival and answer
// 500 to the first attempt of every 20th event they see.
type hookReceiver struct {
	url      string
	mu       sync.Mutex
	arrivals map[string][]string // by path: webhook ids in arrival order, successes only
	seen     map[string]int      // by webhook id: attempts
	count    int
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{arrivals: map[string][]string{}, seen: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		id := r.Header.Get("webhook-id")
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.seen[id] == 0 {
			h.count++
		}
		h.seen[id]++
		if h.seen[id] == 1 && h.count%20 == 0 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		h.arrivals[r.URL.Path] = append(h.arrivals[r.URL.Path], id)
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

// checkOrder checks that each endpoint got every event queued for it, and each object's
// events in the order they happened (a repeat of one already delivered aside).
func (h *hookReceiver) checkOrder(t *testing.T, db *sqlx.DB) {
	t.Helper()
	var rows []struct {
		ID       string    `db:"id"`
		URL      string    `db:"url"`
		Object   uuid.UUID `db:"object_id"`
		Sequence int       `db:"seq"`
	}
	if err := db.Select(&rows, `SELECT we.id::text AS id, e.url, de.object_id,
			row_number() OVER (PARTITION BY we.webhook_endpoint_id, de.object_id ORDER BY de.created_at, de.id) AS seq
		FROM webhook_events we JOIN webhook_endpoints e ON e.id = we.webhook_endpoint_id
		JOIN domain_events de ON de.id = we.domain_event_id`); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	type place struct {
		object uuid.UUID
		seq    int
	}
	want := map[string]place{}
	queued := map[string]int{}
	for _, r := range rows {
		want[r.ID] = place{r.Object, r.Sequence}
		queued[r.URL[strings.LastIndex(r.URL, "/"):]]++
	}
	if len(rows) == 0 {
		t.Fatal("no webhook events were queued")
	}
	for path, ids := range h.arrivals {
		last := map[uuid.UUID]int{}
		got := map[string]bool{}
		for _, id := range ids {
			p, ok := want[id]
			if !ok {
				t.Errorf("%s received %s, which was never queued", path, id)
				continue
			}
			if got[id] {
				continue // a repeat after a lost acknowledgement: at least once
			}
			got[id] = true
			if p.seq < last[p.object] {
				t.Errorf("%s received event %d of object %s after event %d; the object's events:", path, p.seq, p.object, last[p.object])
				var history []struct {
					Type     string     `db:"type"`
					Created  time.Time  `db:"created_at"`
					Rendered *time.Time `db:"rendered_at"`
					Attempts int        `db:"render_attempts"`
				}
				_ = db.Select(&history, `SELECT type, created_at, rendered_at, render_attempts FROM domain_events WHERE object_id = $1 ORDER BY created_at, id`, p.object)
				for _, d := range history {
					t.Logf("  %s created %s, rendered %v after %d failed attempts", d.Type, d.Created.Format("15:04:05.000000"), d.Rendered, d.Attempts)
				}
			}
			last[p.object] = p.seq
		}
		if len(got) != queued[path] {
			t.Errorf("%s received %d distinct events, %d were queued for it", path, len(got), queued[path])
		}
	}
}
