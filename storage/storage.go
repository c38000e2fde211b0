// Package storage holds Till's records and the SQL that reads and writes them. Records are
// plain structs with db tags, autobound by gqlgen so resolvers return them without copying.
// Every function takes a sqlx.ExtContext so it runs on the pool or inside a transaction, and
// every query of organization data filters by the caller's organizations.
package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Sentinel errors that use cases translate into API errors.
var (
	// ErrNotFound means no row matched, including rows of organizations the caller cannot see.
	ErrNotFound = errors.New("storage: not found")
	// ErrConflict means a unique constraint rejected the write.
	ErrConflict = errors.New("storage: conflict")
	// ErrReference means a foreign key or check constraint rejected the write.
	ErrReference = errors.New("storage: invalid reference")
	// ErrOutOfRange means PostgreSQL could not hold a number the client sent: an integer
	// beyond its column, a date beyond the timestamp range, a negative OFFSET or LIMIT.
	ErrOutOfRange = errors.New("storage: value out of range")
	// ErrUnknownTimeZone means PostgreSQL does not know a time zone name it was given: its
	// zone database and Go's may differ, so a name Go accepted can still be refused here.
	ErrUnknownTimeZone = errors.New("storage: time zone not recognized")
)

// outOfRangeCodes are the SQLSTATEs of a value too large for where it goes:
// numeric_value_out_of_range, datetime_field_overflow, invalid_row_count_in_limit_clause
// and invalid_row_count_in_result_offset_clause.
var outOfRangeCodes = map[pq.ErrorCode]bool{"22003": true, "22008": true, "2201W": true, "2201X": true}

// IsOutOfRange reports whether err is PostgreSQL refusing a number out of range, mapped or
// not: inputs are range-checked before they get here, so this is the net under a check
// that is missing, and the caller answers it as the client's mistake rather than a fault.
func IsOutOfRange(err error) bool {
	if errors.Is(err, ErrOutOfRange) {
		return true
	}
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && outOfRangeCodes[pqErr.Code]
}

// ConflictError carries the name of the violated unique constraint so use cases can say which
// field clashed.
type ConflictError struct{ Constraint string }

func (e *ConflictError) Error() string { return "storage: conflict on " + e.Constraint }

// Unwrap lets errors.Is(err, ErrConflict) match.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// mapErr turns driver errors into the package's sentinels.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		switch pqErr.Code {
		case "23505":
			return &ConflictError{Constraint: pqErr.Constraint}
		case "23503", "23514":
			return fmt.Errorf("%w: %s", ErrReference, pqErr.Message)
		case "22P02":
			return ErrNotFound
		case "22023":
			if strings.HasPrefix(pqErr.Message, "time zone ") {
				return ErrUnknownTimeZone
			}
		}
		if outOfRangeCodes[pqErr.Code] {
			return fmt.Errorf("%w: %s", ErrOutOfRange, pqErr.Message)
		}
	}
	return err
}

// InTx runs fn inside a transaction, committing when it returns nil. The transaction's
// changes are audited as made by the actor ctx carries (WithAuditActor), or by the system.
func InTx(ctx context.Context, db *sqlx.DB, fn func(tx *sqlx.Tx) error) error {
	beginCtx, audit, err := auditBeginning(ctx)
	if err != nil {
		return err
	}
	tx, err := db.BeginTxx(beginCtx, nil)
	if err != nil {
		return err
	}
	if err := applyAudit(ctx, tx, audit); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// JSONMap is a jsonb object column such as metadata.
type JSONMap map[string]any

// Scan implements sql.Scanner.
func (m *JSONMap) Scan(src any) error {
	b, err := asBytes(src)
	if err != nil || b == nil {
		*m = nil
		return err
	}
	return json.Unmarshal(b, m)
}

// JSON values are written as strings, not bytes, so they stay valid with lib/pq's
// binary_parameters mode (where bytes are sent in binary format).

// Value implements driver.Valuer; nil is stored as {} because the columns are NOT NULL objects.
func (m JSONMap) Value() (driver.Value, error) {
	if m == nil {
		return "{}", nil
	}
	b, err := json.Marshal(map[string]any(m))
	return string(b), err
}

// RawJSON is a jsonb column kept as bytes, for shapes the use cases own.
type RawJSON []byte

// Scan implements sql.Scanner.
func (r *RawJSON) Scan(src any) error {
	b, err := asBytes(src)
	if err != nil {
		return err
	}
	if b == nil {
		*r = nil
		return nil
	}
	*r = append((*r)[:0], b...)
	return nil
}

// Value implements driver.Valuer; empty is SQL NULL.
func (r RawJSON) Value() (driver.Value, error) {
	if len(r) == 0 {
		return nil, nil
	}
	return string(r), nil
}

// Address is a postal address stored as jsonb, spelled as the contract's Address schema.
type Address struct {
	Line1      *string `json:"line1"`
	Line2      *string `json:"line2"`
	PostalCode *string `json:"postal_code"`
	City       *string `json:"city"`
	State      *string `json:"state"`
	Country    string  `json:"country"`
}

// Scan implements sql.Scanner.
func (a *Address) Scan(src any) error {
	b, err := asBytes(src)
	if err != nil || b == nil {
		return err
	}
	return json.Unmarshal(b, a)
}

// Value implements driver.Valuer.
func (a Address) Value() (driver.Value, error) {
	b, err := json.Marshal(a)
	return string(b), err
}

func asBytes(src any) ([]byte, error) {
	switch v := src.(type) {
	case nil:
		return nil, nil
	case []byte:
		return v, nil
	case string:
		return []byte(v), nil
	default:
		return nil, fmt.Errorf("storage: cannot scan %T as JSON", src)
	}
}

// Page selects a window of a list, as upstream's page/limit pagination does.
type Page struct {
	Page  int
	Limit int
}

// Offset is the number of rows before the page.
// It saturates instead of overflowing into a negative OFFSET: a page that far is past the
// last row whatever the count, so the list is empty.
func (p Page) Offset() int {
	if p.Page <= 1 || p.Limit <= 0 {
		return 0
	}
	if p.Page-1 > math.MaxInt/p.Limit {
		return math.MaxInt
	}
	return (p.Page - 1) * p.Limit
}

// Sort is one ordering criterion: a whitelisted column expression and a direction.
type Sort struct {
	Column string
	Desc   bool
}

// WithBinaryParameters adds binary_parameters=yes to a DSN unless it sets it already: lib/pq
// then sends an unprepared parameterised statement in one round trip instead of two (parse,
// then bind). JSON values are bound as strings (see JSONMap.Value), which that mode requires.
func WithBinaryParameters(dsn string) string {
	if strings.Contains(dsn, "binary_parameters") {
		return dsn
	}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if strings.Contains(dsn, "?") {
			return dsn + "&binary_parameters=yes"
		}
		return dsn + "?binary_parameters=yes"
	}
	return strings.TrimSpace(dsn) + " binary_parameters=yes"
}

// Savepoint marks where RollbackToSavepoint takes tx back to, for a step that may fail
// while what came before it must stay.
func Savepoint(ctx context.Context, tx *sqlx.Tx, name string) error {
	_, err := tx.ExecContext(ctx, `SAVEPOINT `+pq.QuoteIdentifier(name))
	return mapErr(err)
}

// RollbackToSavepoint undoes what tx did since Savepoint(name).
func RollbackToSavepoint(ctx context.Context, tx *sqlx.Tx, name string) error {
	_, err := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT `+pq.QuoteIdentifier(name))
	return mapErr(err)
}
