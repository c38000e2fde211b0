package storage

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// ErrTooManyTokens is a user who already holds the most live personal tokens allowed.
var ErrTooManyTokens = errors.New("storage: too many personal access tokens")

// PersonalAccessToken is a user's token as its owner sees it; only its hash is stored.
type PersonalAccessToken struct {
	ID         uuid.UUID  `db:"id"`
	CreatedAt  time.Time  `db:"created_at"`
	ModifiedAt *time.Time `db:"modified_at"`
	UserID     uuid.UUID  `db:"user_id"`
	Comment    string     `db:"comment"`
	Scope      string     `db:"scope"`
	ExpiresAt  *time.Time `db:"expires_at"`
	LastUsedAt *time.Time `db:"last_used_at"`
}

const personalTokenColumns = `id, created_at, modified_at, user_id, comment, scope, expires_at, last_used_at`

// CreatePersonalToken stores the hash of a new token of a live user who holds fewer than
// limit live tokens (expired ones count until revoked). The user row is locked while
// counting, so two creations at once cannot both pass the limit.
func CreatePersonalToken(ctx context.Context, db *sqlx.DB, userID uuid.UUID, hash, scope, comment string, expiresAt *time.Time, limit int) (*PersonalAccessToken, error) {
	var t PersonalAccessToken
	err := InTx(ctx, db, func(tx *sqlx.Tx) error {
		var live int
		if err := tx.GetContext(ctx, &live, `SELECT (SELECT count(*) FROM personal_access_tokens
			  WHERE user_id = u.id AND deleted_at IS NULL)
			FROM users u WHERE u.id = $1 AND u.deleted_at IS NULL FOR UPDATE`, userID); err != nil {
			return mapErr(err)
		}
		if live >= limit {
			return ErrTooManyTokens
		}
		return mapErr(tx.GetContext(ctx, &t, `INSERT INTO personal_access_tokens
			(user_id, token, scope, comment, expires_at) VALUES ($1, $2, $3, $4, $5)
			RETURNING `+personalTokenColumns, userID, hash, scope, comment, expiresAt))
	})
	return &t, err
}

// ListPersonalTokens returns the user's tokens that are not revoked, expired ones included so
// their owner can see and remove them, newest first.
func ListPersonalTokens(ctx context.Context, q sqlx.QueryerContext, userID uuid.UUID) ([]*PersonalAccessToken, error) {
	var out []*PersonalAccessToken
	err := sqlx.SelectContext(ctx, q, &out, `SELECT `+personalTokenColumns+` FROM personal_access_tokens
		WHERE user_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC, id`, userID)
	return out, mapErr(err)
}

// RevokePersonalToken revokes one of the user's tokens and returns it as it was; another
// user's token, or one already revoked, is not found.
func RevokePersonalToken(ctx context.Context, q sqlx.ExtContext, userID, id uuid.UUID) (*PersonalAccessToken, error) {
	var t PersonalAccessToken
	err := sqlx.GetContext(ctx, q, &t, `UPDATE personal_access_tokens SET deleted_at = now(), modified_at = now()
		WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL RETURNING `+personalTokenColumns, id, userID)
	return &t, mapErr(err)
}

// TouchPersonalToken records that the token was used now, unless that was already recorded
// in the last minute: a token in constant use costs one write a minute, not one a request.
func TouchPersonalToken(ctx context.Context, q sqlx.ExecerContext, id uuid.UUID) error {
	_, err := q.ExecContext(ctx, `UPDATE personal_access_tokens SET last_used_at = now()
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`, id)
	return mapErr(err)
}
