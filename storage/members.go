package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Member is a person acting for a customer: its owner, its billing managers and the holders
// of its seats. Deleting one is a soft delete; grants and seats keep pointing at it.
type Member struct {
	ID             uuid.UUID  `db:"id"`
	CreatedAt      time.Time  `db:"created_at"`
	ModifiedAt     *time.Time `db:"modified_at"`
	OrganizationID uuid.UUID  `db:"organization_id"`
	CustomerID     uuid.UUID  `db:"customer_id"`
	ExternalID     *string    `db:"external_id"`
	Email          string     `db:"email"`
	Name           *string    `db:"name"`
	Role           MemberRole `db:"role"`
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

// GetMemberByEmail reads the live member of a customer with this email, ignoring case.
func GetMemberByEmail(ctx context.Context, q sqlx.ExtContext, customerID uuid.UUID, email string) (*Member, error) {
	var m Member
	err := sqlx.GetContext(ctx, q, &m, `SELECT `+memberColumns+` FROM members
		WHERE customer_id = $1 AND lower(email) = lower($2) AND deleted_at IS NULL`, customerID, email)
	return &m, mapErr(err)
}

// GetCustomerMember reads a customer's member in the given organizations by id: a live one, or with
// deleted also a deleted one (a member.deleted payload shows the member it removed).
func GetCustomerMember(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, deleted bool) (*Member, error) {
	query := `SELECT ` + memberColumns + ` FROM members WHERE id = $1 AND organization_id = ANY($2)`
	if !deleted {
		query += ` AND deleted_at IS NULL`
	}
	var m Member
	err := sqlx.GetContext(ctx, q, &m, query, id, pq.Array(orgs))
	return &m, mapErr(err)
}

// CustomerMembers lists a customer's live members, oldest first: the rules on owners read
// them all (a customer has few).
func CustomerMembers(ctx context.Context, q sqlx.ExtContext, customerID uuid.UUID) ([]*Member, error) {
	rows := []*Member{}
	err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+memberColumns+` FROM members
		WHERE customer_id = $1 AND deleted_at IS NULL ORDER BY created_at, id`, customerID)
	return rows, mapErr(err)
}

// MemberWrite is a new member of a customer. CreatedAt, when set, dates it (an owner is as
// old as its customer); otherwise it is now.
type MemberWrite struct {
	OrganizationID uuid.UUID
	CustomerID     uuid.UUID
	Email          string
	Name           *string
	ExternalID     *string
	Role           MemberRole
	CreatedAt      *time.Time
}

// CreateMember inserts a member. A live member of the customer with the same email (ignoring
// case) or external id, or a second owner, is a *ConflictError naming the index.
func CreateMember(ctx context.Context, q sqlx.ExtContext, w MemberWrite) (*Member, error) {
	var m Member
	err := sqlx.GetContext(ctx, q, &m, `INSERT INTO members (organization_id, customer_id, email, name,
			external_id, role, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, coalesce($7, now())) RETURNING `+memberColumns,
		w.OrganizationID, w.CustomerID, w.Email, w.Name, w.ExternalID, w.Role, w.CreatedAt)
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

// MemberUpdate is a change to a member; unset fields keep their column.
type MemberUpdate struct {
	Email      Omittable[string]
	Name       Omittable[*string]
	ExternalID Omittable[*string]
	Role       Omittable[MemberRole]
}

// IsZero reports whether u changes nothing.
func (u MemberUpdate) IsZero() bool { return isZero(u) }

func (u MemberUpdate) assignments() []assignment {
	return []assignment{u.Email.to("email"), u.Name.to("name"), u.ExternalID.to("external_id"), u.Role.to("role")}
}

// UpdateMember writes the set fields of u to a live member; a zero update reads it. A clash
// with another live member's email or external id is a *ConflictError.
func UpdateMember(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, u MemberUpdate) (*Member, error) {
	if u.IsZero() {
		var m Member
		err := sqlx.GetContext(ctx, q, &m, `SELECT `+memberColumns+` FROM members WHERE id = $1 AND deleted_at IS NULL`, id)
		return &m, mapErr(err)
	}
	sets, args := setClause("modified_at = now()", u, []any{id})
	var m Member
	err := sqlx.GetContext(ctx, q, &m, `UPDATE members SET `+sets+`
		WHERE id = $1 AND deleted_at IS NULL RETURNING `+memberColumns, args...)
	return &m, mapErr(err)
}

// TransferOwnership makes newOwner the owner of its customer and the current owner a billing
// manager, and returns the new owner. The one-owner index is checked row by row and cannot
// be deferred, so the current owner is demoted first: for a moment the customer has none.
func TransferOwnership(ctx context.Context, q sqlx.ExtContext, currentOwner, newOwner uuid.UUID) (*Member, error) {
	if _, err := q.ExecContext(ctx, `UPDATE members SET role = 'billing_manager', modified_at = now()
		WHERE id = $1 AND role = 'owner' AND deleted_at IS NULL`, currentOwner); err != nil {
		return nil, mapErr(err)
	}
	var m Member
	err := sqlx.GetContext(ctx, q, &m, `UPDATE members SET role = 'owner', modified_at = now()
		WHERE id = $1 AND deleted_at IS NULL RETURNING `+memberColumns, newOwner)
	return &m, mapErr(err)
}

// DeleteMember soft-deletes a live member and returns it; its sessions stop at once.
func DeleteMember(ctx context.Context, q sqlx.ExtContext, id uuid.UUID) (*Member, error) {
	var m Member
	err := sqlx.GetContext(ctx, q, &m, `UPDATE members SET deleted_at = now(), modified_at = now()
		WHERE id = $1 AND deleted_at IS NULL RETURNING `+memberColumns, id)
	return &m, mapErr(err)
}

// DeleteCustomerMembers soft-deletes every live member of a customer, the owner included,
// and returns them: a deleted customer keeps no people.
func DeleteCustomerMembers(ctx context.Context, q sqlx.ExtContext, customerID uuid.UUID) ([]*Member, error) {
	rows := []*Member{}
	err := sqlx.SelectContext(ctx, q, &rows, `UPDATE members SET deleted_at = now(), modified_at = now()
		WHERE customer_id = $1 AND deleted_at IS NULL RETURNING `+memberColumns, customerID)
	return rows, mapErr(err)
}

// SyncOwnerEmail gives the customer's owner the customer's email when it differs (ignoring
// case) and returns the owner it changed, or nil when there was nothing to change. Another
// live member holding that email is a *ConflictError.
func SyncOwnerEmail(ctx context.Context, q sqlx.ExtContext, customerID uuid.UUID, email string) (*Member, error) {
	var m Member
	err := sqlx.GetContext(ctx, q, &m, `UPDATE members SET email = $2, modified_at = now()
		WHERE customer_id = $1 AND role = 'owner' AND deleted_at IS NULL AND lower(email) <> lower($2)
		RETURNING `+memberColumns, customerID, email)
	if err = mapErr(err); err == ErrNotFound {
		return nil, nil
	}
	return &m, err
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
