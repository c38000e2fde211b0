package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the PostgreSQL driver

	"till/internal/pgembed"
	"till/migrations"
	"till/storage"
)

// database is an open, migrated pool, plus the embedded cluster when Till started one.
type database struct {
	DB      *sqlx.DB
	cluster *pgembed.Cluster
	// dsn is what DB was opened with, for the connection that listens for notifications.
	dsn string
	// payments is the built-in test processor's pool (storage.TestPayments).
	payments *sqlx.DB
	// analytics is the pool of the metrics reads (storage.OpenAnalytics).
	analytics *sqlx.DB
}

// openDatabase connects to DATABASE_URL, or starts the embedded cluster under the data
// directory, then applies migrations. With attach, a cluster that a running `till serve`
// already started is used as is (admin commands run next to the server); without it, a
// second server on the same data directory is refused.
func openDatabase(ctx context.Context, cfg config, logger *slog.Logger, attach bool) (*database, error) {
	d := &database{}
	dsn := cfg.DatabaseURL
	if dsn == "" {
		c, err := pgembed.Start(ctx, pgembed.Options{Dir: filepath.Join(cfg.DataDir, "pg"), BinDir: cfg.PGBinDir,
			Port: cfg.PGPort, Logger: logger, Attach: attach})
		if errors.Is(err, pgembed.ErrNoBinaries) {
			return nil, fmt.Errorf("PostgreSQL server binaries not found: install them (Debian/Ubuntu: apt-get install postgresql) or set DATABASE_URL to an existing server")
		}
		if errors.Is(err, pgembed.ErrAlreadyRunning) {
			return nil, fmt.Errorf("another till process (a till serve, or a command still running) already uses %s; stop it or set TILL_DATA_DIR", cfg.DataDir)
		}
		if err != nil {
			return nil, err
		}
		d.cluster = c
		if err := c.CreateDatabase(ctx, "till"); err != nil {
			d.close()
			return nil, err
		}
		dsn = c.DSN("till")
	}
	db, err := storage.OpenCached(dsn, cfg.StatementCache)
	if err != nil {
		d.close()
		return nil, err
	}
	db.SetMaxOpenConns(cfg.MaxConns)
	db.SetMaxIdleConns(cfg.MaxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	d.DB, d.dsn = db, dsn
	if err := db.PingContext(ctx); err != nil {
		d.close()
		return nil, fmt.Errorf("connecting to the database: %w", err)
	}
	if err := migrations.Up(ctx, db.DB); err != nil {
		d.close()
		return nil, err
	}
	// The test processor runs while a use case holds a connection of the main pool; with a
	// pool of its own it never waits for another one of those.
	if d.payments, err = storage.Open(dsn); err != nil {
		d.close()
		return nil, err
	}
	d.payments.SetMaxOpenConns(testPaymentConns)
	d.payments.SetMaxIdleConns(testPaymentConns)
	// Without prepared statements (a pooler in transaction mode) there is no plan to keep,
	// and a session setting would stay on whichever server connection the pooler lent: the
	// metrics reads then share the main pool.
	if cfg.StatementCache > 0 {
		if d.analytics, err = storage.OpenAnalytics(dsn, cfg.StatementCache); err != nil {
			d.close()
			return nil, err
		}
		conns := analyticsConns(cfg.MaxConns)
		d.analytics.SetMaxOpenConns(conns)
		d.analytics.SetMaxIdleConns(conns)
		d.analytics.SetConnMaxIdleTime(5 * time.Minute)
	}
	return d, nil
}

// testPaymentConns bounds the test processor's own pool: one short transaction per save or
// charge.
const testPaymentConns = 4

// analyticsConns bounds the metrics reads' pool to a quarter of the main pool's size (at
// least two; unbounded as the main pool is when it is 0): a dashboard's burst of reads,
// each some milliseconds of a core, waits for a connection there instead of taking the
// connections and the cores the requests that write need.
func analyticsConns(mainConns int) int {
	if mainConns <= 0 {
		return 0
	}
	return max(2, mainConns/4)
}

// close closes the pool and stops the embedded cluster, if any.
func (d *database) close() {
	if d.DB != nil {
		_ = d.DB.Close()
	}
	if d.payments != nil {
		_ = d.payments.Close()
	}
	if d.analytics != nil {
		_ = d.analytics.Close()
	}
	if d.cluster != nil {
		_ = d.cluster.Stop()
	}
}
