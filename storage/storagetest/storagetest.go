// Package storagetest gives each test its own fresh, fully migrated PostgreSQL database, so
// tests run against the real schema and real constraints (never a mock), in parallel, without
// seeing each other's rows.
//
// Databases are cloned from a template that is migrated once per schema version, which costs a
// few milliseconds per test instead of a full migration. The server is TEST_DATABASE_URL when
// set; otherwise the first test that asks starts a private cluster through pgembed (in
// /dev/shm when it is roomy, else the temp dir), so `go test ./...` needs nothing running. Packages that use New or DSN must route their
// TestMain through Main, which stops that cluster and removes its files:
//
//	func TestMain(m *testing.M) { os.Exit(storagetest.Main(m)) }
package storagetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"till/internal/pgembed"
	"till/storage"
)

// EnvURL names the environment variable that points tests at an existing server (any lib/pq
// DSN or postgres:// URL of a role that may create databases) instead of a private cluster.
const EnvURL = "TEST_DATABASE_URL"

// server is what every test of one test process shares: the server, a pool on its maintenance
// database for CREATE and DROP DATABASE, and the migrated template.
type server struct {
	dsn      string // the maintenance database
	admin    *sql.DB
	template string
	cluster  *pgembed.Cluster // nil when EnvURL names the server
	tmpDir   string           // the private cluster's directory, removed by Main
}

// process is package state because it is shared by TestMain and by tests that cannot pass it
// to each other: the one server per test binary, started lazily by the first test that needs
// it and stopped by Main.
var process struct {
	mainRunning atomic.Bool

	once sync.Once
	srv  *server
	err  error
}

// Main runs the tests of a package that uses New or DSN and then stops the private cluster, if
// the tests started one, and removes its files. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(storagetest.Main(m)) }
//
// It returns m.Run's exit code, or 1 if the tests passed but the cleanup failed.
func Main(m *testing.M) int {
	process.mainRunning.Store(true)
	code := m.Run()
	process.once.Do(func() { process.err = errors.New("storagetest: Main has finished") })
	if process.srv != nil {
		if err := process.srv.close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// New returns a pool on a fresh database holding the full schema and no rows, for this test
// alone; the database is dropped when the test ends. It is safe in parallel tests.
func New(tb testing.TB) *sqlx.DB {
	tb.Helper()
	db, err := storage.Open(DSN(tb))
	if err != nil {
		tb.Fatalf("storagetest: %v", err)
	}
	// Registered after DSN's cleanup, so it runs first: the pool closes before the drop.
	tb.Cleanup(func() { db.Close() })
	if err := db.PingContext(tb.Context()); err != nil {
		tb.Fatalf("storagetest: %v", err)
	}
	return db
}

// DSN is New for code that opens its own pool (a server under test, a job worker): it creates
// the fresh database and returns a lib/pq connection string for it. The database is dropped,
// disconnecting whatever is still connected, when the test ends.
func DSN(tb testing.TB) string {
	tb.Helper()
	if !process.mainRunning.Load() {
		tb.Fatal("storagetest: route this package's TestMain through storagetest.Main, so the test database server is stopped afterwards:\n\tfunc TestMain(m *testing.M) { os.Exit(storagetest.Main(m)) }")
	}
	process.once.Do(func() { process.srv, process.err = open() })
	if process.err != nil {
		tb.Fatal(process.err)
	}
	s := process.srv
	name := databaseName(tb.Name())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.admin.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)+" TEMPLATE "+pq.QuoteIdentifier(s.template)); err != nil {
		tb.Fatalf("storagetest: creating the test database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := s.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(name)+" WITH (FORCE)"); err != nil {
			tb.Errorf("storagetest: dropping the test database: %v", err)
		}
	})
	return withDatabase(s.dsn, name)
}

// open connects to the server, starting a private one when EnvURL is unset, and makes sure
// the template for the current migrations exists.
func open() (_ *server, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s := &server{dsn: os.Getenv(EnvURL)}
	defer func() {
		if err != nil {
			_ = s.close()
		}
	}()
	if s.dsn == "" {
		if err := s.startCluster(ctx); err != nil {
			return nil, err
		}
	}
	if s.admin, err = sql.Open("postgres", s.dsn); err != nil {
		return nil, fmt.Errorf("storagetest: %w", err)
	}
	if s.template, err = templateName(); err != nil {
		return nil, err
	}
	if err := s.ensureTemplate(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// close releases everything open started.
func (s *server) close() error {
	var errs []error
	if s.admin != nil {
		errs = append(errs, s.admin.Close())
	}
	if s.cluster != nil {
		errs = append(errs, s.cluster.Stop())
		for _, dir := range []string{s.cluster.Dir(), s.cluster.SocketDir()} {
			errs = append(errs, os.RemoveAll(dir))
		}
	}
	if s.tmpDir != "" {
		errs = append(errs, os.RemoveAll(s.tmpDir))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("storagetest: cleaning up: %w", err)
	}
	return nil
}

// databaseName names a test's database after the test, to make leftovers on a shared server
// recognisable, plus random bits so that parallel tests and processes never collide. It stays
// within PostgreSQL's 63-byte identifier limit.
func databaseName(testName string) string {
	var b strings.Builder
	b.WriteString("test_")
	for _, r := range strings.ToLower(testName) {
		if b.Len() >= 40 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	random := make([]byte, 6)
	_, _ = rand.Read(random)
	return b.String() + "_" + hex.EncodeToString(random)
}

// withDatabase returns dsn (a URL or key/value string) pointed at another database.
func withDatabase(dsn, database string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil {
			u.Path = "/" + database
			u.RawPath = ""
			return u.String()
		}
	}
	// lib/pq lets a later key override an earlier one; names here need no quoting.
	return dsn + " dbname=" + database
}
