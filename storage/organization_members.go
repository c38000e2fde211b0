package storage

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// ErrLastOwner is a change that would leave an organization that has an owner without one;
// the database refuses it (user_organizations_keep_owner), whoever makes it.
var ErrLastOwner = errors.New("storage: an organization keeps at least one owner")

// OrganizationMember is a user's live membership of an organization, with the user's email.
type OrganizationMember struct {
	UserID         uuid.UUID `db:"user_id"`
	OrganizationID uuid.UUID `db:"organization_id"`
	Email          string    `db:"email"`
	Role           string    `db:"role"`
	// CreatedAt is when the user joined (or, for a membership revived after a removal,
	// first joined).
	CreatedAt time.Time `db:"created_at"`
}

const organizationMemberColumns = `uo.user_id, uo.organization_id, u.email, uo.role, uo.created_at`

// organizationMemberFrom joins live memberships to their live users.
const organizationMemberFrom = `user_organizations uo JOIN users u ON u.id = uo.user_id AND u.deleted_at IS NULL`

// OrganizationMemberSortColumns maps the sort properties of the member list to SQL.
var OrganizationMemberSortColumns = map[string]string{
	"created_at": "uo.created_at",
	"email":      "lower(u.email)",
	"role":       "uo.role",
}

// ListOrganizationMembers returns one window of the organization's live members, oldest
// first unless sorted otherwise.
func ListOrganizationMembers(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, sorts []Sort, w Window) (Paged[*OrganizationMember], error) {
	return listWindow[*OrganizationMember](ctx, q, listSQL{Columns: organizationMemberColumns, From: organizationMemberFrom,
		ID: "uo.user_id", Where: []string{"uo.organization_id = $1", "uo.deleted_at IS NULL"}, Args: []any{orgID},
		Sorts: sorts, Default: []Sort{{Column: "uo.created_at"}}}, w)
}

// GetOrganizationMember reads one live membership.
func GetOrganizationMember(ctx context.Context, q sqlx.QueryerContext, orgID, userID uuid.UUID) (*OrganizationMember, error) {
	var m OrganizationMember
	err := sqlx.GetContext(ctx, q, &m, `SELECT `+organizationMemberColumns+` FROM `+organizationMemberFrom+`
		WHERE uo.organization_id = $1 AND uo.user_id = $2 AND uo.deleted_at IS NULL`, orgID, userID)
	return &m, mapErr(err)
}

// LockOrganizationMember reads one live membership and locks it until the transaction ends,
// so a rule that compares it with the caller's (an admin may not touch an owner) holds for
// the change that follows.
func LockOrganizationMember(ctx context.Context, tx *sqlx.Tx, orgID, userID uuid.UUID) (*OrganizationMember, error) {
	var m OrganizationMember
	err := tx.GetContext(ctx, &m, `SELECT `+organizationMemberColumns+` FROM `+organizationMemberFrom+`
		WHERE uo.organization_id = $1 AND uo.user_id = $2 AND uo.deleted_at IS NULL FOR UPDATE OF uo`, orgID, userID)
	return &m, mapErr(err)
}

// SetOrganizationMemberRole changes a live membership's role. Demoting the last owner is
// ErrLastOwner.
func SetOrganizationMemberRole(ctx context.Context, q sqlx.ExtContext, orgID, userID uuid.UUID, role string) (*OrganizationMember, error) {
	var m OrganizationMember
	err := sqlx.GetContext(ctx, q, &m, `WITH changed AS (UPDATE user_organizations uo SET role = $3, modified_at = now()
		  WHERE organization_id = $1 AND user_id = $2 AND deleted_at IS NULL RETURNING uo.*)
		SELECT `+organizationMemberColumns+` FROM changed uo JOIN users u ON u.id = uo.user_id`, orgID, userID, role)
	return &m, memberErr(err)
}

// RemoveOrganizationMember ends a live membership and returns it as it was. Removing the last
// owner is ErrLastOwner.
func RemoveOrganizationMember(ctx context.Context, q sqlx.ExtContext, orgID, userID uuid.UUID) (*OrganizationMember, error) {
	var m OrganizationMember
	err := sqlx.GetContext(ctx, q, &m, `WITH removed AS (UPDATE user_organizations uo SET deleted_at = now(), modified_at = now()
		  WHERE organization_id = $1 AND user_id = $2 AND deleted_at IS NULL RETURNING uo.*)
		SELECT `+organizationMemberColumns+` FROM removed uo JOIN users u ON u.id = uo.user_id`, orgID, userID)
	return &m, memberErr(err)
}

// memberErr maps the last-owner refusal of the database to ErrLastOwner.
func memberErr(err error) error {
	if isConstraint(err, "user_organizations_last_owner") {
		return ErrLastOwner
	}
	return mapErr(err)
}

// isConstraint reports whether err is PostgreSQL's refusal by the named constraint.
func isConstraint(err error, name string) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && pqErr.Constraint == name
}

// LockMemberships takes the organization's membership lock (its row, FOR NO KEY UPDATE, the
// lock the last-owner check takes too) until the transaction ends, and returns the live
// role userID holds there now ("" for none). Member management takes it first, so a rule
// that compares the caller's role with another member's reads both as they are, and two
// changes of one organization's members run one after the other.
func LockMemberships(ctx context.Context, tx *sqlx.Tx, orgID, userID uuid.UUID) (string, error) {
	var role *string
	err := tx.GetContext(ctx, &role, `SELECT (SELECT role FROM user_organizations
		  WHERE organization_id = o.id AND user_id = $2 AND deleted_at IS NULL)
		FROM organizations o WHERE o.id = $1 AND o.deleted_at IS NULL FOR NO KEY UPDATE`, orgID, userID)
	if err != nil || role == nil {
		return "", mapErr(err)
	}
	return *role, nil
}

// IsMemberByEmail reports whether a live user with this email (compared without case) is a
// live member of the organization.
func IsMemberByEmail(ctx context.Context, q sqlx.QueryerContext, orgID uuid.UUID, email string) (bool, error) {
	var member bool
	err := sqlx.GetContext(ctx, q, &member, `SELECT EXISTS (SELECT 1 FROM `+organizationMemberFrom+`
		WHERE uo.organization_id = $1 AND uo.deleted_at IS NULL AND lower(u.email) = lower($2))`, orgID, email)
	return member, mapErr(err)
}
