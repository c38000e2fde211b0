package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Member is a person acting for a customer when the organization uses the member model.
type Member struct {
	ID             uuid.UUID  `db:"id"`
	CreatedAt      time.Time  `db:"created_at"`
	ModifiedAt     *time.Time `db:"modified_at"`
	OrganizationID uuid.UUID  `db:"organization_id"`
	CustomerID     uuid.UUID  `db:"customer_id"`
	ExternalID     *string    `db:"external_id"`
	Email          string     `db:"email"`
	Name           *string    `db:"name"`
	Role           string     `db:"role"`
}

const memberColumns = `id, created_at, modified_at, organization_id, customer_id, external_id, email, name, role`

// GetMember reads a live member of a customer by id.
func GetMember(ctx context.Context, q sqlx.ExtContext, customerID, id uuid.UUID) (*Member, error) {
	var m Member
	err := sqlx.GetContext(ctx, q, &m, `SELECT `+memberColumns+` FROM members
		WHERE id = $1 AND customer_id = $2 AND deleted_at IS NULL`, id, customerID)
	return &m, mapErr(err)
}

// GetMemberByExternalID reads a live member of a customer by external id.
func GetMemberByExternalID(ctx context.Context, q sqlx.ExtContext, customerID uuid.UUID, externalID string) (*Member, error) {
	var m Member
	err := sqlx.GetContext(ctx, q, &m, `SELECT `+memberColumns+` FROM members
		WHERE external_id = $1 AND customer_id = $2 AND deleted_at IS NULL`, externalID, customerID)
	return &m, mapErr(err)
}

// EnsureOwnerMember returns the customer's owner member, creating it from the customer's
// email when missing. When a concurrent caller inserts first, ON CONFLICT waits for it and
// skips, but the statement's snapshot predates that row; a second statement sees it.
func EnsureOwnerMember(ctx context.Context, q sqlx.ExtContext, c *Customer) (*Member, error) {
	var m Member
	err := sqlx.GetContext(ctx, q, &m, `WITH ins AS (
			INSERT INTO members (organization_id, customer_id, email, name, role)
			VALUES ($1, $2, $3, $4, 'owner')
			ON CONFLICT DO NOTHING RETURNING `+memberColumns+`)
		SELECT * FROM ins UNION ALL
		SELECT `+memberColumns+` FROM members
		WHERE customer_id = $2 AND role = 'owner' AND deleted_at IS NULL LIMIT 1`,
		c.OrganizationID, c.ID, c.Email, c.Name)
	if err == nil {
		return &m, nil
	}
	if err = mapErr(err); err != ErrNotFound {
		return nil, err
	}
	err = sqlx.GetContext(ctx, q, &m, `SELECT `+memberColumns+` FROM members
		WHERE customer_id = $1 AND role = 'owner' AND deleted_at IS NULL`, c.ID)
	return &m, mapErr(err)
}

// MembersByIDs loads members for a dataloader, one per key in key order, nil where missing.
// Deleted members are included: grants and seats keep pointing at them.
func MembersByIDs(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([]*Member, error) {
	var rows []*Member
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+memberColumns+` FROM members
		WHERE id = ANY($1)`, pq.Array(ids)); err != nil {
		return nil, mapErr(err)
	}
	return inKeyOrder(ids, rows, func(r *Member) uuid.UUID { return r.ID }), nil
}
