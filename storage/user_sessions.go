package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// UserSession is a user's browser session as its owner sees it; only the token's hash is
// stored.
type UserSession struct {
	ID         uuid.UUID  `db:"id"`
	CreatedAt  time.Time  `db:"created_at"`
	UserID     uuid.UUID  `db:"user_id"`
	ExpiresAt  time.Time  `db:"expires_at"`
	LastSeenAt *time.Time `db:"last_seen_at"`
	IP         *string    `db:"ip"`
	UserAgent  string     `db:"user_agent"`
}

const userSessionColumns = `id, created_at, user_id, expires_at, last_seen_at, ip, user_agent`

// UserSessionWrite is a new session: its token's hash, when it ends, and the browser that
// signed in.
type UserSessionWrite struct {
	UserID    uuid.UUID
	Hash      string
	ExpiresAt time.Time
	IP        *string
	UserAgent string
}

// CreateUserSession stores a new session and revokes the user's oldest live sessions past
// keep, so a user holds at most keep sessions however often they sign in. Run it in the
// transaction that verified the sign-in.
func CreateUserSession(ctx context.Context, q sqlx.ExtContext, w UserSessionWrite, keep int) (*UserSession, error) {
	var s UserSession
	err := sqlx.GetContext(ctx, q, &s, `INSERT INTO user_sessions (user_id, token, expires_at, ip, user_agent)
		VALUES ($1, $2, $3, $4, $5) RETURNING `+userSessionColumns, w.UserID, w.Hash, w.ExpiresAt, w.IP, w.UserAgent)
	if err != nil {
		return nil, mapErr(err)
	}
	_, err = q.ExecContext(ctx, `UPDATE user_sessions SET deleted_at = now(), modified_at = now()
		WHERE id IN (SELECT id FROM user_sessions WHERE user_id = $1 AND deleted_at IS NULL
		  ORDER BY created_at DESC, id DESC OFFSET $2)`, w.UserID, keep)
	return &s, mapErr(err)
}

// resolveUserSessionSQL runs on every request a browser session authenticates (past the
// credential cache): one indexed statement that checks expiry, revocation and the user.
const resolveUserSessionSQL = `SELECT s.id, s.user_id, s.expires_at, s.last_seen_at, m.orgs, m.roles
	FROM user_sessions s JOIN users u ON u.id = s.user_id
	CROSS JOIN LATERAL (` + userMembershipsSQL + `) m
	WHERE s.token = $1 AND s.deleted_at IS NULL AND u.deleted_at IS NULL AND s.expires_at > now()`

// ResolveUserSession finds a live session by its token's hash, with its user's live
// memberships and their roles.
func ResolveUserSession(ctx context.Context, q sqlx.ExtContext, hash string) (*ResolvedToken, error) {
	var t ResolvedToken
	var expires time.Time
	var orgs, roles pq.StringArray
	row := q.QueryRowxContext(ctx, resolveUserSessionSQL, hash)
	if err := row.Scan(&t.ID, &t.UserID, &expires, &t.LastUsedAt, &orgs, &roles); err != nil {
		return nil, mapErr(err)
	}
	t.ExpiresAt = &expires
	t.Organizations, t.Roles = memberships(orgs, roles)
	return &t, nil
}

// ListUserSessions returns the user's live sessions, newest first, at most limit.
func ListUserSessions(ctx context.Context, q sqlx.QueryerContext, userID uuid.UUID, limit int) ([]*UserSession, error) {
	var out []*UserSession
	err := sqlx.SelectContext(ctx, q, &out, `SELECT `+userSessionColumns+` FROM user_sessions
		WHERE user_id = $1 AND deleted_at IS NULL AND expires_at > now()
		ORDER BY created_at DESC, id DESC LIMIT $2`, userID, limit)
	return out, mapErr(err)
}

// RevokeUserSession revokes one of the user's live sessions and returns it as it was;
// another user's session, or one already revoked or expired, is not found.
func RevokeUserSession(ctx context.Context, q sqlx.ExtContext, userID, id uuid.UUID) (*UserSession, error) {
	var s UserSession
	err := sqlx.GetContext(ctx, q, &s, `UPDATE user_sessions SET deleted_at = now(), modified_at = now()
		WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL AND expires_at > now()
		RETURNING `+userSessionColumns, id, userID)
	return &s, mapErr(err)
}

// RevokeUserSessionByHash revokes the live session whose token has this hash: signing out
// with the cookie alone. It reports whether there was one.
func RevokeUserSessionByHash(ctx context.Context, q sqlx.ExecerContext, hash string) (bool, error) {
	res, err := q.ExecContext(ctx, `UPDATE user_sessions SET deleted_at = now(), modified_at = now()
		WHERE token = $1 AND deleted_at IS NULL`, hash)
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// TouchUserSession records that the session was used now, unless that was already recorded
// in the last minute.
func TouchUserSession(ctx context.Context, q sqlx.ExecerContext, id uuid.UUID) error {
	_, err := q.ExecContext(ctx, `UPDATE user_sessions SET last_seen_at = now()
		WHERE id = $1 AND (last_seen_at IS NULL OR last_seen_at < now() - interval '1 minute')`, id)
	return mapErr(err)
}

// PurgeUserSessions deletes sessions that expired or were revoked before cutoff; nothing
// reads them any more.
func PurgeUserSessions(ctx context.Context, q sqlx.ExecerContext, cutoff time.Time) (int, error) {
	res, err := q.ExecContext(ctx, `DELETE FROM user_sessions WHERE expires_at < $1 OR deleted_at < $1`, cutoff)
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// UserMembership is an organization a user belongs to and the role they hold there.
type UserMembership struct {
	Role string `db:"role"`
	Organization
}

// ListMemberships returns the user's live memberships of live organizations, the oldest
// first, at most limit.
func ListMemberships(ctx context.Context, q sqlx.QueryerContext, userID uuid.UUID, limit int) ([]*UserMembership, error) {
	var out []*UserMembership
	err := sqlx.SelectContext(ctx, q, &out, `SELECT m.role, o.* FROM user_organizations m
		JOIN LATERAL (SELECT `+organizationColumns+` FROM organizations
		  WHERE id = m.organization_id AND deleted_at IS NULL) o ON true
		WHERE m.user_id = $1 AND m.deleted_at IS NULL
		ORDER BY m.created_at, m.organization_id LIMIT $2`, userID, limit)
	return out, mapErr(err)
}
