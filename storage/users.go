package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// User is a person who signs in to manage organizations.
type User struct {
	ID            uuid.UUID `db:"id"`
	CreatedAt     time.Time `db:"created_at"`
	Email         string    `db:"email"`
	EmailVerified bool      `db:"email_verified"`
	// Created tells EnsureVerifiedUser's caller whether the row is new.
	Created bool `db:"created"`
}

// EnsureVerifiedUser returns the live user with this email, compared without case, creating
// it when there is none, and marks the email verified. It is one statement, so two runs at
// once still make one user.
func EnsureVerifiedUser(ctx context.Context, q sqlx.ExtContext, email string) (*User, error) {
	var u User
	err := sqlx.GetContext(ctx, q, &u, `INSERT INTO users (email, email_verified) VALUES ($1, true)
		ON CONFLICT (lower(email)) WHERE deleted_at IS NULL DO UPDATE SET email_verified = true,
		  modified_at = CASE WHEN users.email_verified THEN users.modified_at ELSE now() END
		RETURNING id, created_at, email, email_verified, xmax = 0 AS created`, email)
	return &u, mapErr(err)
}

// GetUserByEmail finds the live user with this email, compared without case.
func GetUserByEmail(ctx context.Context, q sqlx.QueryerContext, email string) (*User, error) {
	var u User
	err := sqlx.GetContext(ctx, q, &u, `SELECT id, created_at, email, email_verified, false AS created
		FROM users WHERE lower(email) = lower($1) AND deleted_at IS NULL`, email)
	return &u, mapErr(err)
}

// JoinOrganization makes the user a member of the organization with role, reviving a
// removed membership, and returns the membership's role: an existing live membership keeps
// its own, which the caller compares with what it asked for.
func JoinOrganization(ctx context.Context, q sqlx.ExtContext, userID, orgID uuid.UUID, role string) (string, error) {
	var got string
	err := sqlx.GetContext(ctx, q, &got, `INSERT INTO user_organizations (user_id, organization_id, role)
		VALUES ($1, $2, $3)
		ON CONFLICT (user_id, organization_id) DO UPDATE SET
		  role = CASE WHEN user_organizations.deleted_at IS NULL THEN user_organizations.role ELSE EXCLUDED.role END,
		  deleted_at = NULL,
		  modified_at = CASE WHEN user_organizations.deleted_at IS NULL THEN user_organizations.modified_at ELSE now() END
		RETURNING role`, userID, orgID, role)
	return got, mapErr(err)
}

// GetUser finds the live user with this id.
func GetUser(ctx context.Context, q sqlx.QueryerContext, id uuid.UUID) (*User, error) {
	var u User
	err := sqlx.GetContext(ctx, q, &u, `SELECT id, created_at, email, email_verified, false AS created
		FROM users WHERE id = $1 AND deleted_at IS NULL`, id)
	return &u, mapErr(err)
}
