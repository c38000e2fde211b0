package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// LoginCode is a one-time sign-in code (and its magic link) as redemption reads it.
type LoginCode struct {
	ID        uuid.UUID  `db:"id"`
	CreatedAt time.Time  `db:"created_at"`
	Email     string     `db:"email"`
	ExpiresAt time.Time  `db:"expires_at"`
	UsedAt    *time.Time `db:"used_at"`
	Attempts  int        `db:"attempts"`
	ReturnTo  string     `db:"return_to"`
	// Matched tells a redemption's caller whether the code it offered was the right one.
	Matched bool `db:"matched"`
}

const loginCodeColumns = `id, created_at, email, expires_at, used_at, attempts, return_to`

// LoginCodeWrite is a new code for an email: the hashes of the code and of the link token,
// when both stop working, and where the link leads.
type LoginCodeWrite struct {
	Email, EmailKey    string
	CodeHash, LinkHash string
	ExpiresAt          time.Time
	ReturnTo           string
}

// PutLoginCode makes w the email's pending code, replacing the one pending before (its code
// and link stop working, and its wrong guesses are forgotten with it).
func PutLoginCode(ctx context.Context, q sqlx.ExtContext, w LoginCodeWrite) error {
	_, err := q.ExecContext(ctx, `INSERT INTO login_codes (email, email_key, code_hash, link_hash, expires_at, return_to)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (email_key) WHERE used_at IS NULL DO UPDATE SET created_at = now(), email = EXCLUDED.email,
		  code_hash = EXCLUDED.code_hash, link_hash = EXCLUDED.link_hash, expires_at = EXCLUDED.expires_at,
		  attempts = 0, return_to = EXCLUDED.return_to`,
		w.Email, w.EmailKey, w.CodeHash, w.LinkHash, w.ExpiresAt, w.ReturnTo)
	return mapErr(err)
}

// RedeemLoginCode offers codeHash for the email's pending code, alive at now with fewer than
// maxAttempts wrong guesses. The right code is used up (Matched); a wrong one counts a
// guess. It is one statement, so of several redemptions at once exactly one can match and
// no more than maxAttempts guesses are ever counted. ErrNotFound means no code was alive.
func RedeemLoginCode(ctx context.Context, q sqlx.ExtContext, emailKey, codeHash string, now time.Time, maxAttempts int) (*LoginCode, error) {
	var c LoginCode
	err := sqlx.GetContext(ctx, q, &c, `UPDATE login_codes SET
		  used_at = CASE WHEN code_hash = $2 THEN $3::timestamptz END,
		  attempts = attempts + CASE WHEN code_hash = $2 THEN 0 ELSE 1 END
		WHERE email_key = $1 AND used_at IS NULL AND expires_at > $3 AND attempts < $4
		RETURNING `+loginCodeColumns+`, used_at IS NOT NULL AS matched`, emailKey, codeHash, now, maxAttempts)
	return &c, mapErr(err)
}

// RedeemLoginLink uses up the code whose link token has this hash, when it is alive at now
// and has had fewer than maxAttempts wrong guesses. ErrNotFound means no such code was alive.
func RedeemLoginLink(ctx context.Context, q sqlx.ExtContext, linkHash string, now time.Time, maxAttempts int) (*LoginCode, error) {
	var c LoginCode
	err := sqlx.GetContext(ctx, q, &c, `UPDATE login_codes SET used_at = $2
		WHERE link_hash = $1 AND used_at IS NULL AND expires_at > $2 AND attempts < $3
		RETURNING `+loginCodeColumns+`, true AS matched`, linkHash, now, maxAttempts)
	return &c, mapErr(err)
}

// LatestLoginCode is the email's most recent code, to tell a refused redemption why.
func LatestLoginCode(ctx context.Context, q sqlx.QueryerContext, emailKey string) (*LoginCode, error) {
	var c LoginCode
	err := sqlx.GetContext(ctx, q, &c, `SELECT `+loginCodeColumns+`, false AS matched FROM login_codes
		WHERE email_key = $1 ORDER BY created_at DESC, id DESC LIMIT 1`, emailKey)
	return &c, mapErr(err)
}

// LoginCodeByLink is the code whose link token has this hash, to tell a refused link why.
func LoginCodeByLink(ctx context.Context, q sqlx.QueryerContext, linkHash string) (*LoginCode, error) {
	var c LoginCode
	err := sqlx.GetContext(ctx, q, &c, `SELECT `+loginCodeColumns+`, false AS matched FROM login_codes
		WHERE link_hash = $1`, linkHash)
	return &c, mapErr(err)
}

// PurgeLoginCodes deletes codes that expired before cutoff.
func PurgeLoginCodes(ctx context.Context, q sqlx.ExecerContext, cutoff time.Time) (int, error) {
	res, err := q.ExecContext(ctx, `DELETE FROM login_codes WHERE expires_at < $1`, cutoff)
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
