package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// LicenseKeyActivation is one activation of a key (a machine, an install). Its conditions
// are never shown, so they are not read back.
type LicenseKeyActivation struct {
	ID             uuid.UUID  `db:"id"`
	CreatedAt      time.Time  `db:"created_at"`
	ModifiedAt     *time.Time `db:"modified_at"`
	OrganizationID uuid.UUID  `db:"organization_id"`
	LicenseKeyID   uuid.UUID  `db:"license_key_id"`
	Label          string     `db:"label"`
	Meta           JSONMap    `db:"meta"`
}

const activationColumns = `id, created_at, modified_at, organization_id, license_key_id, label, meta`

// LicenseKeyRef names a key the way the license API does: by its text within an
// organization. Whether the caller may see that organization is the use case's to decide.
type LicenseKeyRef struct {
	OrganizationID uuid.UUID
	Key            string
}

// LockLicenseKey reads a live key and locks it until the transaction ends, so activations
// of one key are counted and created one at a time.
func LockLicenseKey(ctx context.Context, tx *sqlx.Tx, ref LicenseKeyRef) (*LicenseKey, error) {
	var k LicenseKey
	err := sqlx.GetContext(ctx, tx, &k, `SELECT `+licenseKeyColumns+` FROM license_keys
		WHERE organization_id = $1 AND key = $2 AND deleted_at IS NULL
		FOR UPDATE`, ref.OrganizationID, ref.Key)
	return &k, mapErr(err)
}

// CreateLicenseKeyActivation adds an activation to a key locked by [LockLicenseKey] unless
// the key already has limit live activations, in which case it returns ErrConflict. The
// count runs after the lock was taken, so it sees every activation committed before.
func CreateLicenseKeyActivation(ctx context.Context, tx *sqlx.Tx, k *LicenseKey, limit int, label string,
	conditions, meta JSONMap, now time.Time) (*LicenseKeyActivation, error) {
	var a LicenseKeyActivation
	err := sqlx.GetContext(ctx, tx, &a, `INSERT INTO license_key_activations
			(created_at, organization_id, license_key_id, label, conditions, meta)
		SELECT $1, $2, $3, $4, $5, $6
		WHERE (SELECT count(*) FROM license_key_activations
			WHERE license_key_id = $3 AND deleted_at IS NULL) < $7
		RETURNING `+activationColumns, now, k.OrganizationID, k.ID, label, conditions, meta, limit)
	if err = mapErr(err); err == ErrNotFound {
		return nil, ErrConflict
	}
	return &a, err
}

// DeactivateLicenseKeyActivation soft-deletes a live activation of the named key; ErrNotFound
// when the key or the activation is not there (or already deactivated).
func DeactivateLicenseKeyActivation(ctx context.Context, q sqlx.ExtContext, ref LicenseKeyRef, activationID uuid.UUID, now time.Time) error {
	var id uuid.UUID
	err := sqlx.GetContext(ctx, q, &id, `UPDATE license_key_activations a SET deleted_at = $4, modified_at = $4
		FROM license_keys k
		WHERE a.id = $3 AND a.license_key_id = k.id AND a.deleted_at IS NULL
			AND k.organization_id = $1 AND k.key = $2 AND k.deleted_at IS NULL
		RETURNING a.id`, ref.OrganizationID, ref.Key, activationID, now)
	return mapErr(err)
}

// ActivationsByLicenseKeys returns the live activations of each key, oldest first, one list
// per key in key order (the activations loader).
func ActivationsByLicenseKeys(ctx context.Context, q sqlx.ExtContext, keyIDs []uuid.UUID) ([][]*LicenseKeyActivation, error) {
	var rows []*LicenseKeyActivation
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+activationColumns+` FROM license_key_activations
		WHERE license_key_id = ANY($1) AND deleted_at IS NULL ORDER BY created_at, id`, pq.Array(keyIDs)); err != nil {
		return nil, mapErr(err)
	}
	return groupBy(keyIDs, rows, func(a *LicenseKeyActivation) uuid.UUID { return a.LicenseKeyID }), nil
}
