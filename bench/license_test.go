// Package bench holds load benchmarks that run the real till binary against its embedded
// PostgreSQL on loopback. They only report: speed is never asserted, so a slow machine never
// fails a build. Run them with
//
//	go test -run '^$' -bench LicenseValidate ./bench/
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

// Load shape: 64 concurrent keep-alive connections, a warm-up whose requests are not
// measured, then a measured window of BENCH_DURATION (default 10s) per target.
const (
	benchConns      = 64
	benchWarmup     = 2 * time.Second
	defaultDuration = 10 * time.Second
)

// benchDuration is the measured window per target, from BENCH_DURATION.
func benchDuration(b *testing.B) time.Duration {
	b.Helper()
	v := os.Getenv("BENCH_DURATION")
	if v == "" {
		return defaultDuration
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		b.Fatalf("BENCH_DURATION=%q: want a positive duration such as 5s", v)
	}
	return d
}

// BenchmarkLicenseValidate drives the organization's and the public license-key validation
// of a running `till serve` at 64 connections, each validating a key of its own, between
// two runs of the ceiling: a bare endpoint doing one prepared single-row UPDATE … RETURNING
// on the same database for the same keys. It reports
// req/s, p50 and p99 per target and each validation's ratio to the mean of the two ceilings.
// Every request must succeed, and every success must have been written to the key.
func BenchmarkLicenseValidate(b *testing.B) {
	duration := benchDuration(b)
	srv := startTill(b)
	seed := srv.demo(b)
	ceil := startCeiling(b, srv.dsn(b), serverPoolSize)
	keys := ceil.cloneKeys(b, srv.pickKey(b, seed), benchConns)

	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	orgHeader := jsonHeader.Clone()
	orgHeader.Set("Authorization", "Bearer "+seed.OrganizationToken)
	var ceilingReqs, orgReqs, publicReqs []request
	for _, k := range keys {
		body, _ := json.Marshal(map[string]string{"key": k.Key, "organization_id": seed.Organization.ID})
		ceilingReqs = append(ceilingReqs, request{url: ceil.url + "?id=" + k.ID, body: body})
		orgReqs = append(orgReqs, request{url: srv.baseURL + "/v1/license-keys/validate", body: body})
		publicReqs = append(publicReqs, request{url: srv.baseURL + "/v1/customer-portal/license-keys/validate", body: body})
	}
	targets := []target{
		{name: "ceiling", requests: ceilingReqs, header: jsonHeader},
		{name: "org", requests: orgReqs, header: orgHeader},
		{name: "public", requests: publicReqs, header: jsonHeader},
		{name: "ceiling-again", requests: ceilingReqs, header: jsonHeader},
	}
	ctx := context.Background()
	for _, t := range targets[1:3] {
		preflight(b, ctx, t, keys[0].ID)
	}
	before := ceil.validations(b, keys)

	plan := loadPlan{conns: benchConns, warmup: benchWarmup, duration: duration}
	procs := processes{till: srv.cmd.Process.Pid}
	b.ResetTimer()
	results := make([]result, 0, len(targets))
	for _, t := range targets {
		results = append(results, runLoad(ctx, t, plan, procs))
	}
	b.StopTimer()

	ceilingRate := (results[0].rate() + results[3].rate()) / 2
	b.Log("\n" + table(results, ceilingRate, plan, len(keys)) + peakRSSLine(procs.till))
	report(b, results, ceilingRate)
	checkOutcome(b, results, ceil.validations(b, keys)-before)
}

// preflight sends one request to a validation endpoint and checks that it validated the
// chosen key, so the load that follows measures successes and not a stream of errors.
func preflight(b *testing.B, ctx context.Context, t target, keyID string) {
	b.Helper()
	client := newClient(1)
	defer client.CloseIdleConnections()
	r := t.requests[0]
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, strings.NewReader(string(r.body)))
	if err != nil {
		b.Fatal(err)
	}
	req.Header = t.header.Clone()
	resp, err := client.Do(req)
	if err != nil {
		b.Fatalf("%s: %v", t.name, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var got struct {
		ID          string `json:"id"`
		Validations int64  `json:"validations"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &got) != nil || got.ID != keyID || got.Validations < 1 {
		b.Fatalf("%s: POST %s answered %d: %s", t.name, r.url, resp.StatusCode, raw)
	}
}

// table renders the results for people: one row per target in run order.
func table(results []result, ceilingRate float64, plan loadPlan, keys int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d connections, %s warm-up, %s measured per target, %d keys (one per connection)\n",
		plan.conns, plan.warmup, plan.duration, keys)
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\treq/s\tp50 ms\tp99 ms\tratio\tnon-200\tcpu bench\tcpu till\tcpu pg\tmachine busy\t")
	for _, r := range results {
		cpu := "-\t-\t-\t-\t"
		if r.cpu.ok {
			cpu = fmt.Sprintf("%.2f\t%.2f\t%.2f\t%.0f%%\t", r.cpu.bench, r.cpu.till, r.cpu.pg, 100*r.cpu.busy)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.2f\t%.2f\t%d\t%s\n", r.target, r.rate(), ms(r.p50), ms(r.p99),
			ratio(r.rate(), ceilingRate), r.failed, cpu)
	}
	_ = tw.Flush()
	sb.WriteString("ratio: req/s over the mean of the two ceiling runs; cpu: cores used by the load generator\n" +
		"(and the ceiling handler on ceiling rows), till serve and PostgreSQL during the measured window")
	return sb.String()
}

// report publishes the figures as benchmark metrics, named by target, so that benchstat can
// compare runs; the whole-run ns/op would mean nothing and is suppressed.
func report(b *testing.B, results []result, ceilingRate float64) {
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ceilingRate, "ceiling-req/s")
	for _, r := range results {
		if r.target == "ceiling" || r.target == "ceiling-again" {
			continue
		}
		b.ReportMetric(r.rate(), r.target+"-req/s")
		b.ReportMetric(ms(r.p50), r.target+"-p50-ms")
		b.ReportMetric(ms(r.p99), r.target+"-p99-ms")
		b.ReportMetric(ratio(r.rate(), ceilingRate), r.target+"-ratio")
	}
}

// checkOutcome fails the benchmark when any request failed, or when the key's counter did
// not grow by exactly the number of successes (one write per successful validation).
func checkOutcome(b *testing.B, results []result, written int64) {
	b.Helper()
	var succeeded int64
	for _, r := range results {
		if r.failed > 0 {
			b.Errorf("%s: %d requests did not answer 200; first: %s", r.target, r.failed, r.firstFail)
		}
		succeeded += int64(r.succeeded)
	}
	if written != succeeded {
		b.Errorf("the key's validations grew by %d, but %d requests succeeded", written, succeeded)
	}
	if b.Failed() {
		b.FailNow()
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ratio(rate, ceiling float64) float64 {
	if ceiling <= 0 {
		return 0
	}
	return rate / ceiling
}
