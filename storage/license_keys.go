package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

const licenseKeyColumns = `id, created_at, modified_at, organization_id, benefit_id, customer_id, member_id,
	key, display_key, status, limit_activations, usage, limit_usage, validations, last_validated_at, expires_at`

// LicenseKeyTerms are the limits a license-key benefit puts on the keys it issues.
type LicenseKeyTerms struct {
	LimitActivations *int
	LimitUsage       *int
	ExpiresAt        *time.Time
}

// IssueLicenseKey stores a new granted key for a customer (or member) unless the key is
// already used in the organization, in which case it returns ErrConflict without failing
// the caller's transaction, so the caller can draw another key.
func IssueLicenseKey(ctx context.Context, q sqlx.ExtContext, orgID, benefitID, customerID uuid.UUID, memberID *uuid.UUID,
	key string, t LicenseKeyTerms, now time.Time) (*LicenseKey, error) {
	var k LicenseKey
	err := sqlx.GetContext(ctx, q, &k, `INSERT INTO license_keys (created_at, organization_id, benefit_id,
			customer_id, member_id, key, limit_activations, limit_usage, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (organization_id, key) DO NOTHING RETURNING `+licenseKeyColumns,
		now, orgID, benefitID, customerID, memberID, key, t.LimitActivations, t.LimitUsage, t.ExpiresAt)
	if err = mapErr(err); err == ErrNotFound {
		return nil, ErrConflict
	}
	return &k, err
}

// RegrantLicenseKey enables a key again with the benefit's current terms, as upstream's
// grant update does; ErrNotFound when the key is gone (deleted, or not the grant's).
func RegrantLicenseKey(ctx context.Context, q sqlx.ExtContext, orgID, benefitID, id uuid.UUID, t LicenseKeyTerms, now time.Time) (*LicenseKey, error) {
	var k LicenseKey
	err := sqlx.GetContext(ctx, q, &k, `UPDATE license_keys SET status = 'granted', limit_activations = $4,
			limit_usage = $5, expires_at = $6, modified_at = $7
		WHERE id = $1 AND organization_id = $2 AND benefit_id = $3 AND deleted_at IS NULL
		RETURNING `+licenseKeyColumns, id, orgID, benefitID, t.LimitActivations, t.LimitUsage, t.ExpiresAt, now)
	return &k, mapErr(err)
}

// RevokeLicenseKeys turns the organization's keys with the given ids revoked.
func RevokeLicenseKeys(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, ids []uuid.UUID, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := q.ExecContext(ctx, `UPDATE license_keys SET status = 'revoked', modified_at = $3
		WHERE id = ANY($1) AND organization_id = $2 AND status <> 'revoked'`, pq.Array(ids), orgID, now)
	return mapErr(err)
}

// LicenseKeyOwner scopes a key lookup to a portal session: a customer's keys, or a member's.
type LicenseKeyOwner struct {
	CustomerID *uuid.UUID
	MemberID   *uuid.UUID
}

// GetLicenseKey reads a live key of the organizations, narrowed to an owner when given.
func GetLicenseKey(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, owner LicenseKeyOwner) (*LicenseKey, error) {
	var k LicenseKey
	err := sqlx.GetContext(ctx, q, &k, `SELECT `+licenseKeyColumns+` FROM license_keys
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL
			AND ($3::uuid IS NULL OR customer_id = $3) AND ($4::uuid IS NULL OR member_id = $4)`,
		id, pq.Array(orgs), owner.CustomerID, owner.MemberID)
	return &k, mapErr(err)
}

// LicenseKeysByIDs returns keys in key order, nil for missing ones (the key loader).
func LicenseKeysByIDs(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([]*LicenseKey, error) {
	var rows []*LicenseKey
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+licenseKeyColumns+` FROM license_keys
		WHERE id = ANY($1)`, pq.Array(ids)); err != nil {
		return nil, mapErr(err)
	}
	return inKeyOrder(ids, rows, func(k *LicenseKey) uuid.UUID { return k.ID }), nil
}

