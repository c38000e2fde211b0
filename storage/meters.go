package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// Meter turns usage events into billable quantities: a filter over events and an
// aggregation (count, sum, max, min, avg, unique over a metadata property).
type Meter struct {
	ID             uuid.UUID  `db:"id"`
	CreatedAt      time.Time  `db:"created_at"`
	ModifiedAt     *time.Time `db:"modified_at"`
	OrganizationID uuid.UUID  `db:"organization_id"`
	Name           string     `db:"name"`
	Filter         RawJSON    `db:"filter"`
	Aggregation    RawJSON    `db:"aggregation"`
	ArchivedAt     *time.Time `db:"archived_at"`
}

// CreateMeter stores a meter; filter and aggregation are validated by the caller.
func CreateMeter(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, name string, filter, aggregation RawJSON) (*Meter, error) {
	var m Meter
	err := sqlx.GetContext(ctx, q, &m, `INSERT INTO meters (organization_id, name, filter, aggregation)
		VALUES ($1, $2, $3, $4)
		RETURNING id, created_at, modified_at, organization_id, name, filter, aggregation, archived_at`,
		orgID, name, filter, aggregation)
	return &m, mapErr(err)
}
