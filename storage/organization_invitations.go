package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// OrganizationInvitation is an invitation to join an organization with a role. Only the
// HMAC of its token is stored, and never read back.
type OrganizationInvitation struct {
	ID             uuid.UUID  `db:"id"`
	CreatedAt      time.Time  `db:"created_at"`
	ModifiedAt     *time.Time `db:"modified_at"`
	OrganizationID uuid.UUID  `db:"organization_id"`
	Email          string     `db:"email"`
	Role           string     `db:"role"`
	InvitedBy      *uuid.UUID `db:"invited_by"`
	ExpiresAt      time.Time  `db:"expires_at"`
	AcceptedAt     *time.Time `db:"accepted_at"`
	AcceptedBy     *uuid.UUID `db:"accepted_by"`
	CancelledAt    *time.Time `db:"cancelled_at"`
}

const invitationColumns = `id, created_at, modified_at, organization_id, email, role, invited_by, expires_at,
	accepted_at, accepted_by, cancelled_at`

// InvitationWrite is a new or refreshed invitation.
type InvitationWrite struct {
	OrganizationID uuid.UUID
	Email, Role    string
	// TokenHash is the HMAC of the link's token.
	TokenHash string
	InvitedBy *uuid.UUID
	ExpiresAt time.Time
}

// UpsertInvitation stores the organization's pending invitation for the email, or refreshes
// the one there is (compared without case): the new role, token, inviter and expiry replace
// the old ones, so only the newest link works.
func UpsertInvitation(ctx context.Context, q sqlx.ExtContext, w InvitationWrite) (*OrganizationInvitation, error) {
	var inv OrganizationInvitation
	err := sqlx.GetContext(ctx, q, &inv, `INSERT INTO organization_invitations
		  (organization_id, email, role, token, invited_by, expires_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (organization_id, lower(email)) WHERE accepted_at IS NULL AND cancelled_at IS NULL
		DO UPDATE SET email = EXCLUDED.email, role = EXCLUDED.role, token = EXCLUDED.token,
		  invited_by = EXCLUDED.invited_by, expires_at = EXCLUDED.expires_at, modified_at = now()
		RETURNING `+invitationColumns, w.OrganizationID, w.Email, w.Role, w.TokenHash, w.InvitedBy, w.ExpiresAt)
	return &inv, mapErr(err)
}

// ListPendingInvitations returns one window of the organization's invitations that were
// neither accepted nor cancelled, expired ones included so they can be sent again or
// cancelled, newest first.
func ListPendingInvitations(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, w Window) (Paged[*OrganizationInvitation], error) {
	return listWindow[*OrganizationInvitation](ctx, q, listSQL{Columns: invitationColumns, From: "organization_invitations",
		ID: "id", Where: []string{"organization_id = $1", "accepted_at IS NULL", "cancelled_at IS NULL"}, Args: []any{orgID},
		Default: []Sort{{Column: "created_at", Desc: true}}}, w)
}

// LockPendingInvitation reads a pending invitation of one of orgs by id and locks it.
func LockPendingInvitation(ctx context.Context, tx *sqlx.Tx, orgs []uuid.UUID, id uuid.UUID) (*OrganizationInvitation, error) {
	var inv OrganizationInvitation
	err := tx.GetContext(ctx, &inv, `SELECT `+invitationColumns+` FROM organization_invitations
		WHERE id = $1 AND organization_id = ANY($2) AND accepted_at IS NULL AND cancelled_at IS NULL FOR UPDATE`,
		id, pq.Array(orgs))
	return &inv, mapErr(err)
}

// CancelInvitation cancels a pending invitation and returns it cancelled.
func CancelInvitation(ctx context.Context, q sqlx.ExtContext, id uuid.UUID) (*OrganizationInvitation, error) {
	var inv OrganizationInvitation
	err := sqlx.GetContext(ctx, q, &inv, `UPDATE organization_invitations SET cancelled_at = now(), modified_at = now()
		WHERE id = $1 AND accepted_at IS NULL AND cancelled_at IS NULL RETURNING `+invitationColumns, id)
	return &inv, mapErr(err)
}

// LockInvitationByToken reads the invitation whose token has this HMAC, whatever its state
// (the caller tells the states apart), with its organization live, and locks it so that it
// is accepted once.
func LockInvitationByToken(ctx context.Context, tx *sqlx.Tx, hash string) (*OrganizationInvitation, error) {
	var inv OrganizationInvitation
	err := tx.GetContext(ctx, &inv, `SELECT `+qualify("i", invitationColumns)+` FROM organization_invitations i
		JOIN organizations o ON o.id = i.organization_id AND o.deleted_at IS NULL
		WHERE i.token = $1 FOR UPDATE OF i`, hash)
	return &inv, mapErr(err)
}

// MarkInvitationAccepted records that userID accepted the invitation.
func MarkInvitationAccepted(ctx context.Context, q sqlx.ExtContext, id, userID uuid.UUID) (*OrganizationInvitation, error) {
	var inv OrganizationInvitation
	err := sqlx.GetContext(ctx, q, &inv, `UPDATE organization_invitations SET accepted_at = now(), accepted_by = $2,
		modified_at = now() WHERE id = $1 RETURNING `+invitationColumns, id, userID)
	return &inv, mapErr(err)
}
