package storage

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// ErrCodeUsed is returned when an authorization code was already exchanged. The caller must
// treat the exchange as a replay (RFC 6749 §4.1.2: revoke what the code issued), which is why
// it differs from ErrNotFound.
var ErrCodeUsed = errors.New("storage: authorization code already used")

// OAuth2AuthorizationCode is a single-use code as the token endpoint needs it. Code is the
// HMAC of the code; the plaintext exists only in the redirect to the client.
type OAuth2AuthorizationCode struct {
	ID                  uuid.UUID      `db:"id"`
	Code                string         `db:"code"`
	ClientID            string         `db:"client_id"`
	SubType             string         `db:"sub_type"`
	UserID              *uuid.UUID     `db:"user_id"`
	OrganizationID      *uuid.UUID     `db:"organization_id"`
	OrganizationIDs     pq.StringArray `db:"organization_ids"`
	RedirectURI         string         `db:"redirect_uri"`
	Scope               string         `db:"scope"`
	Nonce               *string        `db:"nonce"`
	CodeChallenge       *string        `db:"code_challenge"`
	CodeChallengeMethod *string        `db:"code_challenge_method"`
	AuthTime            time.Time      `db:"auth_time"`
	ExpiresAt           time.Time      `db:"expires_at"`
	UsedAt              *time.Time     `db:"used_at"`
	// ConsentedBy is the user who consented; for an organization subject the only link to
	// the person whose rights the grant rests on.
	ConsentedBy *uuid.UUID `db:"consented_by"`
}

const oauth2CodeColumns = `id, code, client_id, sub_type, user_id, organization_id, organization_ids,
	redirect_uri, scope, nonce, code_challenge, code_challenge_method, auth_time, expires_at, used_at, consented_by`

// CreateOAuth2AuthorizationCode stores a code that expires ttl after the database's now, so
// expiry is judged by one clock, the one the exchange compares against.
func CreateOAuth2AuthorizationCode(ctx context.Context, q sqlx.ExtContext, c OAuth2AuthorizationCode, ttl time.Duration) (*OAuth2AuthorizationCode, error) {
	var out OAuth2AuthorizationCode
	err := sqlx.GetContext(ctx, q, &out, `INSERT INTO oauth2_authorization_codes (code, client_id, sub_type,
		user_id, organization_id, organization_ids, redirect_uri, scope, nonce, code_challenge, code_challenge_method,
		expires_at, consented_by) VALUES ($1, $2, $3, $4, $5, $6::uuid[], $7, $8, $9, $10, $11,
		now() + make_interval(secs => $12), $13)
		RETURNING `+oauth2CodeColumns,
		c.Code, c.ClientID, c.SubType, c.UserID, c.OrganizationID, pq.Array(nonNilStrings(c.OrganizationIDs)),
		c.RedirectURI, c.Scope, c.Nonce, c.CodeChallenge, c.CodeChallengeMethod, ttl.Seconds(), c.ConsentedBy)
	return &out, mapErr(err)
}

// UseOAuth2AuthorizationCode marks a live code of clientID used and returns it. The check
// and the mark are one UPDATE, so of many concurrent exchanges exactly one gets the code. A
// code already used is ErrCodeUsed (with the code, so its tokens can be revoked); an unknown,
// expired or foreign code is ErrNotFound and is left as it was, so another client cannot
// burn a code it intercepted.
func UseOAuth2AuthorizationCode(ctx context.Context, q sqlx.ExtContext, hash, clientID string) (*OAuth2AuthorizationCode, error) {
	var c OAuth2AuthorizationCode
	err := sqlx.GetContext(ctx, q, &c, `UPDATE oauth2_authorization_codes SET used_at = now(), modified_at = now()
		WHERE code = $1 AND client_id = $2 AND used_at IS NULL AND expires_at > now()
		RETURNING `+oauth2CodeColumns, hash, clientID)
	if err == nil {
		return &c, nil
	}
	if err = mapErr(err); !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	err = sqlx.GetContext(ctx, q, &c, `SELECT `+oauth2CodeColumns+` FROM oauth2_authorization_codes
		WHERE code = $1 AND client_id = $2 AND used_at IS NOT NULL`, hash, clientID)
	if err != nil {
		return nil, mapErr(err)
	}
	return &c, ErrCodeUsed
}

// OAuth2Token is an access token and its refresh token, both stored as HMAC hashes.
type OAuth2Token struct {
	ID                    uuid.UUID      `db:"id"`
	ClientID              string         `db:"client_id"`
	TokenType             string         `db:"token_type"`
	AccessToken           string         `db:"access_token"`
	RefreshToken          *string        `db:"refresh_token"`
	Scope                 string         `db:"scope"`
	SubType               string         `db:"sub_type"`
	UserID                *uuid.UUID     `db:"user_id"`
	OrganizationID        *uuid.UUID     `db:"organization_id"`
	OrganizationIDs       pq.StringArray `db:"organization_ids"`
	Nonce                 *string        `db:"nonce"`
	IssuedAt              time.Time      `db:"issued_at"`
	ExpiresAt             time.Time      `db:"expires_at"`
	RefreshTokenExpiresAt *time.Time     `db:"refresh_token_expires_at"`
	AccessTokenRevokedAt  *time.Time     `db:"access_token_revoked_at"`
	RefreshTokenRevokedAt *time.Time     `db:"refresh_token_revoked_at"`
	AuthorizationCodeID   *uuid.UUID     `db:"authorization_code_id"`
	// ConsentedBy is the user whose consent the pair rests on (see OAuth2AuthorizationCode).
	ConsentedBy *uuid.UUID `db:"consented_by"`
}

