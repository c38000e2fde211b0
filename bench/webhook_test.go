package bench

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"till/internal/invoice"
)

// Webhook benchmark sizes: endpoints and order changes of the throughput phase, and order
// changes (at latencyRate per second) of the latency phase.
const (
	webhookEndpoints   = 16
	webhookChanges     = 600
	webhookClients     = 4
	latencyChanges     = 200
	latencyRate        = 20
	receiverConcurrent = webhookEndpoints
)

// hookReceiver counts deliveries and, while measuring, how long each took from its event's
// timestamp (when the change recorded it, inside the change's transaction) to arrival.
type hookReceiver struct {
	srv       *http.Server
	url       string
	received  atomic.Int64
	measuring atomic.Bool
	mu        sync.Mutex
	latencies []time.Duration
}

func startReceiver(b *testing.B) *hookReceiver {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	rc := &hookReceiver{url: "http://" + ln.Addr().String() + "/hook"}
	rc.srv = &http.Server{Handler: rc}
	go func() { _ = rc.srv.Serve(ln) }()
	b.Cleanup(func() { _ = rc.srv.Close() })
	return rc
}

func (rc *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	now := time.Now()
	if rc.measuring.Load() {
		var env struct {
			Timestamp time.Time `json:"timestamp"`
		}
		if err := json.Unmarshal(body, &env); err == nil {
			rc.mu.Lock()
			rc.latencies = append(rc.latencies, now.Sub(env.Timestamp))
			rc.mu.Unlock()
		}
	}
	rc.received.Add(1)
	w.WriteHeader(http.StatusNoContent)
}

