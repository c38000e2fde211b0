package storage

import (
	"context"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// OAuth2Client is a registered OAuth2 application. ClientID is the public till_ci_ identifier
// that codes, tokens and consents reference; the secret and the registration access token are
// kept only as HMAC hashes, so a leaked row authenticates nobody. A client belongs to the user
// or the organization that registered it (first-party clients to neither). Deleted clients
// are kept (soft delete) so the tokens that reference them stay explainable; no read here
// returns them.
type OAuth2Client struct {
	ID         uuid.UUID  `db:"id"`
	CreatedAt  time.Time  `db:"created_at"`
	ModifiedAt *time.Time `db:"modified_at"`
	DeletedAt  *time.Time `db:"deleted_at"`
	ClientID   string     `db:"client_id"`
	// ClientSecretHash is null for public clients (token_endpoint_auth_method none).
	ClientSecretHash            *string        `db:"client_secret_hash"`
	ClientSecretExpiresAt       *time.Time     `db:"client_secret_expires_at"`
	RegistrationAccessTokenHash *string        `db:"registration_access_token_hash"`
	ClientName                  string         `db:"client_name"`
	ClientURI                   *string        `db:"client_uri"`
	LogoURI                     *string        `db:"logo_uri"`
	TosURI                      *string        `db:"tos_uri"`
	PolicyURI                   *string        `db:"policy_uri"`
	RedirectURIs                pq.StringArray `db:"redirect_uris"`
	// Scope is the space-separated list of scopes the client may request, as upstream stores it.
	Scope                   string         `db:"scope"`
	TokenEndpointAuthMethod string         `db:"token_endpoint_auth_method"`
	GrantTypes              pq.StringArray `db:"grant_types"`
	ResponseTypes           pq.StringArray `db:"response_types"`
	DefaultSubType          string         `db:"default_sub_type"`
	FirstParty              bool           `db:"first_party"`
	UserID                  *uuid.UUID     `db:"user_id"`
	OrganizationID          *uuid.UUID     `db:"organization_id"`
}

const oauth2ClientColumns = `id, created_at, modified_at, deleted_at, client_id, client_secret_hash,
	client_secret_expires_at, registration_access_token_hash, client_name, client_uri, logo_uri, tos_uri,
	policy_uri, redirect_uris, scope, token_endpoint_auth_method, grant_types, response_types,
	default_sub_type, first_party, user_id, organization_id`

// OAuth2ClientOwner says whose clients a management call may touch: exactly one of the two
// ids is set, the user for user principals, the organization for organization principals.
// Reading or changing someone else's client then simply finds no row.
type OAuth2ClientOwner struct {
	UserID         *uuid.UUID
	OrganizationID *uuid.UUID
}

// where renders the owner condition with its argument numbered n. A zero owner matches
// nothing, so a forgetful caller fails closed.
func (o OAuth2ClientOwner) where(n int) (string, any) {
	switch {
	case o.UserID != nil:
		return "user_id = $" + strconv.Itoa(n), *o.UserID
	case o.OrganizationID != nil:
		return "organization_id = $" + strconv.Itoa(n), *o.OrganizationID
	default:
		return "false AND $" + strconv.Itoa(n) + "::uuid IS NULL", uuid.Nil
	}
}

// OAuth2ClientWrite holds a new client's fields, validated by the caller. SecretHash is
// nil for public clients.
type OAuth2ClientWrite struct {
	ClientID                string
	SecretHash              *string
	RegistrationTokenHash   *string
	ClientName              string
	ClientURI               *string
	LogoURI                 *string
	TosURI                  *string
	PolicyURI               *string
	RedirectURIs            []string
	Scope                   string
	TokenEndpointAuthMethod string
	GrantTypes              []string
	ResponseTypes           []string
	DefaultSubType          string
}

// CreateOAuth2Client stores a client owned by owner.
func CreateOAuth2Client(ctx context.Context, q sqlx.ExtContext, owner OAuth2ClientOwner, w OAuth2ClientWrite) (*OAuth2Client, error) {
	var c OAuth2Client
	err := sqlx.GetContext(ctx, q, &c, `INSERT INTO oauth2_clients (client_id, client_secret_hash,
		registration_access_token_hash, client_name, client_uri, logo_uri, tos_uri, policy_uri, redirect_uris, scope,
		token_endpoint_auth_method, grant_types, response_types, default_sub_type, user_id, organization_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING `+oauth2ClientColumns,
		w.ClientID, w.SecretHash, w.RegistrationTokenHash, w.ClientName, w.ClientURI, w.LogoURI, w.TosURI, w.PolicyURI,
		pq.Array(nonNilStrings(w.RedirectURIs)), w.Scope, w.TokenEndpointAuthMethod, pq.Array(nonNilStrings(w.GrantTypes)),
		pq.Array(nonNilStrings(w.ResponseTypes)), w.DefaultSubType, owner.UserID, owner.OrganizationID)
	return &c, mapErr(err)
}

// GetOAuth2ClientByClientID reads a live client by its public client id, whoever owns it:
// the OAuth2 protocol endpoints authenticate the client themselves. Unknown and deleted
// clients are ErrNotFound, so a deleted client can no longer obtain or refresh tokens.
func GetOAuth2ClientByClientID(ctx context.Context, q sqlx.QueryerContext, clientID string) (*OAuth2Client, error) {
	var c OAuth2Client
	err := sqlx.GetContext(ctx, q, &c, `SELECT `+oauth2ClientColumns+` FROM oauth2_clients
		WHERE client_id = $1 AND deleted_at IS NULL`, clientID)
	if err != nil {
		return nil, mapErr(err)
	}
	return &c, nil
}

// GetOAuth2Client reads a live client of owner.
func GetOAuth2Client(ctx context.Context, q sqlx.ExtContext, owner OAuth2ClientOwner, clientID string) (*OAuth2Client, error) {
	cond, arg := owner.where(2)
	var c OAuth2Client
	err := sqlx.GetContext(ctx, q, &c, `SELECT `+oauth2ClientColumns+` FROM oauth2_clients
		WHERE client_id = $1 AND deleted_at IS NULL AND `+cond, clientID, arg)
	return &c, mapErr(err)
}

// ListOAuth2Clients returns one window of the live clients of owner, newest first, with the
// total count.
func ListOAuth2Clients(ctx context.Context, q sqlx.ExtContext, owner OAuth2ClientOwner, w Window) (Paged[*OAuth2Client], error) {
	cond, arg := owner.where(1)
	return listWindow[*OAuth2Client](ctx, q, listSQL{Columns: oauth2ClientColumns, From: "oauth2_clients", ID: "id",
		Where: []string{cond, "deleted_at IS NULL"}, Args: []any{arg},
		Default: []Sort{{Column: "created_at", Desc: true}}}, w)
}

// OAuth2ClientUpdate is a change to an OAuth2 client: each set field writes its column, the
// others keep what they hold. A nil ClientSecretHash makes the client public.
type OAuth2ClientUpdate struct {
	ClientSecretHash        Omittable[*string]
	ClientName              Omittable[string]
	ClientURI               Omittable[*string]
	LogoURI                 Omittable[*string]
	TosURI                  Omittable[*string]
	PolicyURI               Omittable[*string]
	RedirectURIs            Omittable[[]string]
	Scope                   Omittable[string]
	TokenEndpointAuthMethod Omittable[string]
	GrantTypes              Omittable[[]string]
	ResponseTypes           Omittable[[]string]
	DefaultSubType          Omittable[string]
}

func (u OAuth2ClientUpdate) assignments() []assignment {
	list := func(v []string) any { return pq.Array(nonNilStrings(v)) }
	return []assignment{u.ClientSecretHash.to("client_secret_hash"), u.ClientName.to("client_name"),
		u.ClientURI.to("client_uri"), u.LogoURI.to("logo_uri"), u.TosURI.to("tos_uri"), u.PolicyURI.to("policy_uri"),
		mapped(u.RedirectURIs, "redirect_uris", list), u.Scope.to("scope"),
		u.TokenEndpointAuthMethod.to("token_endpoint_auth_method"), mapped(u.GrantTypes, "grant_types", list),
		mapped(u.ResponseTypes, "response_types", list), u.DefaultSubType.to("default_sub_type")}
}

// UpdateOAuth2Client writes the set fields of u to a live client of owner.
func UpdateOAuth2Client(ctx context.Context, q sqlx.ExtContext, owner OAuth2ClientOwner, clientID string, u OAuth2ClientUpdate) (*OAuth2Client, error) {
	cond, arg := owner.where(2)
	sets, args := setClause("modified_at = now()", u, []any{clientID, arg})
	var c OAuth2Client
	err := sqlx.GetContext(ctx, q, &c, `UPDATE oauth2_clients SET `+sets+`
		WHERE client_id = $1 AND deleted_at IS NULL AND `+cond+` RETURNING `+oauth2ClientColumns, args...)
	return &c, mapErr(err)
}

// DeleteOAuth2Client soft-deletes a live client of owner and returns it as it was. In the
// same statement it revokes every token issued to the client, discards its pending
// authorization codes and forgets the consents given to it, so nothing issued before the
// deletion keeps working even where a lookup does not check the client.
func DeleteOAuth2Client(ctx context.Context, q sqlx.ExtContext, owner OAuth2ClientOwner, clientID string) (*OAuth2Client, error) {
	cond, arg := owner.where(2)
	var c OAuth2Client
	err := sqlx.GetContext(ctx, q, &c, `WITH deleted AS (
			UPDATE oauth2_clients SET deleted_at = now(), modified_at = now()
			WHERE client_id = $1 AND deleted_at IS NULL AND `+cond+` RETURNING `+oauth2ClientColumns+`
		), revoked AS (
			UPDATE oauth2_tokens t SET modified_at = now(),
				access_token_revoked_at = coalesce(t.access_token_revoked_at, now()),
				refresh_token_revoked_at = coalesce(t.refresh_token_revoked_at, now())
			FROM deleted d WHERE t.client_id = d.client_id
				AND (t.access_token_revoked_at IS NULL OR t.refresh_token_revoked_at IS NULL)
		), codes AS (
			DELETE FROM oauth2_authorization_codes a USING deleted d WHERE a.client_id = d.client_id
		), consents AS (
			DELETE FROM oauth2_grants g USING deleted d WHERE g.client_id = d.client_id
		)
		SELECT * FROM deleted`, clientID, arg)
	return &c, mapErr(err)
}

// RotateOAuth2ClientSecret replaces the secret hash of a live confidential client of owner;
// the previous secret stops authenticating at once. A public client has no secret to
// rotate and is ErrNotFound.
func RotateOAuth2ClientSecret(ctx context.Context, q sqlx.ExtContext, owner OAuth2ClientOwner, clientID, secretHash string) (*OAuth2Client, error) {
	cond, arg := owner.where(2)
	var c OAuth2Client
	err := sqlx.GetContext(ctx, q, &c, `UPDATE oauth2_clients SET client_secret_hash = $3, modified_at = now()
		WHERE client_id = $1 AND deleted_at IS NULL AND client_secret_hash IS NOT NULL AND `+cond+`
		RETURNING `+oauth2ClientColumns, clientID, arg, secretHash)
	return &c, mapErr(err)
}