const oauth2TokenColumns = `id, client_id, token_type, access_token, refresh_token, scope, sub_type, user_id,
	organization_id, organization_ids, nonce, issued_at, expires_at, refresh_token_expires_at,
	access_token_revoked_at, refresh_token_revoked_at, authorization_code_id, consented_by`

// Revoked reports whether the pair is dead: either revocation kills both tokens, as upstream's
// is_revoked does.
func (t *OAuth2Token) Revoked() bool {
	return t.AccessTokenRevokedAt != nil || t.RefreshTokenRevokedAt != nil
}

// OAuth2TokenWrite is a new token pair. ExpiresIn is the access token's lifetime, counted
// from the database's now like every other expiry check of these tables.
type OAuth2TokenWrite struct {
	ClientID            string
	AccessToken         string
	RefreshToken        *string
	Scope               string
	SubType             string
	UserID              *uuid.UUID
	OrganizationID      *uuid.UUID
	OrganizationIDs     []string
	Nonce               *string
	ExpiresIn           time.Duration
	AuthorizationCodeID *uuid.UUID
	ConsentedBy         *uuid.UUID
}

// CreateOAuth2Token stores a token pair.
func CreateOAuth2Token(ctx context.Context, q sqlx.ExtContext, w OAuth2TokenWrite) (*OAuth2Token, error) {
	var t OAuth2Token
	err := sqlx.GetContext(ctx, q, &t, `INSERT INTO oauth2_tokens (client_id, access_token, refresh_token, scope,
		sub_type, user_id, organization_id, organization_ids, nonce, issued_at, expires_at, authorization_code_id,
		consented_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::uuid[], $9, now(), now() + make_interval(secs => $10), $11, $12)
		RETURNING `+oauth2TokenColumns,
		w.ClientID, w.AccessToken, w.RefreshToken, w.Scope, w.SubType, w.UserID, w.OrganizationID,
		pq.Array(nonNilStrings(w.OrganizationIDs)), w.Nonce, w.ExpiresIn.Seconds(), w.AuthorizationCodeID, w.ConsentedBy)
	return &t, mapErr(err)
}

// UseOAuth2RefreshToken revokes a live refresh token of clientID and returns its row, in
// one UPDATE: concurrent refreshes with the same token get it once. Revoking the refresh
// token also ends the old access token. Unknown, revoked, expired or foreign tokens are
// ErrNotFound.
func UseOAuth2RefreshToken(ctx context.Context, q sqlx.ExtContext, hash, clientID string) (*OAuth2Token, error) {
	var t OAuth2Token
	err := sqlx.GetContext(ctx, q, &t, `UPDATE oauth2_tokens SET refresh_token_revoked_at = now(), modified_at = now()
		WHERE refresh_token = $1 AND client_id = $2 AND refresh_token_revoked_at IS NULL
		  AND access_token_revoked_at IS NULL AND (refresh_token_expires_at IS NULL OR refresh_token_expires_at > now())
		RETURNING `+oauth2TokenColumns, hash, clientID)
	return &t, mapErr(err)
}

// TokenHint narrows a token lookup to one column (RFC 7009/7662 token_type_hint).
type TokenHint int

// Token hints; TokenHintNone searches both columns.
const (
	TokenHintNone TokenHint = iota
	TokenHintAccess
	TokenHintRefresh
)

// FindOAuth2Token reads the pair whose access or refresh token (as hint says) has this hash,
// whatever its state; introspection and revocation judge liveness themselves.
func FindOAuth2Token(ctx context.Context, q sqlx.QueryerContext, hash string, hint TokenHint) (*OAuth2Token, error) {
	where := `access_token = $1 OR refresh_token = $1`
	switch hint {
	case TokenHintAccess:
		where = `access_token = $1`
	case TokenHintRefresh:
		where = `refresh_token = $1`
	}
	var t OAuth2Token
	err := sqlx.GetContext(ctx, q, &t, `SELECT `+oauth2TokenColumns+` FROM oauth2_tokens WHERE `+where+` LIMIT 1`, hash)
	if err != nil {
		return nil, mapErr(err)
	}
	return &t, nil
}

