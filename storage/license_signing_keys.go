package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

const licenseSigningKeyColumns = `id, organization_id, kid, public_key, sealed_private_key, created_at, retired_at, valid_until`

// LicenseSigningKey is an Ed25519 key an organization signs offline license certificates
// with. The private key is kept sealed; only the use case that signs opens it.
type LicenseSigningKey struct {
	ID               uuid.UUID `db:"id"`
	OrganizationID   uuid.UUID `db:"organization_id"`
	KeyID            string    `db:"kid"`
	PublicKey        []byte    `db:"public_key"`
	SealedPrivateKey []byte    `db:"sealed_private_key"`
	CreatedAt        time.Time `db:"created_at"`
	// RetiredAt is set when a newer key replaced this one; it signs nothing after that.
	RetiredAt *time.Time `db:"retired_at"`
	// ValidUntil is the latest expiry of any certificate the key signed, set at retirement;
	// the key stays published until then.
	ValidUntil *time.Time `db:"valid_until"`
}

// ActiveLicenseSigningKey returns the key the organization signs with now; ErrNotFound when
// it has none yet.
func ActiveLicenseSigningKey(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID) (*LicenseSigningKey, error) {
	var k LicenseSigningKey
	err := sqlx.GetContext(ctx, q, &k, `SELECT `+licenseSigningKeyColumns+` FROM license_signing_keys
		WHERE organization_id = $1 AND retired_at IS NULL`, orgID)
	return &k, mapErr(err)
}

// CreateLicenseSigningKey stores a new active key. When the organization already has an
// active key it returns ErrConflict without failing the caller's transaction, so two first
// signers racing each other converge: the loser reads the winner's key with
// ActiveLicenseSigningKey.
func CreateLicenseSigningKey(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, kid string, pub, sealed []byte) (*LicenseSigningKey, error) {
	var k LicenseSigningKey
	err := sqlx.GetContext(ctx, q, &k, `INSERT INTO license_signing_keys (organization_id, kid, public_key, sealed_private_key)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (organization_id) WHERE retired_at IS NULL DO NOTHING
		RETURNING `+licenseSigningKeyColumns, orgID, kid, pub, sealed)
	if err = mapErr(err); err == ErrNotFound {
		return nil, ErrConflict
	}
	if err != nil {
		return nil, err
	}
	return &k, nil
}

// RetireLicenseSigningKeys retires the organization's active key as of now, keeping it
// published until validUntil (now plus the longest certificate validity). It is the first
// half of a rotation; CreateLicenseSigningKey is the second. It returns how many keys it
// retired: 0 or 1.
func RetireLicenseSigningKeys(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, now, validUntil time.Time) (int, error) {
	res, err := q.ExecContext(ctx, `UPDATE license_signing_keys SET retired_at = $2, valid_until = $3
		WHERE organization_id = $1 AND retired_at IS NULL`, orgID, now, validUntil)
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// PublishedLicenseSigningKeys returns the keys the organization's JWK Set lists at now: the
// active key and the retired keys that may still have unexpired certificates. The active key
// comes first, then the retired ones, most recently retired first.
func PublishedLicenseSigningKeys(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, now time.Time) ([]*LicenseSigningKey, error) {
	keys := []*LicenseSigningKey{}
	err := sqlx.SelectContext(ctx, q, &keys, `SELECT `+licenseSigningKeyColumns+` FROM license_signing_keys
		WHERE organization_id = $1 AND (retired_at IS NULL OR valid_until > $2)
		ORDER BY retired_at DESC NULLS FIRST, created_at DESC, id`, orgID, now)
	return keys, mapErr(err)
}
