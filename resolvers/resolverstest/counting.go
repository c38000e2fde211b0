package resolverstest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"sync/atomic"
	"testing"
	"till/storage"

	"github.com/jmoiron/sqlx"
)

// Counter is a database/sql connector around lib/pq's that counts what the pool sends to
// PostgreSQL, so a test can prove that a nested query costs a constant number of statements.
// It counts at the driver boundary, below sqlx and database/sql, so nothing the application
// does can hide a statement from it.
type Counter struct {
	inner driver.Connector

	queries  atomic.Int64 // QueryContext on a connection
	execs    atomic.Int64 // ExecContext on a connection
	prepares atomic.Int64 // Prepare / PrepareContext on a connection
	stmtRuns atomic.Int64 // executions of prepared statements
	begins   atomic.Int64 // transactions started
}

// Counts is a snapshot of a Counter.
type Counts struct {
	Queries, Execs, Prepares, StmtRuns, Begins int64
}

// Statements is the number of statements sent: one-shot queries and execs, prepares, and
// runs of prepared statements. Transaction control is counted apart in Begins.
func (c Counts) Statements() int64 { return c.Queries + c.Execs + c.Prepares + c.StmtRuns }

func (c Counts) String() string {
	return fmt.Sprintf("%d statements (%d queries, %d execs, %d prepares, %d prepared runs), %d transactions",
		c.Statements(), c.Queries, c.Execs, c.Prepares, c.StmtRuns, c.Begins)
}

// NewCounter wraps storage's connector for dsn, statement cache included: it counts the
// statements the application runs, however each is sent.
func NewCounter(dsn string) (*Counter, error) {
	inner, err := storage.NewConnector(dsn, storage.DefaultStatementCache)
	if err != nil {
		return nil, err
	}
	return &Counter{inner: inner}, nil
}

// OpenCountingDB opens a pool on dsn through a Counter; the pool is closed when the test ends.
func OpenCountingDB(tb testing.TB, dsn string) (*sqlx.DB, *Counter) {
	tb.Helper()
	c, err := NewCounter(dsn)
	if err != nil {
		tb.Fatalf("counting connector: %v", err)
	}
	db := sqlx.NewDb(sql.OpenDB(c), "postgres")
	tb.Cleanup(func() { db.Close() })
	return db, c
}

// Snapshot reads the counters.
func (c *Counter) Snapshot() Counts {
	return Counts{Queries: c.queries.Load(), Execs: c.execs.Load(), Prepares: c.prepares.Load(),
		StmtRuns: c.stmtRuns.Load(), Begins: c.begins.Load()}
}

// Reset zeroes the counters.
func (c *Counter) Reset() {
	c.queries.Store(0)
	c.execs.Store(0)
	c.prepares.Store(0)
	c.stmtRuns.Store(0)
	c.begins.Store(0)
}

// Connect implements driver.Connector.
func (c *Counter) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: conn, c: c}, nil
}

// Driver implements driver.Connector.
func (c *Counter) Driver() driver.Driver { return c.inner.Driver() }

// countingConn forwards every optional interface lib/pq's connection implements, so the
// pool behaves exactly as with the bare driver (argument conversion included).
type countingConn struct {
	driver.Conn
	c *Counter
}

var (
	_ driver.QueryerContext     = (*countingConn)(nil)
	_ driver.ExecerContext      = (*countingConn)(nil)
	_ driver.ConnPrepareContext = (*countingConn)(nil)
	_ driver.ConnBeginTx        = (*countingConn)(nil)
	_ driver.Pinger             = (*countingConn)(nil)
	_ driver.SessionResetter    = (*countingConn)(nil)
	_ driver.Validator          = (*countingConn)(nil)
	_ driver.NamedValueChecker  = (*countingConn)(nil)
)

func (cc *countingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cc.c.queries.Add(1)
	return cc.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
}

func (cc *countingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cc.c.execs.Add(1)
	return cc.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (cc *countingConn) Prepare(query string) (driver.Stmt, error) {
	return cc.PrepareContext(context.Background(), query)
}

func (cc *countingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	cc.c.prepares.Add(1)
	st, err := cc.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &countingStmt{Stmt: st, c: cc.c}, nil
}

func (cc *countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	cc.c.begins.Add(1)
	return cc.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (cc *countingConn) Ping(ctx context.Context) error {
	return cc.Conn.(driver.Pinger).Ping(ctx)
}

func (cc *countingConn) ResetSession(ctx context.Context) error {
	if r, ok := cc.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (cc *countingConn) IsValid() bool {
	if v, ok := cc.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (cc *countingConn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := cc.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// countingStmt counts each run of a prepared statement (pq.CopyIn included). It has no
// CheckNamedValue of its own, so database/sql converts arguments with the connection's, as
// it does for lib/pq's bare statements.
type countingStmt struct {
	driver.Stmt
	c *Counter
}

func (s *countingStmt) Exec(args []driver.Value) (driver.Result, error) {
	s.c.stmtRuns.Add(1)
	return s.Stmt.Exec(args) //nolint:staticcheck // forwarding the legacy interface on purpose
}

func (s *countingStmt) Query(args []driver.Value) (driver.Rows, error) {
	s.c.stmtRuns.Add(1)
	return s.Stmt.Query(args) //nolint:staticcheck // forwarding the legacy interface on purpose
}

func (s *countingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if e, ok := s.Stmt.(driver.StmtExecContext); ok {
		s.c.stmtRuns.Add(1)
		return e.ExecContext(ctx, args)
	}
	return s.Exec(namedToValues(args))
}

func (s *countingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if q, ok := s.Stmt.(driver.StmtQueryContext); ok {
		s.c.stmtRuns.Add(1)
		return q.QueryContext(ctx, args)
	}
	return s.Query(namedToValues(args))
}

func namedToValues(args []driver.NamedValue) []driver.Value {
	out := make([]driver.Value, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}
