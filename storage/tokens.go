package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// AccessToken is an organization access token or a personal access token. Only the HMAC of
// the token is stored.
type AccessToken struct {
	ID             uuid.UUID  `db:"id"`
	CreatedAt      time.Time  `db:"created_at"`
	OrganizationID uuid.UUID  `db:"organization_id"`
	Comment        string     `db:"comment"`
	Scope          string     `db:"scope"`
	ExpiresAt      *time.Time `db:"expires_at"`
}

// CreateOrganizationToken stores the hash of a new organization access token.
func CreateOrganizationToken(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, hash, scope, comment string, expiresAt *time.Time) (*AccessToken, error) {
	var t AccessToken
	err := sqlx.GetContext(ctx, q, &t, `INSERT INTO organization_access_tokens
		(organization_id, token, scope, comment, expires_at) VALUES ($1, $2, $3, $4, $5)
		RETURNING id, created_at, organization_id, comment, scope, expires_at`,
		orgID, hash, scope, comment, expiresAt)
	return &t, mapErr(err)
}

// ResolvedToken is what the bearer middleware needs to build a principal.
type ResolvedToken struct {
	ID             uuid.UUID   `db:"id"`
	OrganizationID uuid.UUID   `db:"organization_id"`
	UserID         uuid.UUID   `db:"user_id"`
	CustomerID     uuid.UUID   `db:"customer_id"`
	MemberID       uuid.UUID   `db:"member_id"`
	MemberRole     string      `db:"member_role"`
	Scope          string      `db:"scope"`
	Organizations  []uuid.UUID `db:"-"`
	// Roles is a user credential's role in each of Organizations.
	Roles     map[uuid.UUID]string `db:"-"`
	ExpiresAt *time.Time           `db:"expires_at"`
	// LastUsedAt is when a personal token was last recorded as used; nil for other
	// credentials and for a personal token never used.
	LastUsedAt *time.Time `db:"-"`
	// Customer is a session's customer, read with the session exactly as GetCustomer reads it
	// for the session's organization; nil for other credentials.
	Customer *Customer `db:"-"`
}

// The token lookups run on every authenticated request; each is one indexed statement that
// also checks expiry and that the owner is not deleted.
const (
	resolveOrganizationTokenSQL = `SELECT t.id, t.organization_id, t.scope, t.expires_at
		FROM organization_access_tokens t JOIN organizations o ON o.id = t.organization_id
		WHERE t.token = $1 AND t.deleted_at IS NULL AND o.deleted_at IS NULL
		  AND (t.expires_at IS NULL OR t.expires_at > now())`
	resolvePersonalTokenSQL = `SELECT t.id, t.user_id, t.scope, t.expires_at, t.last_used_at, m.orgs, m.roles
		FROM personal_access_tokens t JOIN users u ON u.id = t.user_id
		CROSS JOIN LATERAL (` + userMembershipsSQL + `) m
		WHERE t.token = $1 AND t.deleted_at IS NULL AND u.deleted_at IS NULL
		  AND (t.expires_at IS NULL OR t.expires_at > now())`
)

// userMembershipsSQL is the live memberships of the user u.id in live organizations, as
// two aligned arrays (orgs, roles): what every credential that acts as a user carries, so
// that tenancy and roles apply the memberships of the moment. Any further condition on the
// membership uo is appended by the caller.
const userMembershipsSQL = `SELECT coalesce(array_agg(uo.organization_id ORDER BY uo.organization_id), '{}') AS orgs,
		  coalesce(array_agg(uo.role ORDER BY uo.organization_id), '{}') AS roles
		FROM user_organizations uo JOIN organizations uoo ON uoo.id = uo.organization_id AND uoo.deleted_at IS NULL
		WHERE uo.user_id = u.id AND uo.deleted_at IS NULL`

// memberships decodes the arrays of userMembershipsSQL.
func memberships(orgs, roles pq.StringArray) ([]uuid.UUID, map[uuid.UUID]string) {
	var ids []uuid.UUID
	byOrg := make(map[uuid.UUID]string, len(orgs))
	for i, s := range orgs {
		id, err := uuid.Parse(s)
		if err != nil || i >= len(roles) {
			continue
		}
		ids = append(ids, id)
		byOrg[id] = roles[i]
	}
	return ids, byOrg
}

