package storage

import (
	"container/list"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// DefaultStatementCache is how many prepared statements each pooled connection keeps. Till
// sends a few hundred distinct statement texts in all; the hot paths' fit many times over.
const DefaultStatementCache = 256

// Open opens a pool on dsn (a URL or key=value DSN, binary parameters on) whose connections
// prepare the statements they run and keep up to DefaultStatementCache of them (see
// NewConnector).
func Open(dsn string) (*sqlx.DB, error) {
	return OpenCached(dsn, DefaultStatementCache)
}

// OpenCached opens a pool on dsn whose connections each keep up to size prepared statements;
// 0 turns preparing off (for a pooler in transaction mode, where a statement prepared on one
// server connection is unknown on the next).
func OpenCached(dsn string, size int) (*sqlx.DB, error) {
	c, err := NewConnector(dsn, size)
	if err != nil {
		return nil, err
	}
	return sqlx.NewDb(sql.OpenDB(c), "postgres"), nil
}

// OpenAnalytics opens a pool on dsn for the analytical reads (Metrics) whose connections
// also plan every prepared statement generically (analyticsSettings).
func OpenAnalytics(dsn string, size int) (*sqlx.DB, error) {
	c, err := newConnector(dsn, size, analyticsSettings)
	if err != nil {
		return nil, err
	}
	return sqlx.NewDb(sql.OpenDB(c), "postgres"), nil
}

// NewConnector is lib/pq's connector for dsn (with binary parameters), setting
// sessionSettings on each connection, behind a statement cache of size per connection; 0
// caches nothing.
//
// Why: an unnamed statement is parsed, analysed and planned by PostgreSQL on every run. On the
// pages Till serves, a statement's run is a tenth of that work (measured on an order read:
// 0.2–1.4 ms to parse and bind, 0.03–0.2 ms to execute), so preparing once per connection
// removes most of PostgreSQL's cost per request, and the prepared run is one round trip like
// the unnamed one. Statements without arguments (DDL, LISTEN, migrations) are sent as before.
func NewConnector(dsn string, size int) (driver.Connector, error) {
	return newConnector(dsn, size, sessionSettings)
}

func newConnector(dsn string, size int, settings string) (driver.Connector, error) {
	pqc, err := pq.NewConnector(WithBinaryParameters(dsn))
	if err != nil {
		return nil, err
	}
	inner := &sessionConnector{inner: pqc, settings: settings}
	if size <= 0 {
		return inner, nil
	}
	return &cachingConnector{inner: inner, size: size}, nil
}

// sessionSettings are set on every connection Till opens, before its first statement.
//
// jit = off: PostgreSQL compiles a statement just in time when its estimated cost passes
// jit_above_cost, and the estimates of Till's analytical statements (a series of periods
// joined with rollup rows, whose row counts the planner cannot know) pass it by orders of
// magnitude while executing in milliseconds: compiling the metrics statement took seconds
// over a million orders. Till's statements are all short, so none gains from it. Set once
// per connection rather than per statement, where it cost a transaction and two round trips
// on every read. Through a pooler in transaction mode (TILL_DB_STATEMENT_CACHE=0) a session
// setting does not follow the client to the next server connection; there the operator sets
// it on Till's role (README).
const sessionSettings = `SET jit = off`

// analyticsSettings add to sessionSettings, for the analytical pool, plan_cache_mode =
// force_generic_plan. PostgreSQL plans a prepared statement afresh at each run, with the
// run's arguments, while it estimates such a custom plan cheaper than the generic one; the
// metrics statements' custom plans, knowing the products, the zone and the calendar, are
// estimated cheaper, so every read planned again: 8–16 ms of planning against 12–70 ms of
// execution for reads of some products, a fifth of a year's read of all products, while the
// generic plan ran them within the noise of the custom ones (bench/README.md). Reads of some
// customers stay on the main pool: their index choices follow the customers.
const analyticsSettings = sessionSettings + `; SET plan_cache_mode = force_generic_plan`

// sessionConnector applies its settings to each new connection.
type sessionConnector struct {
	inner    driver.Connector
	settings string
}

func (c *sessionConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.(driver.ExecerContext).ExecContext(ctx, c.settings, nil); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

func (c *sessionConnector) Driver() driver.Driver { return c.inner.Driver() }

type cachingConnector struct {
	inner driver.Connector
	size  int
}

func (c *cachingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &cachingConn{Conn: conn, size: c.size, stmts: map[string]*list.Element{}, lru: list.New()}, nil
}

func (c *cachingConnector) Driver() driver.Driver { return c.inner.Driver() }

// cachingConn runs every statement with arguments through a statement prepared on this
// connection, kept in a least-recently-used list of at most size. database/sql uses a
// connection from one goroutine at a time, so it needs no lock.
type cachingConn struct {
	driver.Conn
	size  int
	stmts map[string]*list.Element // of *cachedStmt
	lru   *list.List
	// inTx is set between BeginTx and the transaction's end: a statement that fails inside a
	// transaction aborts it, so a stale plan there is reported rather than retried.
	inTx bool
}

type cachedStmt struct {
	query string
	stmt  driver.Stmt
}

var (
	_ driver.QueryerContext     = (*cachingConn)(nil)
	_ driver.ExecerContext      = (*cachingConn)(nil)
	_ driver.ConnPrepareContext = (*cachingConn)(nil)
	_ driver.ConnBeginTx        = (*cachingConn)(nil)
	_ driver.Pinger             = (*cachingConn)(nil)
	_ driver.SessionResetter    = (*cachingConn)(nil)
	_ driver.Validator          = (*cachingConn)(nil)
	_ driver.NamedValueChecker  = (*cachingConn)(nil)
)

// prepared returns the connection's statement for query, preparing it on first use and
// closing the least recently used one beyond size.
func (c *cachingConn) prepared(ctx context.Context, query string) (driver.Stmt, error) {
	if e, ok := c.stmts[query]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*cachedStmt).stmt, nil
	}
	st, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.stmts[query] = c.lru.PushFront(&cachedStmt{query: query, stmt: st})
	for c.lru.Len() > c.size {
		c.evict(c.lru.Back())
	}
	return st, nil
}

