package storage

import (
	"context"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// CreateLicenseKeyActivation records one activation of a key (a machine, an install). The
// activation-limit rule lives with the license-key use cases; this only stores the row.
func CreateLicenseKeyActivation(ctx context.Context, q sqlx.ExtContext, orgID, licenseKeyID uuid.UUID, label string, meta JSONMap) (uuid.UUID, error) {
	var id uuid.UUID
	err := sqlx.GetContext(ctx, q, &id, `INSERT INTO license_key_activations (organization_id, license_key_id, label, meta)
		VALUES ($1, $2, $3, $4) RETURNING id`, orgID, licenseKeyID, label, meta)
	return id, mapErr(err)
}
