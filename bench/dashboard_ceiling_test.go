package bench

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
)

// dashboardCeiling is the hand-written endpoint each dashboard case is measured against:
// one prepared statement per page, which finds the caller by its token's stored hash and
// has PostgreSQL build the whole JSON answer, so a request is one round trip and the Go
// side only copies bytes. No GraphQL, no loaders, no per-field work: the least any server
// can do to read the same rows on this database.
type dashboardCeiling struct {
	url string
}

// ceilingPage is one route of the ceiling: its statement and how a request's arguments
// follow the token's hash.
type ceilingPage struct {
	path string
	sql  string
	args func(r *http.Request, hash string) ([]any, error)
}

// startDashboardCeiling prepares the ceiling's statements on a pool of the server's size
// and serves them on loopback until the benchmark ends:
//
//	GET /order?id=…         orderSQL
//	GET /customers?page=…   customersPageSQL over tillCustomerRelations
//	GET /customers-all?page=… the same over all of customerRelations
//	GET /me                 portalSQL
//
// The caller's token is the stored hash of a Till token, as `Authorization: Bearer <hash>`.
func startDashboardCeiling(b *testing.B, db *sqlx.DB) *dashboardCeiling {
	b.Helper()
	hashFirst := func(r *http.Request, hash string) ([]any, error) { return []any{hash}, nil }
	pageOffset := func(r *http.Request, hash string) ([]any, error) {
		page, err := strconv.Atoi(r.URL.Query().Get("page"))
		if err != nil || page < 1 {
			return nil, errors.New("page: want a positive integer")
		}
		return []any{hash, (page - 1) * 50}, nil
	}
	pages := []ceilingPage{
		{path: "/order", sql: orderSQL, args: func(r *http.Request, hash string) ([]any, error) {
			return []any{r.URL.Query().Get("id"), hash}, nil
		}},
		{path: "/customers", sql: customersPageSQL(relationsNamed(tillCustomerRelations)), args: pageOffset},
		{path: "/customers-all", sql: customersPageSQL(customerRelations), args: pageOffset},
		{path: "/me", sql: portalSQL, args: hashFirst},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mux := http.NewServeMux()
	for _, p := range pages {
		stmt, err := db.PreparexContext(ctx, p.sql)
		if err != nil {
			b.Fatalf("preparing the ceiling's %s: %v", p.path, err)
		}
		b.Cleanup(func() { _ = stmt.Close() })
		mux.Handle("GET "+p.path, ceilingPageHandler(stmt, p.args))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	return &dashboardCeiling{url: "http://" + ln.Addr().String()}
}

// ceilingPageHandler runs stmt for the caller's token and writes the JSON it returns: 401
// without a token, 404 when the statement finds nothing for it.
func ceilingPageHandler(stmt *sqlx.Stmt, args func(*http.Request, string) ([]any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		hash, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || hash == "" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		a, err := args(r, hash)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var body []byte
		if err := stmt.QueryRowContext(r.Context(), a...).Scan(&body); err != nil {
			status := http.StatusInternalServerError
			if errors.Is(err, sql.ErrNoRows) {
				status = http.StatusNotFound
			}
			http.Error(w, err.Error(), status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}
}
