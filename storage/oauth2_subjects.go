package storage

import (
	"context"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// OAuth2User is what the consent screen and userinfo show of a user.
type OAuth2User struct {
	ID            uuid.UUID `db:"id"`
	Email         string    `db:"email"`
	EmailVerified bool      `db:"email_verified"`
	AvatarURL     *string   `db:"avatar_url"`
}

// GetOAuth2User reads a live user.
func GetOAuth2User(ctx context.Context, q sqlx.QueryerContext, id uuid.UUID) (*OAuth2User, error) {
	var u OAuth2User
	err := sqlx.GetContext(ctx, q, &u, `SELECT id, email, email_verified, avatar_url FROM users
		WHERE id = $1 AND deleted_at IS NULL`, id)
	if err != nil {
		return nil, mapErr(err)
	}
	return &u, nil
}

// OAuth2Organization is what the consent screen and userinfo show of an organization.
type OAuth2Organization struct {
	ID        uuid.UUID `db:"id"`
	Slug      string    `db:"slug"`
	AvatarURL *string   `db:"avatar_url"`
}

// OAuth2Membership is an organization the consent screen may offer, with the user's role in
// it, which decides whether the user may hand an application the organization itself.
type OAuth2Membership struct {
	OAuth2Organization
	Role string `db:"role"`
}

// ListUserOrganizations lists the live organizations a user is a live member of, with the
// role, oldest membership first, so the consent screen offers them in a stable order.
func ListUserOrganizations(ctx context.Context, q sqlx.QueryerContext, userID uuid.UUID) ([]OAuth2Membership, error) {
	out := []OAuth2Membership{}
	err := sqlx.SelectContext(ctx, q, &out, `SELECT o.id, o.slug, o.avatar_url, uo.role
		FROM user_organizations uo JOIN organizations o ON o.id = uo.organization_id
		WHERE uo.user_id = $1 AND uo.deleted_at IS NULL AND o.deleted_at IS NULL
		ORDER BY uo.created_at, o.id`, userID)
	return out, mapErr(err)
}

// GetOAuth2Organization reads a live organization.
func GetOAuth2Organization(ctx context.Context, q sqlx.QueryerContext, id uuid.UUID) (*OAuth2Organization, error) {
	var o OAuth2Organization
	err := sqlx.GetContext(ctx, q, &o, `SELECT id, slug, avatar_url FROM organizations
		WHERE id = $1 AND deleted_at IS NULL`, id)
	if err != nil {
		return nil, mapErr(err)
	}
	return &o, nil
}

// OAuth2ConsentingRole is userID's role in orgID ("owner", "admin" or "member") when the user,
// the organization and the membership are all live; ErrNotFound otherwise. Consent for an
// organization subject, and every exchange and refresh of what it issued, depends on it.
func OAuth2ConsentingRole(ctx context.Context, q sqlx.QueryerContext, userID, orgID uuid.UUID) (string, error) {
	var role string
	err := sqlx.GetContext(ctx, q, &role, `SELECT uo.role FROM user_organizations uo
		JOIN users u ON u.id = uo.user_id AND u.deleted_at IS NULL
		JOIN organizations o ON o.id = uo.organization_id AND o.deleted_at IS NULL
		WHERE uo.user_id = $1 AND uo.organization_id = $2 AND uo.deleted_at IS NULL`, userID, orgID)
	return role, mapErr(err)
}
