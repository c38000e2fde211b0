package storage

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

const oidcSigningKeyColumns = `id, kid, public_key, sealed_private_key, created_at, retired_at, valid_until`

// OIDCSigningKey is an RSA key the installation signs OpenID Connect id tokens with. The
// private key is kept sealed; only the use case that signs opens it.
type OIDCSigningKey struct {
	ID               uuid.UUID `db:"id"`
	KeyID            string    `db:"kid"`
	PublicKey        []byte    `db:"public_key"` // PKIX DER
	SealedPrivateKey []byte    `db:"sealed_private_key"`
	// CreatedAt starts the rotation period: the key signs until it is that old.
	CreatedAt time.Time `db:"created_at"`
	// RetiredAt is set when a newer key replaced this one; it signs nothing after that.
	RetiredAt *time.Time `db:"retired_at"`
	// ValidUntil is the latest expiry of any id token the key signed plus a margin, set at
	// retirement; the key stays published until then.
	ValidUntil *time.Time `db:"valid_until"`
}

// CurrentOIDCSigningKey returns the key id tokens are signed with now; ErrNotFound when the
// installation has none yet.
func CurrentOIDCSigningKey(ctx context.Context, q sqlx.QueryerContext) (*OIDCSigningKey, error) {
	var k OIDCSigningKey
	err := sqlx.GetContext(ctx, q, &k, `SELECT `+oidcSigningKeyColumns+` FROM oidc_signing_keys WHERE retired_at IS NULL`)
	if err != nil {
		return nil, mapErr(err)
	}
	return &k, nil
}

// CreateOIDCSigningKey stores a new current key created at createdAt. When a current key
// already exists it returns ErrConflict without failing the caller's transaction, so
// processes racing to create the first key converge: the losers read the winner's key with
// CurrentOIDCSigningKey.
func CreateOIDCSigningKey(ctx context.Context, q sqlx.QueryerContext, kid string, pub, sealed []byte, createdAt time.Time) (*OIDCSigningKey, error) {
	var k OIDCSigningKey
	err := sqlx.GetContext(ctx, q, &k, `INSERT INTO oidc_signing_keys (kid, public_key, sealed_private_key, created_at)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT ((retired_at IS NULL)) WHERE retired_at IS NULL DO NOTHING
		RETURNING `+oidcSigningKeyColumns, kid, pub, sealed, createdAt)
	if err = mapErr(err); errors.Is(err, ErrNotFound) {
		return nil, ErrConflict
	}
	if err != nil {
		return nil, err
	}
	return &k, nil
}

// RetireOIDCSigningKey retires the key id as of now, keeping it published until validUntil,
// but only while it is still the current key: it reports false when another process retired
// it first. Inside a transaction the row stays locked until commit, so of two processes
// rotating the same key one retires it and the other, once the first commits, finds nothing
// to retire. It is the first half of a rotation; CreateOIDCSigningKey is the second.
func RetireOIDCSigningKey(ctx context.Context, q sqlx.ExecerContext, id uuid.UUID, now, validUntil time.Time) (bool, error) {
	res, err := q.ExecContext(ctx, `UPDATE oidc_signing_keys SET retired_at = $2, valid_until = $3
		WHERE id = $1 AND retired_at IS NULL`, id, now, validUntil)
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// PublishedOIDCSigningKeys returns the keys the JWK Set lists at now: the current key and the
// retired keys whose id tokens may still be unexpired. The current key comes first, then the
// retired ones, most recently retired first.
func PublishedOIDCSigningKeys(ctx context.Context, q sqlx.QueryerContext, now time.Time) ([]*OIDCSigningKey, error) {
	keys := []*OIDCSigningKey{}
	err := sqlx.SelectContext(ctx, q, &keys, `SELECT `+oidcSigningKeyColumns+` FROM oidc_signing_keys
		WHERE retired_at IS NULL OR valid_until > $1
		ORDER BY retired_at DESC NULLS FIRST, created_at DESC, id`, now)
	return keys, mapErr(err)
}
