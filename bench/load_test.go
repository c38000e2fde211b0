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

// request is one connection's POST.
type request struct {
	url  string
	body []byte
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
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(r.body))
	if err != nil {
		return 0, err
	}
	req.Header = t.header
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, err
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
