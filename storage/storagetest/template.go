package storagetest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"

	"github.com/lib/pq"

	"till/migrations"
)

// templateLock is the advisory lock key that serialises template creation among all test
// processes sharing one server ("till_tmp" in ASCII), so that `go test ./...` against
// TEST_DATABASE_URL builds each template once however many packages start at the same moment.
const templateLock int64 = 0x74696c6c5f746d70

// templateName names the template after a hash of the migration files, so that a changed
// schema gets a new template rather than silently reusing a stale one, while unchanged
// migrations reuse the template that another test process already built.
func templateName() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("storagetest: hashing migrations: %w", err)
	}
	return "till_template_" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// ensureTemplate creates and migrates the template unless a complete one exists. A complete
// template is marked IS_TEMPLATE and ALLOW_CONNECTIONS false in one statement at the very end:
// the mark tells a half-built one (from a killed process) apart, and refusing connections
// guarantees that nothing holds one open, which would make every CREATE DATABASE … TEMPLATE
// fail.
func (s *server) ensureTemplate(ctx context.Context) error {
	conn, err := s.admin.Conn(ctx)
	if err != nil {
		return fmt.Errorf("storagetest: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, templateLock); err != nil {
		return fmt.Errorf("storagetest: waiting for the template lock: %w", err)
	}
	// Session locks end with the session; unlock explicitly since the pool may keep it.
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, templateLock)

	name := pq.QuoteIdentifier(s.template)
	var complete bool
	err = conn.QueryRowContext(ctx,
		`SELECT datistemplate AND NOT datallowconn FROM pg_database WHERE datname = $1`, s.template).Scan(&complete)
	switch {
	case err == nil && complete:
		return nil
	case err == nil: // left half-built by a process that died while migrating
		if _, err := conn.ExecContext(ctx, `ALTER DATABASE `+name+` IS_TEMPLATE false`); err != nil {
			return fmt.Errorf("storagetest: %w", err)
		}
		if _, err := conn.ExecContext(ctx, `DROP DATABASE `+name+` WITH (FORCE)`); err != nil {
			return fmt.Errorf("storagetest: dropping a half-built template: %w", err)
		}
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("storagetest: %w", err)
	}

	// template0 never accepts connections, so it can always be copied.
	if _, err := conn.ExecContext(ctx, `CREATE DATABASE `+name+` TEMPLATE template0`); err != nil {
		return fmt.Errorf("storagetest: creating the template: %w", err)
	}
	if err := migrate(ctx, withDatabase(s.dsn, s.template)); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, `ALTER DATABASE `+name+` WITH ALLOW_CONNECTIONS false IS_TEMPLATE true`); err != nil {
		return fmt.Errorf("storagetest: sealing the template: %w", err)
	}
	// Closing a pool does not wait for the server to end its backends; make sure none linger.
	if _, err := conn.ExecContext(ctx,
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, s.template); err != nil {
		return fmt.Errorf("storagetest: %w", err)
	}
	return nil
}

// migrate applies every migration to the database at dsn through a pool that is closed again
// before the database becomes a template.
func migrate(ctx context.Context, dsn string) error {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return fmt.Errorf("storagetest: %w", err)
	}
	defer db.Close()
	if err := migrations.Up(ctx, db); err != nil {
		return fmt.Errorf("storagetest: migrating the template: %w", err)
	}
	return db.Close()
}
