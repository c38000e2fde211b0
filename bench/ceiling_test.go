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

	_ "github.com/lib/pq" // the PostgreSQL driver

	"till/storage"
)

// ceilingSQL is the least a validation must do: one single-row write that returns what it
// wrote. No endpoint that records validations can beat a bare HTTP handler running it.
const ceilingSQL = `UPDATE license_keys SET validations = validations + 1 WHERE id = $1 RETURNING validations`

// ceiling is the bare Go endpoint that bounds every writing endpoint on this database.
type ceiling struct {
	url string
	db  *sql.DB
}

// startCeiling opens the database with the server's pool size, prepares ceilingSQL and
// serves it at a loopback address until the benchmark ends.
func startCeiling(b *testing.B, dsn, keyID string, poolSize int) *ceiling {
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
	srv := &http.Server{Handler: ceilingHandler(stmt, keyID), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() {
		_ = srv.Close()
		_ = stmt.Close()
		_ = db.Close()
	})
	return &ceiling{url: "http://" + ln.Addr().String() + "/", db: db}
}

// ceilingHandler reads and discards the request, runs the prepared update for one fixed key
// and answers a small JSON object.
func ceilingHandler(stmt *sql.Stmt, keyID string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		var n int64
		if err := stmt.QueryRowContext(r.Context(), keyID).Scan(&n); err != nil {
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

// validations reads the key's validation counter, to check afterwards that every successful
// request really wrote.
func (c *ceiling) validations(b *testing.B, keyID string) int64 {
	b.Helper()
	var n int64
	if err := c.db.QueryRow(`SELECT validations FROM license_keys WHERE id = $1`, keyID).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}
