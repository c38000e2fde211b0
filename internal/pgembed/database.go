package pgembed

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/lib/pq"
)

// CreateDatabase creates database name unless it exists. A fresh cluster has only the
// `postgres` maintenance database, and an application should keep its tables in its own.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) error {
	db, err := sql.Open("postgres", c.DSN("postgres"))
	if err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	defer db.Close()
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	if exists {
		return nil
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)); err != nil {
		// Lost a race with another creator: the database exists, which is all we wanted.
		if pqErr := (*pq.Error)(nil); errors.As(err, &pqErr) && pqErr.Code == "42P04" {
			return nil
		}
		return fmt.Errorf("pgembed: %w", err)
	}
	return nil
}
