// Package migrations holds the database schema as goose SQL files, embedded in the binary so
// that `till migrate` and `till serve` need nothing but the executable.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"

	"github.com/pressly/goose/v3"
)

// FS is the embedded set of migration files, in apply order by their numeric prefix.
//
//go:embed *.sql
var FS embed.FS

// Up applies every pending migration. It uses a goose Provider (not goose's package-level
// state) so concurrent callers in one process, such as parallel tests, do not interfere.
func Up(ctx context.Context, db *sql.DB) error {
	p, err := goose.NewProvider(goose.DialectPostgres, db, FS)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	return nil
}
