package storage

import (
	"context"
	"errors"
	"slices"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// OAuth2GrantWrite is a consent to remember: the client, the scopes, and the subject, a user
// (with the organizations the user's tokens were narrowed to, none meaning all) or an
// organization.
type OAuth2GrantWrite struct {
	ClientID        string
	Scope           string
	UserID          *uuid.UUID
	OrganizationID  *uuid.UUID
	OrganizationIDs []uuid.UUID
}

// UpsertOAuth2Grant remembers a consent, so a later authorization within it can skip the
// consent screen. A consent narrowed to the same organizations as the one remembered adds its
// scopes to it; one narrowed otherwise replaces it, so what is remembered is always something
// the user consented to in every part, never a mix of two consents wider than either.
func UpsertOAuth2Grant(ctx context.Context, q sqlx.ExecerContext, g OAuth2GrantWrite) error {
	conflict := `(client_id, user_id)`
	if g.UserID == nil {
		conflict = `(client_id, organization_id)`
	}
	orgs := make([]string, len(g.OrganizationIDs))
	for i, id := range g.OrganizationIDs {
		orgs[i] = id.String()
	}
	slices.Sort(orgs)
	orgs = slices.Compact(orgs)
	_, err := q.ExecContext(ctx, `INSERT INTO oauth2_grants (client_id, scope, user_id, organization_id, organization_ids)
		VALUES ($1, $2, $3, $4, $5::uuid[]) ON CONFLICT `+conflict+` DO UPDATE SET modified_at = now(),
		organization_ids = EXCLUDED.organization_ids,
		scope = CASE WHEN oauth2_grants.organization_ids = EXCLUDED.organization_ids THEN
			(SELECT coalesce(string_agg(DISTINCT s, ' ' ORDER BY s), '')
			FROM unnest(string_to_array(oauth2_grants.scope || ' ' || EXCLUDED.scope, ' ')) s WHERE s <> '')
			ELSE EXCLUDED.scope END`,
		g.ClientID, g.Scope, g.UserID, g.OrganizationID, pq.Array(orgs))
	return mapErr(err)
}

// OAuth2UserGrant is a user's remembered consent to a client.
type OAuth2UserGrant struct {
	Scope string `db:"scope"`
	// OrganizationIDs are the organizations the consented tokens were narrowed to; empty
	// means all of the user's organizations.
	OrganizationIDs pq.StringArray `db:"organization_ids"`
}

// GetOAuth2UserGrant returns a user's remembered consent to a client; nil when there is none.
func GetOAuth2UserGrant(ctx context.Context, q sqlx.QueryerContext, clientID string, userID uuid.UUID) (*OAuth2UserGrant, error) {
	var g OAuth2UserGrant
	err := sqlx.GetContext(ctx, q, &g, `SELECT scope, organization_ids::text[] AS organization_ids FROM oauth2_grants
		WHERE client_id = $1 AND user_id = $2`, clientID, userID)
	if errors.Is(mapErr(err), ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, mapErr(err)
	}
	return &g, nil
}

// OAuth2OrganizationGrant is an organization's remembered consent to a client, with the role
// the user asking now holds in the organization, which decides whether that user may use it.
type OAuth2OrganizationGrant struct {
	OrganizationID uuid.UUID `db:"organization_id"`
	Scope          string    `db:"scope"`
	Role           string    `db:"role"`
}

// ListOAuth2OrganizationGrants lists the remembered consents to a client of the live
// organizations userID is a live member of, oldest membership first.
func ListOAuth2OrganizationGrants(ctx context.Context, q sqlx.QueryerContext, clientID string, userID uuid.UUID) ([]OAuth2OrganizationGrant, error) {
	out := []OAuth2OrganizationGrant{}
	err := sqlx.SelectContext(ctx, q, &out, `SELECT g.organization_id, g.scope, uo.role
		FROM oauth2_grants g
		JOIN user_organizations uo ON uo.organization_id = g.organization_id AND uo.user_id = $2 AND uo.deleted_at IS NULL
		JOIN organizations o ON o.id = g.organization_id AND o.deleted_at IS NULL
		JOIN users u ON u.id = uo.user_id AND u.deleted_at IS NULL
		WHERE g.client_id = $1
		ORDER BY uo.created_at, g.organization_id`, clientID, userID)
	return out, mapErr(err)
}
