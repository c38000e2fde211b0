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

// LicenseKeyListFilter narrows a license-key list.
type LicenseKeyListFilter struct {
	OrganizationIDs []uuid.UUID
	BenefitIDs      []uuid.UUID
	Statuses        []string
	// CustomerID and MemberID scope the portal lists: a customer sees its keys, a member the
	// keys it holds.
	CustomerID *uuid.UUID
	MemberID   *uuid.UUID
}

// ListLicenseKeys returns one page of the organizations' live keys, oldest first as upstream
// orders them.
func ListLicenseKeys(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f LicenseKeyListFilter, p Page) ([]*LicenseKey, int, error) {
	w := newFilters([]string{"organization_id = ANY($1)", "deleted_at IS NULL"}, pq.Array(orgs))
	anyOf(w, "organization_id", f.OrganizationIDs)
	anyOf(w, "benefit_id", f.BenefitIDs)
	anyOf(w, "status", f.Statuses)
	ifSet(w, "customer_id = $%d", f.CustomerID)
	ifSet(w, "member_id = $%d", f.MemberID)
	return listPage[*LicenseKey](ctx, q, "SELECT "+licenseKeyColumns+" FROM license_keys", w.where, w.args,
		" ORDER BY created_at, id", p)
}
