package storage_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// onOneConn opens a pool of one connection on a fresh database with the given cache size,
// so that every statement of a test runs on the same server session.
func onOneConn(t *testing.T, size int) *sqlx.DB {
	t.Helper()
	return oneConnOf(t, storage.OpenCached, size)
}

// oneConnOf is onOneConn for the pool open opens.
func oneConnOf(t *testing.T, open func(dsn string, size int) (*sqlx.DB, error), size int) *sqlx.DB {
	t.Helper()
	db, err := open(storagetest.DSN(t), size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return db
}

// preparedTexts lists the statements prepared on the pool's one connection.
func preparedTexts(t *testing.T, db *sqlx.DB) []string {
	t.Helper()
	var texts []string
	if err := db.Select(&texts, `SELECT statement FROM pg_prepared_statements ORDER BY prepare_time`); err != nil {
		t.Fatal(err)
	}
	return texts
}

func TestStatementCachePreparesStatementsWithArgumentsOncePerConnection(t *testing.T) {
	tests := []struct {
		name     string
		size     int
		run      []string // each run with one argument
		wantKept int
	}{
		{name: "a statement run three times is prepared once", size: 4,
			run: []string{"SELECT $1::int + 1", "SELECT $1::int + 1", "SELECT $1::int + 1"}, wantKept: 1},
		{name: "distinct statements each keep their own", size: 4,
			run: []string{"SELECT $1::int + 1", "SELECT $1::int + 2", "SELECT $1::int + 3"}, wantKept: 3},
		{name: "beyond the size the least recently used are closed", size: 2,
			run: []string{"SELECT $1::int + 1", "SELECT $1::int + 2", "SELECT $1::int + 3", "SELECT $1::int + 4"}, wantKept: 2},
		{name: "a size of 0 prepares nothing", size: 0,
			run: []string{"SELECT $1::int + 1", "SELECT $1::int + 1"}, wantKept: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := onOneConn(t, tc.size)
			for i, q := range tc.run {
				var got int
				if err := db.Get(&got, q, i); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				if want := i + int(q[len(q)-1]-'0'); got != want {
					t.Fatalf("%s with %d = %d, want %d", q, i, got, want)
				}
			}
			// The listing itself has no argument, so it is not prepared.
			kept := preparedTexts(t, db)
			if len(kept) != tc.wantKept {
				t.Fatalf("prepared on the connection: %q, want %d statements", kept, tc.wantKept)
			}
			if tc.size > 0 && kept[len(kept)-1] != tc.run[len(tc.run)-1] {
				t.Fatalf("the last statement run is not kept: %q", kept)
			}
		})
	}
}

// A table altered under a prepared SELECT * changes its result columns, which PostgreSQL
// refuses to run from the old statement: outside a transaction the statement is prepared
// again and answers; inside one the error is the transaction's, and the next run after it
// is prepared afresh.
func TestStatementCacheRecoversFromATableAlteredUnderIt(t *testing.T) {
	db := onOneConn(t, 8)
	ctx := context.Background()
	mustExec(t, db, `CREATE TABLE altered (id int PRIMARY KEY, a text)`)
	mustExec(t, db, `INSERT INTO altered VALUES (1, 'x')`)
	const q = `SELECT * FROM altered WHERE id = $1`
	cols := func() int {
		rows, err := db.QueryxContext(ctx, q, 1)
		if err != nil {
			t.Fatalf("after ALTER: %v", err)
		}
		defer rows.Close()
		c, _ := rows.Columns()
		return len(c)
	}
	if n := cols(); n != 2 {
		t.Fatalf("%d columns, want 2", n)
	}
	mustExec(t, db, `ALTER TABLE altered ADD COLUMN b text`)
	if n := cols(); n != 3 {
		t.Fatalf("%d columns after adding one, want 3", n)
	}

	mustExec(t, db, `ALTER TABLE altered ADD COLUMN c text`)
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.QueryxContext(ctx, q, 1); err == nil {
		t.Fatal("a stale statement ran inside a transaction; want PostgreSQL's refusal")
	}
	_ = tx.Rollback()
	if n := cols(); n != 4 {
		t.Fatalf("%d columns after the failed transaction, want 4", n)
	}
}

// Many goroutines share a small pool and a smaller cache: every answer is the one its own
// arguments call for, whichever connection and statement served it.
func TestStatementCacheUnderConcurrentUse(t *testing.T) {
	db, err := storage.OpenCached(storagetest.DSN(t), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(4)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for g := range 32 {
		wg.Go(func() {
			for i := range 50 {
				k := (g + i) % 7
				var got int
				if err := db.Get(&got, fmt.Sprintf("SELECT $1::int * %d", k), g); err != nil {
					errs <- err
					return
				}
				if got != g*k {
					errs <- fmt.Errorf("goroutine %d: %d * %d = %d", g, g, k, got)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func mustExec(t *testing.T, db *sqlx.DB, q string) sql.Result {
	t.Helper()
	res, err := db.Exec(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return res
}

// Every connection Till opens has JIT compilation off, cached or not: the metrics statement
// relies on it (storage.sessionSettings), and on a fresh connection of a server whose
// default is on, each new connection must set it again. The analytical pool's connections
// also plan generically (storage.analyticsSettings).
func TestEveryConnectionHasItsSettings(t *testing.T) {
	analytics := func(t *testing.T, size int) *sqlx.DB { return oneConnOf(t, storage.OpenAnalytics, size) }
	tests := []struct {
		pool string
		open func(*testing.T, int) *sqlx.DB
		plan string
	}{
		{"main", onOneConn, "auto"},
		{"analytics", analytics, "force_generic_plan"},
	}
	for _, tt := range tests {
		for _, size := range []int{0, storage.DefaultStatementCache} {
			t.Run(fmt.Sprintf("%s pool, cache size %d", tt.pool, size), func(t *testing.T) {
				db := tt.open(t, size)
				for range 2 {
					var jit, plan string
					if err := db.QueryRow(`SELECT current_setting('jit'), current_setting('plan_cache_mode')`).Scan(&jit, &plan); err != nil {
						t.Fatal(err)
					}
					if jit != "off" || plan != tt.plan {
						t.Fatalf("jit = %s, plan_cache_mode = %s on a connection of the pool, want off and %s", jit, plan, tt.plan)
					}
					// A closed connection is replaced by a new one, which must set them too.
					conn, err := db.Conn(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					_ = conn.Raw(func(any) error { return driver.ErrBadConn })
					_ = conn.Close()
				}
			})
		}
	}
}
