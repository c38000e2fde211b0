package rest_test

import (
	"fmt"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// ingestBody is an ingest body of small events just under limit bytes, and its event count.
func ingestBody(limit int) (string, int) {
	var sb strings.Builder
	sb.WriteString(`{"events":[`)
	n := 0
	for {
		item := fmt.Sprintf(`{"name":"api_call","external_customer_id":"c-%d","metadata":{"tokens":%d}}`, n%100, n%1000)
		if sb.Len()+len(item)+3 > limit {
			break
		}
		if n > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(item)
		n++
	}
	sb.WriteString(`]}`)
	return sb.String(), n
}

// heapPeak samples the live heap until stop is called and returns the highest value seen
// above the heap at the start.
func heapPeak() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if v := read(); v > peak.Load() {
					peak.Store(v)
				}
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		if p := peak.Load(); p > base {
			return p - base
		}
		return 0
	}
}

// BenchmarkIngestMemory posts a 10 MiB batch of small events to /v1/events/ingest through
// the real handler and reports, besides -benchmem's allocations, the peak live heap the
// request added and both as multiples of the body size: upstream caps only the body, so
// memory must stay a small multiple of it whatever the number of events.
func BenchmarkIngestMemory(b *testing.B) {
	f := newEventsFixture(b)
	body, events := ingestBody(10 << 20)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	var worst uint64
	b.ResetTimer()
	for range b.N {
		stop := heapPeak()
		rec := f.s.do(b, call{method: http.MethodPost, target: "/v1/events/ingest", token: f.org.Token, body: body})
		peak := stop()
		if rec.Code != http.StatusOK {
			b.Fatalf("ingest answered %d: %.300s", rec.Code, rec.Body)
		}
		worst = max(worst, peak)
	}
	b.StopTimer()
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(float64(worst), "peak-heap-B")
	b.ReportMetric(float64(worst)/float64(len(body)), "peak/body")
}