// RevokeOAuth2Token revokes a pair: only the access token when accessOnly (which still
// ends the pair), otherwise both. Earlier revocation times are kept.
func RevokeOAuth2Token(ctx context.Context, q sqlx.ExecerContext, id uuid.UUID, accessOnly bool) error {
	_, err := q.ExecContext(ctx, `UPDATE oauth2_tokens SET modified_at = now(),
		access_token_revoked_at = coalesce(access_token_revoked_at, now()),
		refresh_token_revoked_at = CASE WHEN $2 THEN refresh_token_revoked_at
			ELSE coalesce(refresh_token_revoked_at, now()) END
		WHERE id = $1`, id, accessOnly)
	return mapErr(err)
}

// PurgeOAuth2AuthorizationCodes deletes the codes that expired before before, used or not.
// Used codes are kept until then so a replay is still recognised, and the tokens they
// issued revoked, well after the code's own 300 seconds; their tokens keep working (their
// authorization_code_id becomes null).
func PurgeOAuth2AuthorizationCodes(ctx context.Context, q sqlx.ExecerContext, before time.Time) (int, error) {
	res, err := q.ExecContext(ctx, `DELETE FROM oauth2_authorization_codes WHERE expires_at < $1`, before)
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// RevokeOAuth2TokensOfCode revokes every pair issued from an authorization code and from
// refreshes of those pairs: the answer to a replayed code (RFC 6749 §4.1.2).
func RevokeOAuth2TokensOfCode(ctx context.Context, q sqlx.ExecerContext, codeID uuid.UUID) (int64, error) {
	res, err := q.ExecContext(ctx, `UPDATE oauth2_tokens SET modified_at = now(),
		access_token_revoked_at = coalesce(access_token_revoked_at, now()),
		refresh_token_revoked_at = coalesce(refresh_token_revoked_at, now())
		WHERE authorization_code_id = $1`, codeID)
	if err != nil {
		return 0, mapErr(err)
	}
	return res.RowsAffected()
}

// ResolvedOAuth2Token is a live access token as the bearer middleware needs it.
type ResolvedOAuth2Token struct {
	ID             uuid.UUID
	ClientID       string
	SubType        string
	UserID         uuid.UUID
	OrganizationID uuid.UUID
	Scope          string
	ExpiresAt      time.Time
	// Organizations are, for a user subject, the user's memberships narrowed to the token's
	// down-scope list when it has one.
	Organizations []uuid.UUID
	// Roles is, for a user subject, the user's role in each of Organizations.
	Roles map[uuid.UUID]string
}

// resolveOAuth2TokenSQL runs on every request made with an OAuth token: one indexed statement
// that checks expiry, revocation, the client and the subject, and computes the organizations.
// An organization subject's token lives only as long as the user who consented is still an
// owner or admin of that organization: a user who leaves takes the applications' access along.
const resolveOAuth2TokenSQL = `SELECT t.id, t.client_id, t.sub_type, t.user_id, t.organization_id, t.scope, t.expires_at,
	  CASE WHEN t.sub_type = 'user' THEN m.orgs ELSE '{}' END AS orgs,
	  CASE WHEN t.sub_type = 'user' THEN m.roles ELSE '{}' END AS roles
	FROM oauth2_tokens t
	CROSS JOIN LATERAL (SELECT t.user_id AS id) u
	CROSS JOIN LATERAL (` + userMembershipsSQL + `
	  AND (cardinality(t.organization_ids) = 0 OR uo.organization_id = ANY (t.organization_ids))) m
	JOIN oauth2_clients c ON c.client_id = t.client_id AND c.deleted_at IS NULL
	LEFT JOIN users tu ON tu.id = t.user_id
	LEFT JOIN organizations o ON o.id = t.organization_id
	WHERE t.access_token = $1 AND t.expires_at > now()
	  AND t.access_token_revoked_at IS NULL AND t.refresh_token_revoked_at IS NULL
	  AND (t.user_id IS NULL OR tu.deleted_at IS NULL) AND (t.organization_id IS NULL OR o.deleted_at IS NULL)
	  AND (t.sub_type <> 'organization' OR EXISTS (SELECT 1 FROM user_organizations cu
	    JOIN users cuu ON cuu.id = cu.user_id AND cuu.deleted_at IS NULL
	    WHERE cu.user_id = t.consented_by AND cu.organization_id = t.organization_id
	      AND cu.deleted_at IS NULL AND cu.role IN ('owner', 'admin')))`

// ResolveOAuth2AccessToken finds a live OAuth2 access token by hash.
func ResolveOAuth2AccessToken(ctx context.Context, q sqlx.QueryerContext, hash string) (*ResolvedOAuth2Token, error) {
	var (
		t           ResolvedOAuth2Token
		user, orgID uuid.NullUUID
		orgs, roles pq.StringArray
	)
	row := q.QueryRowxContext(ctx, resolveOAuth2TokenSQL, hash)
	if err := row.Scan(&t.ID, &t.ClientID, &t.SubType, &user, &orgID, &t.Scope, &t.ExpiresAt, &orgs, &roles); err != nil {
		return nil, mapErr(err)
	}
	t.UserID, t.OrganizationID = user.UUID, orgID.UUID
	t.Organizations, t.Roles = memberships(orgs, roles)
	return &t, nil
}