func (c *cachingConn) evict(e *list.Element) {
	cs := e.Value.(*cachedStmt)
	c.lru.Remove(e)
	delete(c.stmts, cs.query)
	_ = cs.stmt.Close()
}

// stalePlan reports PostgreSQL's refusal to run a prepared statement whose result columns
// changed under it (a table altered since it was prepared): the statement must be prepared
// again.
func stalePlan(err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && pqErr.Code == "0A000" && pqErr.Message == "cached plan must not change result type"
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if len(args) == 0 {
		return c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
	}
	return runPrepared(ctx, c, query, func(st driver.Stmt) (driver.Rows, error) {
		return st.(driver.StmtQueryContext).QueryContext(ctx, args)
	})
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if len(args) == 0 {
		return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
	}
	return runPrepared(ctx, c, query, func(st driver.Stmt) (driver.Result, error) {
		return st.(driver.StmtExecContext).ExecContext(ctx, args)
	})
}

// runPrepared runs query's prepared statement; when its plan went stale it is dropped and,
// outside a transaction, prepared and run once more.
func runPrepared[T any](ctx context.Context, c *cachingConn, query string, run func(driver.Stmt) (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		st, err := c.prepared(ctx, query)
		if err != nil {
			var zero T
			return zero, err
		}
		out, err := run(st)
		if err != nil && stalePlan(err) {
			c.evict(c.stmts[query])
			if attempt == 0 && !c.inTx {
				continue
			}
		}
		return out, err
	}
}

// Prepare and PrepareContext hand out statements of their own (pq.CopyIn among them), which
// their callers close; they never enter the cache.
func (c *cachingConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
}

// BeginTx begins a transaction. One that InTx begins for an actor (an audited request's)
// sends the actor's setting with BEGIN as one simple query (auditBegin), so auditing costs
// the transaction no round trip. That needs lib/pq's connection to be its own driver.Tx, as
// lib/pq's BeginTx returns it; a connection that is not begins as usual and InTx sends the
// setting apart.
//
// lib/pq's own BeginTx is given a context that is never cancelled. Given the caller's, it
// keeps a watcher that ends with the transaction, and it never forgets it: a transaction
// begun the other way, without one, would run the stale watcher at its end, which fails
// there. Nothing is lost: each statement of the transaction still watches its own context,
// and database/sql rolls back a transaction whose context ends.
func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := ctx.Value(auditBeginKey{}).(*auditBegin); ok && opts == (driver.TxOptions{}) {
		if tx, ok := c.Conn.(driver.Tx); ok {
			if err := c.beginAudited(ctx, b); err != nil {
				return nil, err
			}
			c.inTx = true
			return &cachingTx{Tx: tx, c: c}, nil
		}
	}
	tx, err := c.Conn.(driver.ConnBeginTx).BeginTx(context.WithoutCancel(ctx), opts)
	if err != nil {
		return nil, err
	}
	c.inTx = true
	return &cachingTx{Tx: tx, c: c}, nil
}

// beginAudited sends BEGIN with the actor's setting. Should the setting fail after BEGIN
// succeeded, the connection is rolled back, or discarded when even that fails, so it never
// returns to the pool inside a transaction.
func (c *cachingConn) beginAudited(ctx context.Context, b *auditBegin) error {
	exec := c.Conn.(driver.ExecerContext)
	if _, err := exec.ExecContext(ctx, b.beginStatement(), nil); err != nil {
		if _, rerr := exec.ExecContext(context.WithoutCancel(ctx), "ROLLBACK", nil); rerr != nil {
			return driver.ErrBadConn
		}
		return err
	}
	b.sent = true
	return nil
}

type cachingTx struct {
	driver.Tx
	c *cachingConn
}

func (t *cachingTx) Commit() error {
	t.c.inTx = false
	return t.Tx.Commit()
}

func (t *cachingTx) Rollback() error {
	t.c.inTx = false
	return t.Tx.Rollback()
}

func (c *cachingConn) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }

func (c *cachingConn) ResetSession(ctx context.Context) error {
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

func (c *cachingConn) IsValid() bool { return c.Conn.(driver.Validator).IsValid() }

func (c *cachingConn) CheckNamedValue(nv *driver.NamedValue) error {
	return c.Conn.(driver.NamedValueChecker).CheckNamedValue(nv)
}

// Close closes the connection; its statements go with it on the server.
func (c *cachingConn) Close() error {
	c.stmts, c.lru = nil, nil
	return c.Conn.Close()
}
