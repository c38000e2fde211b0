package bench

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/lib/pq"

	"till/storage"
)

// ceilingSQL is the least a validation must do: one single-row write that returns what it
// wrote. No endpoint that records validations can beat a bare HTTP handler running it. The
// key id comes in the URL (?id=), so the handler parses nothing.
const ceilingSQL = `UPDATE license_keys SET validations = validations + 1 WHERE id = $1 RETURNING validations`

// ceiling is the bare Go endpoint that bounds every writing endpoint on this database.
type ceiling struct {
	url string
	db  *sql.DB
}

// startCeiling opens the database with the server's pool size, prepares ceilingSQL and
// serves it at a loopback address until the benchmark ends.
func startCeiling(b *testing.B, dsn string, poolSize int) *ceiling {
	b.Helper()
	db, err := sql.Open("postgres", storage.WithBinaryParameters(dsn))
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(poolSize)
	db.SetMaxIdleConns(poolSize)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stmt, err := db.PrepareContext(ctx, ceilingSQL)
	if err != nil {
		db.Close()
		b.Fatalf("preparing the ceiling statement: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		db.Close()
		b.Fatal(err)
	}
	srv := &http.Server{Handler: ceilingHandler(stmt), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() {
		_ = srv.Close()
		_ = stmt.Close()
		_ = db.Close()
	})
	return &ceiling{url: "http://" + ln.Addr().String() + "/", db: db}
}

// ceilingHandler reads and discards the request, runs the prepared update for the key named
// in the URL and answers a small JSON object.
func ceilingHandler(stmt *sql.Stmt) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		var n int64
		if err := stmt.QueryRowContext(r.Context(), r.URL.Query().Get("id")).Scan(&n); err != nil {
			status := http.StatusInternalServerError
			if errors.Is(err, sql.ErrNoRows) {
				status = http.StatusNotFound
			}
			http.Error(w, err.Error(), status)
			return
		}
		buf := make([]byte, 0, 32)
		buf = append(buf, `{"validations":`...)
		buf = strconv.AppendInt(buf, n, 10)
		buf = append(buf, "}\n"...)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(buf)
	}
}

// validations sums the keys' validation counters, to check afterwards that every
// successful request really wrote.
func (c *ceiling) validations(b *testing.B, keys []benchKey) int64 {
	b.Helper()
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = k.ID
	}
	var n int64
	if err := c.db.QueryRow(`SELECT sum(validations) FROM license_keys WHERE id = ANY($1)`, pq.Array(ids)).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

// cloneKeys issues n keys like k (same organization, benefit, customer and terms), each with
// its own text, for the connections to validate one each.
func (c *ceiling) cloneKeys(b *testing.B, k benchKey, n int) []benchKey {
	b.Helper()
	rows, err := c.db.Query(`INSERT INTO license_keys (organization_id, benefit_id, customer_id, key, limit_activations, expires_at)
		SELECT organization_id, benefit_id, customer_id, 'BENCH-' || i || '-' || gen_random_uuid(), limit_activations, expires_at
		FROM license_keys, generate_series(1, $2) AS i WHERE id = $1
		RETURNING id, key, status`, k.ID, n)
	if err != nil {
		b.Fatalf("issuing bench keys: %v", err)
	}
	defer rows.Close()
	var keys []benchKey
	for rows.Next() {
		var bk benchKey
		if err := rows.Scan(&bk.ID, &bk.Key, &bk.Status); err != nil {
			b.Fatal(err)
		}
		keys = append(keys, bk)
	}
	if err := rows.Err(); err != nil || len(keys) != n {
		b.Fatalf("issued %d of %d bench keys: %v", len(keys), n, err)
	}
	// Statistics as autovacuum would gather them after a bulk load: without any, the planner
	// may find a key through the (organization, status) index and filter every key of the
	// organization instead of using the unique (organization, key) index.
	if _, err := c.db.Exec(`ANALYZE license_keys`); err != nil {
		b.Fatal(err)
	}
	return keys
}
