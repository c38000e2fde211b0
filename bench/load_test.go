package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// target is one endpoint under load. Connection i sends requests[i % len(requests)] over
// and over: each connection validates its own key, as the many installs of an application
// do, so the load measures the endpoint rather than lock waits on one hot row.
type target struct {
	name     string
	requests []request
	header   http.Header
}

// request is one connection's request: a POST of body unless method says otherwise, with
// the target's header unless header is set (each connection may carry its own token).
type request struct {
	url    string
	body   []byte
	method string
	header http.Header
}

// loadPlan is how hard and how long a target is driven.
type loadPlan struct {
	conns    int
	warmup   time.Duration
	duration time.Duration
}

// result is one target's measured window.
type result struct {
	target   string
	requests int           // successful requests that started inside the window
	elapsed  time.Duration // from the end of warm-up until the last request finished
	p50, p99 time.Duration
	// succeeded counts every 200, warm-up included, for comparing with what the database
	// recorded; failed counts every other status and transport error.
	succeeded int
	failed    int
	firstFail string
	cpu       cpuUse
}

// rate is successful requests per second in the measured window.
func (r result) rate() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.requests) / r.elapsed.Seconds()
}

// worker is one connection's loop. Its latencies are its own, preallocated, so the hot path
// takes no lock; they are merged when the run is over.
type worker struct {
	latencies []time.Duration
	succeeded int
	failed    int
	firstFail string
	lastDone  time.Time
}

// newClient gives every load goroutine its own keep-alive connection to the target.
func newClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxConnsPerHost:     conns,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}}
}

// do sends one request and reads the whole response so the connection is reused.
func (t target) do(ctx context.Context, client *http.Client, r request) (int, error) {
	resp, err := client.Do(t.newRequest(ctx, r))
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, err
}

// fetch sends one request and returns the response's body and status.
func (t target) fetch(ctx context.Context, client *http.Client, r request) ([]byte, int, error) {
	resp, err := client.Do(t.newRequest(ctx, r))
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return body, resp.StatusCode, err
}

// newRequest builds r: a POST unless r says otherwise, with r's header or else t's.
func (t target) newRequest(ctx context.Context, r request) *http.Request {
	method := r.method
	if method == "" {
		method = http.MethodPost
	}
	// The URL and method are the benchmark's own and always valid.
	req, _ := http.NewRequestWithContext(ctx, method, r.url, bytes.NewReader(r.body))
	req.Header = t.header
	if r.header != nil {
		req.Header = r.header
	}
	return req
}

// run sends requests back to back until end, keeping the latency of those that start after
// warmEnd.
func (w *worker) run(ctx context.Context, client *http.Client, t target, r request, warmEnd, end time.Time) {
	for {
		start := time.Now()
		if !start.Before(end) || ctx.Err() != nil {
			return
		}
		status, err := t.do(ctx, client, r)
		w.lastDone = time.Now()
		if err != nil || status != http.StatusOK {
			w.failed++
			if w.firstFail == "" {
				w.firstFail = fmt.Sprintf("status %d, error %v", status, err)
			}
			continue
		}
		w.succeeded++
		if !start.Before(warmEnd) {
			w.latencies = append(w.latencies, w.lastDone.Sub(start))
		}
	}
}

// runLoad drives t with plan.conns concurrent connections for the warm-up and then the
// measured window, sampling CPU use over the window.
func runLoad(ctx context.Context, t target, plan loadPlan, procs processes) result {
	client := newClient(plan.conns)
	defer client.CloseIdleConnections()
	// Sized for far more than two cores can serve, so append never grows on the hot path.
	perWorker := int(plan.duration.Seconds()*2000) + 1024
	workers := make([]*worker, plan.conns)
	begin := time.Now()
	warmEnd, end := begin.Add(plan.warmup), begin.Add(plan.warmup+plan.duration)
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{latencies: make([]time.Duration, 0, perWorker)}
		workers[i] = w
		r := t.requests[i%len(t.requests)]
		wg.Go(func() { w.run(ctx, client, t, r, warmEnd, end) })
	}
	time.Sleep(time.Until(warmEnd))
	before := procs.sample()
	time.Sleep(time.Until(end))
	after := procs.sample()
	wg.Wait()
	return summarize(t.name, workers, warmEnd, before.since(after))
}

// summarize merges the workers' latencies into one result.
func summarize(name string, workers []*worker, warmEnd time.Time, cpu cpuUse) result {
	r := result{target: name, cpu: cpu}
	var all []time.Duration
	last := warmEnd
	for _, w := range workers {
		all = append(all, w.latencies...)
		r.succeeded += w.succeeded
		r.failed += w.failed
		if r.firstFail == "" {
			r.firstFail = w.firstFail
		}
		if w.lastDone.After(last) {
			last = w.lastDone
		}
	}
	slices.Sort(all)
	r.requests = len(all)
	r.elapsed = last.Sub(warmEnd)
	r.p50, r.p99 = percentile(all, 0.50), percentile(all, 0.99)
	return r
}

// percentile is the nearest-rank percentile of sorted latencies, 0 for none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