// waitFor waits until the receiver has n deliveries, failing after timeout.
func (rc *hookReceiver) waitFor(b *testing.B, n int64, timeout time.Duration) {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for rc.received.Load() < n {
		if time.Now().After(deadline) {
			b.Fatalf("receiver has %d deliveries after %s, want %d", rc.received.Load(), timeout, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// BenchmarkWebhookDelivery measures webhook delivery from a real `till serve` to a receiver
// on loopback: throughput (order changes fanned out to 16 endpoints, counted from the first
// change to the last delivery) against a ceiling of plain POSTs of the same bodies from 16
// connections to the same receiver, and the latency from a committed order change (its
// PATCH answered) to its webhook's arrival, at 20 changes a second to one endpoint. Then it
// times invoice generation: the order.invoice job's own run time, next to rendering the
// same kind of PDF in process.
func BenchmarkWebhookDelivery(b *testing.B) {
	srv := startTill(b, "TILL_WEBHOOK_ALLOW_PRIVATE=true")
	seed := srv.demo(b)
	rc := startReceiver(b)
	order := demoOrder(b, srv, seed.OrganizationToken)
	b.ResetTimer()

	endpoints := make([]string, webhookEndpoints)
	for i := range endpoints {
		endpoints[i] = createEndpoint(b, srv, seed.OrganizationToken, rc.url)
	}
	start := time.Now()
	patchOrders(b, srv, seed.OrganizationToken, order, webhookChanges, webhookClients, "tp")
	want := int64(webhookChanges * webhookEndpoints)
	rc.waitFor(b, want, 5*time.Minute)
	elapsed := time.Since(start)
	rate := float64(want) / elapsed.Seconds()
	rendered := renderSpan(b, srv, start)
	ceiling := postCeiling(b, rc, int(want), receiverConcurrent)
	for _, id := range endpoints[1:] {
		deleteEndpoint(b, srv, seed.OrganizationToken, id)
	}

	latencies := measureLatency(b, srv, rc, seed.OrganizationToken, order)
	invoice := invoiceTimes(b, srv, seed.OrganizationToken)
	b.StopTimer()

	b.ReportMetric(rate, "deliveries/s")
	b.ReportMetric(rate/ceiling, "delivery-ratio")
	b.ReportMetric(ms(percentile(latencies, 0.50)), "latency-p50-ms")
	b.ReportMetric(ms(percentile(latencies, 0.99)), "latency-p99-ms")
	b.ReportMetric(ms(invoice.job50), "invoice-p50-ms")
	b.ReportMetric(0, "ns/op")
	b.Logf("\nthroughput: %d order changes x %d endpoints = %d deliveries in %.2f s: %.0f deliveries/s; "+
		"ceiling (plain POSTs, %d connections): %.0f/s; ratio %.2f; the %d events were rendered within %.2f s of the first change\n"+
		"latency, change committed -> webhook arrived, %d changes at %d/s to one endpoint: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n%s",
		webhookChanges, webhookEndpoints, want, elapsed.Seconds(), rate, receiverConcurrent, ceiling, rate/ceiling,
		webhookChanges, rendered.Seconds(),
		len(latencies), latencyRate, ms(percentile(latencies, 0.50)), ms(percentile(latencies, 0.99)),
		ms(latencies[len(latencies)-1]), invoice)
}

// demoOrder is a paid order of the demo organization.
func demoOrder(b *testing.B, srv *tillServer, token string) string {
	b.Helper()
	var out struct {
		Orders struct{ Items []struct{ ID string } }
	}
	srv.graphql(b, token, `{ orders(limit: 1, filter: {status: [paid]}) { items { id } } }`, &out)
	if len(out.Orders.Items) == 0 {
		b.Fatal("the demo organization has no paid order")
	}
	return out.Orders.Items[0].ID
}

func createEndpoint(b *testing.B, srv *tillServer, token, url string) string {
	b.Helper()
	var out struct{ CreateWebhookEndpoint struct{ ID string } }
	srv.graphql(b, token, fmt.Sprintf(`mutation { createWebhookEndpoint(input: {url: %q, format: raw,
		events: ["order.updated"]}) { id } }`, url), &out)
	return out.CreateWebhookEndpoint.ID
}

func deleteEndpoint(b *testing.B, srv *tillServer, token, id string) {
	b.Helper()
	var out struct{ DeleteWebhookEndpoint struct{ ID string } }
	srv.graphql(b, token, fmt.Sprintf(`mutation { deleteWebhookEndpoint(id: %q) { id } }`, id), &out)
}

// patchOrders changes the order's billing name n times from clients concurrent clients; each
// change records order.updated.
func patchOrders(b *testing.B, srv *tillServer, token, order string, n, clients int, prefix string) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if _, err := patchOrder(srv, token, order, fmt.Sprintf("%s-%d", prefix, i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// patchOrder sets the order's billing name and returns when the change was committed (its
// answer arrived).
func patchOrder(srv *tillServer, token, order, name string) (time.Time, error) {
	req, err := http.NewRequest(http.MethodPatch, srv.baseURL+"/v1/orders/"+order, strings.NewReader(`{"billing_name":"`+name+`"}`))
	if err != nil {
		return time.Time{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return time.Time{}, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return time.Time{}, fmt.Errorf("PATCH order answered %d", resp.StatusCode)
	}
	return time.Now(), nil
}

// postCeiling sends n signed-size POSTs to the receiver from conns connections and returns
// requests per second: what the receiver and loopback take with no queue behind them.
func postCeiling(b *testing.B, rc *hookReceiver, n, conns int) float64 {
	b.Helper()
	body := bytes.Repeat([]byte("x"), 2500)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns}}
	before := rc.received.Load()
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range conns {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				req, _ := http.NewRequest(http.MethodPost, rc.url, bytes.NewReader(body))
				req.Header.Set("webhook-id", "ceiling")
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	rate := float64(n) / time.Since(start).Seconds()
	if got := rc.received.Load() - before; got != int64(n) {
		b.Fatalf("ceiling: receiver got %d of %d", got, n)
	}
	return rate
}

// measureLatency changes the order latencyChanges times at latencyRate per second and
// returns, sorted, how long each change's webhook took from the event's timestamp (taken
// inside the change's transaction, so slightly before its commit) to arrival at the one
// endpoint left.
func measureLatency(b *testing.B, srv *tillServer, rc *hookReceiver, token, order string) []time.Duration {
	b.Helper()
	before := rc.received.Load()
	rc.measuring.Store(true)
	tick := time.NewTicker(time.Second / latencyRate)
	defer tick.Stop()
	for i := range latencyChanges {
		<-tick.C
		if _, err := patchOrder(srv, token, order, fmt.Sprintf("lat-%d", i)); err != nil {
			b.Fatal(err)
		}
	}
	rc.waitFor(b, before+latencyChanges, time.Minute)
	rc.measuring.Store(false)
	rc.mu.Lock()
	out := slices.Clone(rc.latencies)
	rc.mu.Unlock()
	slices.Sort(out)
	return out
}

// invoiceRounds is how many invoices the invoice part renders.
const invoiceRounds = 30

// invoiceReport holds the invoice timings: the job's own run (claim to completion, read from
// the jobs table), request to completed job, and the in-process PDF render alone.
type invoiceReport struct {
	job50, job99, e2e50, render50 time.Duration
}

func (r invoiceReport) String() string {
	return fmt.Sprintf("invoice generation, %d invoices: job run p50 %.1f ms, p99 %.1f ms; request to rendered p50 %.1f ms "+
		"(the worker is woken when the request commits); the PDF render alone, in process: p50 %.2f ms",
		invoiceRounds, ms(r.job50), ms(r.job99), ms(r.e2e50), ms(r.render50))
}

// invoiceTimes renders invoiceRounds invoices of the demo's orders, giving the order new
// billing details before each so every request renders.
func invoiceTimes(b *testing.B, srv *tillServer, token string) invoiceReport {
	b.Helper()
	db, err := sql.Open("postgres", srv.dsn(b))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var out struct {
		Orders struct{ Items []struct{ ID string } }
	}
	srv.graphql(b, token, `{ orders(limit: 20, filter: {status: [paid, pending]}) { items { id } } }`, &out)
	for _, o := range out.Orders.Items { // an order keeps the country of an address it has: 422 then
		call(b, srv, token, http.MethodPatch, "/v1/orders/"+o.ID, `{"billing_address":{"line1":"1 Main St","city":"Paris","country":"FR"}}`)
	}
	var jobs, e2e []time.Duration
	for i := range invoiceRounds {
		order := out.Orders.Items[i%len(out.Orders.Items)].ID
		body := fmt.Sprintf(`{"billing_name":"Customer %d"}`, i)
		if code := call(b, srv, token, http.MethodPatch, "/v1/orders/"+order, body); code != http.StatusOK {
			b.Fatalf("PATCH order: %d", code)
		}
		start := time.Now()
		if code := call(b, srv, token, http.MethodPost, "/v1/orders/"+order+"/invoice", ""); code != http.StatusAccepted {
			b.Fatalf("POST invoice: %d", code)
		}
		run := waitJob(b, db, order)
		e2e = append(e2e, time.Since(start))
		jobs = append(jobs, run)
	}
	slices.Sort(jobs)
	slices.Sort(e2e)
	return invoiceReport{job50: percentile(jobs, 0.5), job99: percentile(jobs, 0.99), e2e50: percentile(e2e, 0.5),
		render50: renderTime(b)}
}

// call sends a /v1 request and returns its status.
func call(b *testing.B, srv *tillServer, token, method, path, body string) int {
	b.Helper()
	req, err := http.NewRequest(method, srv.baseURL+path, strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// waitJob waits for the order's newest invoice job to complete and returns its run time.
func waitJob(b *testing.B, db *sql.DB, order string) time.Duration {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var state string
		var run sql.NullFloat64
		err := db.QueryRow(`SELECT state, extract(epoch FROM finished_at - attempted_at) FROM jobs
			WHERE kind = 'order.invoice' AND args->>'order_id' = $1 ORDER BY created_at DESC LIMIT 1`, order).Scan(&state, &run)
		if err != nil && err != sql.ErrNoRows {
			b.Fatal(err)
		}
		switch state {
		case "completed":
			return time.Duration(run.Float64 * float64(time.Second))
		case "discarded", "retryable":
			b.Fatalf("invoice job for %s is %s", order, state)
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.Fatalf("invoice job for %s did not complete", order)
	return 0
}

// renderTime is the median in-process render of a comparable invoice: the ceiling of the
// job, which also reads the order and writes the file.
func renderTime(b *testing.B) time.Duration {
	b.Helper()
	doc := invoice.Invoice{Number: "INV-0001", IssuedAt: time.Now(), Paid: true, Currency: "usd",
		Seller: invoice.Seller{Name: "Acme"}, Customer: invoice.Customer{Name: "Customer", Email: "c@example.com",
			Address: invoice.Address{Line1: "1 Main St", City: "Paris", Country: "FR"}},
		Items:          []invoice.Item{{Description: "Pro plan", Amount: 2000}},
		SubtotalAmount: 2000, NetAmount: 2000, TotalAmount: 2000}
	times := make([]time.Duration, 0, 50)
	for range 50 {
		start := time.Now()
		if _, err := invoice.RenderBytes(doc); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	return percentile(times, 0.5)
}

// renderSpan is how long after start the last order.updated event since start was rendered.
func renderSpan(b *testing.B, srv *tillServer, start time.Time) time.Duration {
	b.Helper()
	db, err := sql.Open("postgres", srv.dsn(b))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var last time.Time
	if err := db.QueryRow(`SELECT max(rendered_at) FROM domain_events WHERE type = 'order.updated' AND created_at >= $1`,
		start).Scan(&last); err != nil {
		b.Fatal(err)
	}
	return last.Sub(start)
}
