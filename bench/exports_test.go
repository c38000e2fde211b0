package bench_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/auth"
	"till/resolvers/resolverstest"
	"till/rest"
	"till/storage/storagetest"
)

// TestMain lets the export benchmark use a private test database (storagetest).
func TestMain(m *testing.M) { os.Exit(storagetest.Main(m)) }

// BenchmarkExport streams an export of 100,000 and 1,000,000 orders (BENCH_EXPORT_ROWS, comma
// separated, to change) through the real /export and /v1 handlers in process, and reports
// rows per second against the ceiling of reading the same rows with a plain SELECT on the same
// database, the bytes allocated per row and the peak heap while streaming: a streamed export
// keeps the heap flat whatever its size.
func BenchmarkExport(b *testing.B) {
	sizes := []int{100_000, 1_000_000}
	if v := os.Getenv("BENCH_EXPORT_ROWS"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatal(err)
			}
			sizes = append(sizes, n)
		}
	}
	app := resolverstest.NewApp(b, storagetest.New(b))
	h, err := rest.New(app.Resolver, auth.Middleware(app.Resolver, app.Secret), app.Deps.Logger)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	report := os.Stdout // each line as soon as it is measured, a long run shows its progress
	fmt.Fprintf(report, "\n%-22s %10s %12s %9s %12s %14s\n", "export", "rows", "rows/s", "× ceiling", "alloc B/row", "peak heap MiB")
	for _, n := range sizes {
		org := app.NewOrg(b, resolverstest.AllScopes)
		seedOrders(b, app, org.ID, n)
		ceiling := ceilingRate(b, app.DB, org.ID)
		for _, path := range []string{"/export/orders.csv", "/export/orders.jsonl", "/v1/orders/export"} {
			rate, perRow, peak := measureExport(b, srv.URL+path, org.Token, n)
			fmt.Fprintf(report, "%-22s %10d %12.0f %9.2f %12.0f %14.1f\n", path, n, rate, rate/ceiling, perRow, peak)
		}
		fmt.Fprintf(report, "%-22s %10d %12.0f\n", "ceiling: plain SELECT", n, ceiling)
	}
}

// seedOrders stores n paid orders of org, each with its own customer row read by the join.
func seedOrders(b *testing.B, app *resolverstest.App, org uuid.UUID, n int) {
	b.Helper()
	c := app.NewCustomer(b, org, "")
	p := app.NewProduct(b, org, "Bench plan")
	o := app.NewPaidOrder(b, org, c.ID, p.ID, nil)
	var cols []string
	if err := app.DB.Select(&cols, `SELECT column_name FROM information_schema.columns WHERE table_name = 'orders'
		AND table_schema = current_schema() AND is_generated = 'NEVER' AND column_name NOT IN
		('id', 'created_at', 'invoice_number', 'receipt_number') ORDER BY ordinal_position`); err != nil {
		b.Fatal(err)
	}
	list := strings.Join(cols, ", ")
	app.Exec(b, `INSERT INTO orders (created_at, invoice_number, receipt_number, `+list+`)
		SELECT o.created_at - g * interval '1 millisecond', 'B-' || g, 'RB-' || g, `+list+`
		FROM orders o, generate_series(1, $2) g WHERE o.id = $1`, o, n-1)
	app.Exec(b, `ANALYZE orders`)
}

// ceilingRate reads the export's rows (the order list's query and joins) with a plain SELECT
// into raw bytes, the fastest any export over lib/pq can go, in rows per second.
func ceilingRate(b *testing.B, db *sqlx.DB, org uuid.UUID) float64 {
	b.Helper()
	start := time.Now()
	rows, err := db.QueryContext(context.Background(), `SELECT o.*, c.email, c.name, p.name FROM orders o
		LEFT JOIN customers c ON c.id = o.customer_id LEFT JOIN products p ON p.id = o.product_id
		WHERE o.organization_id = $1 AND o.deleted_at IS NULL ORDER BY o.created_at DESC, o.id DESC`, org)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	raw := make([]sql.RawBytes, len(cols))
	dest := make([]any, len(cols))
	for i := range raw {
		dest[i] = &raw[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return float64(n) / time.Since(start).Seconds()
}

// measureExport downloads an export, counting its lines, and returns rows per second, bytes
// allocated per row by the whole process and the peak heap in MiB, sampled every 5 ms.
func measureExport(b *testing.B, url, token string, rows int) (rate, perRow, peakMiB float64) {
	b.Helper()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	lines := &lineCounter{}
	_, err = io.Copy(lines, resp.Body)
	resp.Body.Close()
	elapsed := time.Since(start)
	close(stop)
	<-sampled
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("%s: %d %v", url, resp.StatusCode, err)
	}
	if got := lines.n - 1; got != rows && lines.n != rows { // CSV has a header line
		b.Fatalf("%s: %d lines for %d rows", url, lines.n, rows)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return float64(rows) / elapsed.Seconds(), float64(after.TotalAlloc-before.TotalAlloc) / float64(rows),
		float64(peak.Load()) / (1 << 20)
}

// lineCounter counts the lines written to it and keeps nothing.
type lineCounter struct{ n int }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.n += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}