// The session lookups also carry the session's customer as GetCustomer reads it (the live
// customer of that id in the session's organization): every portal page starts from it
// (Query.me), which then costs no statement of its own.
var (
	sessionCustomerSQL = prefetchOne("customer", customerColumns, "customers",
		"id = s.customer_id AND organization_id = s.organization_id AND deleted_at IS NULL")
	resolveCustomerSessionSQL = `SELECT s.id, s.organization_id, s.customer_id, s.expires_at, ` + sessionCustomerSQL + `
		FROM customer_sessions s JOIN customers c ON c.id = s.customer_id
		JOIN organizations o ON o.id = s.organization_id
		WHERE s.token = $1 AND s.expires_at > now() AND c.deleted_at IS NULL AND o.deleted_at IS NULL`
	resolveMemberSessionSQL = `SELECT s.id, s.organization_id, s.customer_id, s.member_id, m.role AS member_role,
		s.expires_at, ` + sessionCustomerSQL + `
		FROM member_sessions s JOIN customers c ON c.id = s.customer_id JOIN members m ON m.id = s.member_id
		JOIN organizations o ON o.id = s.organization_id
		WHERE s.token = $1 AND s.expires_at > now() AND c.deleted_at IS NULL AND m.deleted_at IS NULL
		  AND o.deleted_at IS NULL`
)

// ResolveOrganizationToken finds a live organization access token by hash.
func ResolveOrganizationToken(ctx context.Context, q sqlx.ExtContext, hash string) (*ResolvedToken, error) {
	var t ResolvedToken
	return &t, mapErr(sqlx.GetContext(ctx, q, &t, resolveOrganizationTokenSQL, hash))
}

// ResolvePersonalToken finds a live personal access token and the user's organizations.
func ResolvePersonalToken(ctx context.Context, q sqlx.ExtContext, hash string) (*ResolvedToken, error) {
	var t ResolvedToken
	var orgs, roles pq.StringArray
	row := q.QueryRowxContext(ctx, resolvePersonalTokenSQL, hash)
	if err := row.Scan(&t.ID, &t.UserID, &t.Scope, &t.ExpiresAt, &t.LastUsedAt, &orgs, &roles); err != nil {
		return nil, mapErr(err)
	}
	t.Organizations, t.Roles = memberships(orgs, roles)
	return &t, nil
}

// ResolveCustomerSession finds a live customer session by hash, with its customer.
func ResolveCustomerSession(ctx context.Context, q sqlx.ExtContext, hash string) (*ResolvedToken, error) {
	return resolveSession(ctx, q, resolveCustomerSessionSQL, hash)
}

// ResolveMemberSession finds a live member session by hash, with its customer.
func ResolveMemberSession(ctx context.Context, q sqlx.ExtContext, hash string) (*ResolvedToken, error) {
	return resolveSession(ctx, q, resolveMemberSessionSQL, hash)
}

// resolveSession runs a session lookup and decodes the customer it carries.
func resolveSession(ctx context.Context, q sqlx.ExtContext, query, hash string) (*ResolvedToken, error) {
	var row struct {
		ResolvedToken
		CustomerJSON []byte `db:"prefetch_customer"`
	}
	if err := sqlx.GetContext(ctx, q, &row, query, hash); err != nil {
		return nil, mapErr(err)
	}
	t := row.ResolvedToken
	if t.ExpiresAt == nil {
		return &t, nil
	}
	var err error
	t.Customer, err = decodeRecord[Customer](row.CustomerJSON, sessionLocation(*t.ExpiresAt))
	return &t, err
}

// Session is a customer or member session as the create endpoint returns it.
type Session struct {
	ID         uuid.UUID  `db:"id"`
	CreatedAt  time.Time  `db:"created_at"`
	ModifiedAt *time.Time `db:"modified_at"`
	CustomerID uuid.UUID  `db:"customer_id"`
	MemberID   *uuid.UUID `db:"member_id"`
	ExpiresAt  time.Time  `db:"expires_at"`
	ReturnURL  *string    `db:"return_url"`
	// Token is the plaintext token, set only on creation and never stored.
	Token string `db:"-"`
}

// CreateCustomerSession stores the hash of a new customer session token.
func CreateCustomerSession(ctx context.Context, q sqlx.ExtContext, orgID, customerID uuid.UUID, hash string, expiresAt time.Time, returnURL *string) (*Session, error) {
	var s Session
	err := sqlx.GetContext(ctx, q, &s, `INSERT INTO customer_sessions
		(organization_id, customer_id, token, expires_at, return_url) VALUES ($1, $2, $3, $4, $5)
		RETURNING id, created_at, modified_at, customer_id, expires_at, return_url`,
		orgID, customerID, hash, expiresAt, returnURL)
	return &s, mapErr(err)
}

// CreateMemberSession stores the hash of a new member session token.
func CreateMemberSession(ctx context.Context, q sqlx.ExtContext, orgID, customerID, memberID uuid.UUID, hash string, expiresAt time.Time, returnURL *string) (*Session, error) {
	var s Session
	err := sqlx.GetContext(ctx, q, &s, `INSERT INTO member_sessions
		(organization_id, customer_id, member_id, token, expires_at, return_url) VALUES ($1, $2, $3, $4, $5, $6)
		RETURNING id, created_at, modified_at, customer_id, member_id, expires_at, return_url`,
		orgID, customerID, memberID, hash, expiresAt, returnURL)
	return &s, mapErr(err)
}
