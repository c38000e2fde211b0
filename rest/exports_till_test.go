package rest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestTillExportsTakeTheListsFiltersInBothFormats(t *testing.T) {
	w := newExportWorld(t)
	w.s.Exec(t, `INSERT INTO events (organization_id, name, source, customer_id, "timestamp", metadata)
		VALUES ($1, '@cmd', 'user', $2, '2026-03-01T10:00:00Z', '{"tokens": 12}')`, w.org.ID, w.customer)
	for _, tt := range []struct {
		name, target string
		rows         int
		has          []string
	}{
		{"an order CSV neutralizes a formula a person wrote", "/export/orders.csv", 1,
			[]string{"id,created_at,status,billing_reason,organization_id,customer_id,customer_email,product_id,description,",
				",'=SUM(A1),", ",2026-03-01T23:30:00Z,paid,purchase,"}},
		{"an order CSV filters by the list's status", "/export/orders.csv?status=refunded", 0, nil},
		{"an order CSV filters by another organization's customer to nothing", "/export/orders.csv?customer_id=" + w.otherOrder.String(), 0, nil},
		{"an order JSON lines export writes the text as it is", "/export/orders.jsonl", 1,
			[]string{`"description":"=SUM(A1)"`, `"net_amount":1999`, `"created_at":"2026-03-01T23:30:00Z"`, `"invoice_number":"INV-1"`}},
		{"a subscription export sorts and filters like the list", "/export/subscriptions.jsonl?sorting=-started_at&status=active", 1,
			[]string{`"recurring_interval_count":3`, `"product_name":"Pro plan"`}},
		{"a customer export filters by email", "/export/customers.csv?email=ADA@example.com", 1, []string{`"Ada, ""the first"""`}},
		{"a customer export filters by another organization to nothing", "/export/customers.jsonl?organization_id=" + w.other.ID.String(), 0, nil},
		{"an events CSV neutralizes an event name", "/export/events.csv?name=@cmd", 1, []string{",'@cmd,user,"}},
		{"an events JSON lines export keeps metadata as JSON", "/export/events.jsonl?source=user", 1, []string{`"metadata":{"tokens":12}`}},
		{"a metrics CSV has a column per metric asked for, headed by its slug", "/export/metrics.csv?start_date=2026-03-01&end_date=2026-03-02" +
			"&interval=day&metrics=revenue&metrics=orders", 2, []string{"timestamp,orders,revenue\r\n2026-03-01T00:00:00Z,1,1999\r\n"}},
		{"a metrics JSON lines export has a period per line", "/export/metrics.jsonl?start_date=2026-03-01&end_date=2026-03-02" +
			"&interval=day&metrics=revenue", 2, []string{`{"timestamp":"2026-03-01T00:00:00Z","revenue":1999}` + "\n" +
			`{"timestamp":"2026-03-02T00:00:00Z","revenue":0}`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, h, body := w.get(t, w.org.Token, tt.target)
			if code != http.StatusOK {
				t.Fatalf("%d %s", code, body)
			}
			lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
			if strings.HasSuffix(tt.target, ".csv") || strings.Contains(tt.target, ".csv?") {
				lines = lines[1:] // the header
			} else {
				for _, l := range lines {
					if l != "" && !json.Valid([]byte(l)) {
						t.Errorf("not JSON: %s", l)
					}
				}
				if body == "" {
					lines = nil
				}
			}
			if len(lines) != tt.rows {
				t.Errorf("%d rows, want %d:\n%s", len(lines), tt.rows, body)
			}
			for _, s := range tt.has {
				if !strings.Contains(body, s) {
					t.Errorf("no %q in\n%s", s, body)
				}
			}
			if strings.Contains(body, w.other.ID.String()) {
				t.Errorf("another organization's rows:\n%s", body)
			}
			if !strings.HasPrefix(h.Get("Content-Type"), "text/csv; charset=utf-8") && !strings.HasPrefix(h.Get("Content-Type"), "application/jsonl") {
				t.Errorf("Content-Type %q", h.Get("Content-Type"))
			}
		})
	}
}

// cloneOrders adds n copies of an order, each a millisecond older than the last.
func cloneOrders(t *testing.T, s *v1, order uuid.UUID, n int) {
	t.Helper()
	var cols []string
	if err := s.DB.Select(&cols, `SELECT column_name FROM information_schema.columns WHERE table_name = 'orders'
		AND table_schema = current_schema() AND is_generated = 'NEVER' AND column_name NOT IN
		('id', 'created_at', 'invoice_number', 'receipt_number') ORDER BY ordinal_position`); err != nil {
		t.Fatal(err)
	}
	list := strings.Join(cols, ", ")
	// Numbered already, so that the per-order numbering trigger has nothing to draw.
	s.Exec(t, `INSERT INTO orders (created_at, invoice_number, receipt_number, `+list+`)
		SELECT o.created_at - g * interval '1 millisecond', 'BULK-' || g, 'RCPT-BULK-' || g, `+list+`
		FROM orders o, generate_series(1, $2) g WHERE o.id = $1`, order, n)
}

func TestALargeExportStreamsEveryRow(t *testing.T) {
	w := newExportWorld(t)
	cloneOrders(t, w.s, w.order, 50_000)
	srv := httptest.NewServer(w.s.h)
	defer srv.Close()
	for _, path := range []string{"/export/orders.csv", "/v1/orders/export"} {
		t.Run(path+" sends a header and 50001 orders", func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
			req.Header.Set("Authorization", "Bearer "+w.org.Token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.ContentLength != -1 {
				t.Errorf("Content-Length %d: the answer was not streamed", resp.ContentLength)
			}
			lines := 0
			sc := bufio.NewScanner(resp.Body) // one line held at a time
			for sc.Scan() {
				lines++
			}
			if err := sc.Err(); err != nil || lines != 50_002 {
				t.Errorf("%d lines (%v), want 50002", lines, err)
			}
		})
	}
}

func TestAClientThatDisconnectsCancelsTheExportsQuery(t *testing.T) {
	w := newExportWorld(t)
	cloneOrders(t, w.s, w.order, 50_000)
	srv := httptest.NewServer(w.s.h)
	defer srv.Close()
	var rollbacksBefore int64
	w.s.Get(t, &rollbacksBefore, `SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database()`)

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/export/orders.jsonl", nil)
	req.Header.Set("Authorization", "Bearer "+w.org.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	// The client stops reading: the server fills the connection and waits on it.
	exporting := func() bool {
		var n int
		w.s.Get(t, &n, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'active'
			AND query LIKE '%FROM orders o%' AND pid <> pg_backend_pid()`)
		return n > 0
	}
	if !waitFor(5*time.Second, exporting) {
		t.Fatal("the export's query is not running")
	}
	cancel()
	_ = resp.Body.Close()
	if !waitFor(5*time.Second, func() bool { return !exporting() }) {
		t.Fatal("the export's query still runs after the client left")
	}
	// A backend reports its transactions to the statistics at most every PGSTAT_IDLE_INTERVAL
	// (10 s) once idle, so the rollback may show that late.
	canceled := waitFor(25*time.Second, func() bool {
		var n int64
		w.s.Get(t, &n, `SELECT xact_rollback FROM (SELECT pg_stat_clear_snapshot()) c, pg_stat_database
			WHERE datname = current_database()`)
		return n > rollbacksBefore
	})
	if !canceled {
		t.Error("the export's query ran to its end instead of being canceled")
	}
}

// waitFor polls cond until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}
