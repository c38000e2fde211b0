package storage

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

const grantColumns = `id, created_at, modified_at, organization_id, benefit_id, customer_id, member_id,
	subscription_id, order_id, granted_at, revoked_at, properties, error`

// GrantKey names one grant: who holds which benefit, and because of which subscription or
// order. It is the unique key of benefit_grants (NULLs equal).
type GrantKey struct {
	OrganizationID uuid.UUID
	BenefitID      uuid.UUID
	CustomerID     uuid.UUID
	MemberID       *uuid.UUID
	SubscriptionID *uuid.UUID
	OrderID        *uuid.UUID
}

// GrantChange says what UpsertGrant did.
type GrantChange int

const (
	// GrantUnchanged: the grant was already granted and is left alone.
	GrantUnchanged GrantChange = iota
	// GrantCreated: a new grant row was inserted, granted.
	GrantCreated
	// GrantRegranted: a revoked, pending or failed grant was granted again.
	GrantRegranted
)

// UpsertGrant grants k at now in one statement: it inserts the grant, or grants again an
// existing one that is not granted (clearing revoked_at and error), or leaves a granted one
// alone (nil grant, GrantUnchanged). Concurrent callers serialise on the unique index: the
// losers wait for the winner's commit and then see a granted row, so exactly one of them
// creates it. The row stays locked until the caller's transaction ends.
func UpsertGrant(ctx context.Context, q sqlx.ExtContext, k GrantKey, now time.Time) (*BenefitGrant, GrantChange, error) {
	var row struct {
		BenefitGrant
		Inserted bool `db:"inserted"`
	}
	err := sqlx.GetContext(ctx, q, &row, `INSERT INTO benefit_grants (created_at, organization_id, benefit_id,
			customer_id, member_id, subscription_id, order_id, granted_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $1)
		ON CONFLICT (customer_id, benefit_id, member_id, subscription_id, order_id) WHERE deleted_at IS NULL
		DO UPDATE SET granted_at = EXCLUDED.granted_at, revoked_at = NULL, revoke_requested_at = NULL,
			error = NULL, modified_at = EXCLUDED.granted_at
		WHERE benefit_grants.granted_at IS NULL
		RETURNING `+grantColumns+`, (xmax = 0) AS inserted`,
		now, k.OrganizationID, k.BenefitID, k.CustomerID, k.MemberID, k.SubscriptionID, k.OrderID)
	if err = mapErr(err); err == ErrNotFound {
		return nil, GrantUnchanged, nil
	}
	if err != nil {
		return nil, GrantUnchanged, err
	}
	g := row.BenefitGrant
	if row.Inserted {
		return &g, GrantCreated, nil
	}
	return &g, GrantRegranted, nil
}

// SetGrantProperties stores what a grant produced (e.g. its license key).
func SetGrantProperties(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, props RawJSON) (*BenefitGrant, error) {
	var g BenefitGrant
	err := sqlx.GetContext(ctx, q, &g, `UPDATE benefit_grants SET properties = $2
		WHERE id = $1 RETURNING `+grantColumns, id, props)
	return &g, mapErr(err)
}

// GrantRevocation selects the live, not yet revoked grants of a subscription or an order to
// revoke.
type GrantRevocation struct {
	OrganizationID uuid.UUID
	CustomerID     uuid.UUID
	SubscriptionID *uuid.UUID
	OrderID        *uuid.UUID
	// AnyMember revokes the grants of the customer and of all its members; otherwise only
	// those whose member_id equals MemberID (nil: the customer's own).
	AnyMember bool
	MemberID  *uuid.UUID
	// KeepBenefits are left granted: the benefits the product still has.
	KeepBenefits []uuid.UUID
}

// RevokeGrants revokes the selected grants at now (granted_at cleared, revoked_at set) and
// returns them; grants already revoked are not selected, so a second call returns none.
func RevokeGrants(ctx context.Context, q sqlx.ExtContext, r GrantRevocation, now time.Time) ([]*BenefitGrant, error) {
	w := newFilters([]string{"organization_id = $1", "customer_id = $2", "subscription_id IS NOT DISTINCT FROM $3",
		"order_id IS NOT DISTINCT FROM $4", "deleted_at IS NULL", "revoked_at IS NULL"},
		r.OrganizationID, r.CustomerID, r.SubscriptionID, r.OrderID, now)
	if !r.AnyMember {
		w.add("member_id IS NOT DISTINCT FROM $%d", r.MemberID)
	}
	if r.KeepBenefits != nil {
		w.add("benefit_id <> ALL($%d)", pq.Array(r.KeepBenefits))
	}
	var rows []*BenefitGrant
	err := sqlx.SelectContext(ctx, q, &rows, `UPDATE benefit_grants
		SET granted_at = NULL, revoked_at = $5, revoke_requested_at = NULL, modified_at = $5
		WHERE `+strings.Join(w.where, " AND ")+` RETURNING `+grantColumns, w.args...)
	return rows, mapErr(err)
}

// GetGrant reads a live grant of the given organizations.
func GetGrant(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*BenefitGrant, error) {
	var g BenefitGrant
	err := sqlx.GetContext(ctx, q, &g, `SELECT `+grantColumns+` FROM benefit_grants
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL`, id, pq.Array(orgs))
	return &g, mapErr(err)
}

// LiveProductBenefits lists the live benefits of a product of the organization, in the
// product's order: the benefits a purchase of it grants.
func LiveProductBenefits(ctx context.Context, q sqlx.ExtContext, orgID, productID uuid.UUID) ([]*Benefit, error) {
	rows := []*Benefit{}
	err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+benefitColumnsB+`
		FROM product_benefits pb JOIN benefits b ON b.id = pb.benefit_id
		WHERE pb.product_id = $1 AND b.organization_id = $2 AND b.deleted_at IS NULL
		ORDER BY pb."order", pb.created_at`, productID, orgID)
	return rows, mapErr(err)
}