// LicenseKeyUpdate is a partial update: a field is written only when its Set flag is true;
// a nil value then writes NULL.
type LicenseKeyUpdate struct {
	Status                                         *LicenseKeyStatus
	Usage                                          *int
	SetLimitActivations, SetLimitUsage, SetExpires bool
	LimitActivations, LimitUsage                   *int
	ExpiresAt                                      *time.Time
}

// UpdateLicenseKey applies a partial update to a live key of the organizations and returns
// the key with the status it had before, so the caller can tell a status change.
func UpdateLicenseKey(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, u LicenseKeyUpdate, now time.Time) (*LicenseKey, LicenseKeyStatus, error) {
	var row struct {
		LicenseKey
		PreviousStatus LicenseKeyStatus `db:"previous_status"`
	}
	err := sqlx.GetContext(ctx, q, &row, `UPDATE license_keys k SET
			status = coalesce($3, k.status),
			usage = coalesce($4, k.usage),
			limit_activations = CASE WHEN $5 THEN $6::integer ELSE k.limit_activations END,
			limit_usage = CASE WHEN $7 THEN $8::integer ELSE k.limit_usage END,
			expires_at = CASE WHEN $9 THEN $10::timestamptz ELSE k.expires_at END,
			modified_at = $11
		FROM (SELECT id, status FROM license_keys WHERE id = $1 AND organization_id = ANY($2) FOR UPDATE) old
		WHERE k.id = old.id AND k.organization_id = ANY($2) AND k.deleted_at IS NULL
		RETURNING `+prefixed("k", licenseKeyColumns)+`, old.status AS previous_status`,
		id, pq.Array(orgs), u.Status, u.Usage, u.SetLimitActivations, u.LimitActivations,
		u.SetLimitUsage, u.LimitUsage, u.SetExpires, u.ExpiresAt, now)
	if err != nil {
		return nil, "", mapErr(err)
	}
	return &row.LicenseKey, row.PreviousStatus, nil
}

// ReplaceLicenseKey gives a live key new text (ErrConflict when the text is taken) and
// updates the display key its grants show.
func ReplaceLicenseKey(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, key string, now time.Time) (*LicenseKey, error) {
	var k LicenseKey
	err := sqlx.GetContext(ctx, q, &k, `UPDATE license_keys SET key = $3, modified_at = $4
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL RETURNING `+licenseKeyColumns,
		id, pq.Array(orgs), key, now)
	if err = mapErr(err); err != nil {
		return nil, err
	}
	_, err = q.ExecContext(ctx, `UPDATE benefit_grants SET properties = jsonb_set(properties, '{display_key}', to_jsonb($3::text))
		WHERE organization_id = $1 AND properties->>'license_key_id' = $2::text AND deleted_at IS NULL`,
		k.OrganizationID, k.ID, k.DisplayKey)
	return &k, mapErr(err)
}

// SetLicenseKeyGrants grants again (granted) or revokes the live grants that issued a key
// and returns the grants it changed; grants already in that state are left alone.
func SetLicenseKeyGrants(ctx context.Context, q sqlx.ExtContext, orgID, keyID uuid.UUID, granted bool, now time.Time) ([]*BenefitGrant, error) {
	set, state := `granted_at = NULL, revoked_at = $3`, `revoked_at IS NULL`
	if granted {
		set, state = `granted_at = $3, revoked_at = NULL, error = NULL`, `granted_at IS NULL`
	}
	var rows []*BenefitGrant
	err := sqlx.SelectContext(ctx, q, &rows, `UPDATE benefit_grants SET `+set+`, revoke_requested_at = NULL, modified_at = $3
		WHERE organization_id = $1 AND properties->>'license_key_id' = $2::text AND deleted_at IS NULL AND `+state+`
		RETURNING `+grantColumns, orgID, keyID, now)
	return rows, mapErr(err)
}
