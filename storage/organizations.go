package storage

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Organization is a seller: the tenant that owns customers, products and everything sold.
type Organization struct {
	ID                         uuid.UUID     `db:"id"`
	CreatedAt                  time.Time     `db:"created_at"`
	ModifiedAt                 *time.Time    `db:"modified_at"`
	Name                       string        `db:"name"`
	Slug                       string        `db:"slug"`
	AvatarURL                  *string       `db:"avatar_url"`
	Email                      *string       `db:"email"`
	Website                    *string       `db:"website"`
	DefaultPresentmentCurrency string        `db:"default_presentment_currency"`
	ProrationBehavior          string        `db:"proration_behavior"`
	AllowCustomerUpdates       bool          `db:"allow_customer_updates"`
	CustomerPortalSettings     RawJSON       `db:"customer_portal_settings"`
	FeatureSettings            RawJSON       `db:"feature_settings"`
	ProcessorMode              ProcessorMode `db:"processor_mode"`
}

// MemberModelEnabled reports the feature that makes customer sessions member sessions.
func (o *Organization) MemberModelEnabled() bool {
	var f struct {
		MemberModelEnabled bool `json:"member_model_enabled"`
	}
	_ = json.Unmarshal(o.FeatureSettings, &f)
	return f.MemberModelEnabled
}

const organizationColumns = `id, created_at, modified_at, name, slug, avatar_url, email, website,
	default_presentment_currency, proration_behavior, allow_customer_updates,
	customer_portal_settings, feature_settings, processor_mode`

// CreateOrganization inserts an organization with the given name and slug.
func CreateOrganization(ctx context.Context, q sqlx.ExtContext, name, slug string) (*Organization, error) {
	var o Organization
	err := sqlx.GetContext(ctx, q, &o, `INSERT INTO organizations (name, slug) VALUES ($1, $2)
		RETURNING `+organizationColumns, name, slug)
	return &o, mapErr(err)
}

// GetOrganization reads one live organization by id.
func GetOrganization(ctx context.Context, q sqlx.ExtContext, id uuid.UUID) (*Organization, error) {
	var o Organization
	err := sqlx.GetContext(ctx, q, &o, `SELECT `+organizationColumns+`
		FROM organizations WHERE id = $1 AND deleted_at IS NULL`, id)
	return &o, mapErr(err)
}

// GetOrganizationBySlug reads one live organization by slug.
func GetOrganizationBySlug(ctx context.Context, q sqlx.ExtContext, slug string) (*Organization, error) {
	var o Organization
	err := sqlx.GetContext(ctx, q, &o, `SELECT `+organizationColumns+`
		FROM organizations WHERE slug = $1 AND deleted_at IS NULL`, slug)
	return &o, mapErr(err)
}

// GetOrganizationByRef reads one live organization by id, or by slug when ref is no id, as
// operators name organizations on the command line.
func GetOrganizationByRef(ctx context.Context, q sqlx.ExtContext, ref string) (*Organization, error) {
	if id, err := uuid.Parse(ref); err == nil {
		return GetOrganization(ctx, q, id)
	}
	return GetOrganizationBySlug(ctx, q, ref)
}

// CountOrganizations tells whether the installation is fresh.
func CountOrganizations(ctx context.Context, q sqlx.ExtContext) (int, error) {
	var n int
	err := sqlx.GetContext(ctx, q, &n, `SELECT count(*) FROM organizations`)
	return n, mapErr(err)
}

// OrganizationsByIDs loads organizations for a dataloader: one result per key, in key order,
// nil where missing.
func OrganizationsByIDs(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([]*Organization, error) {
	var rows []*Organization
	err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+organizationColumns+`
		FROM organizations WHERE id = ANY($1) AND deleted_at IS NULL`, pq.Array(ids))
	if err != nil {
		return nil, mapErr(err)
	}
	return inKeyOrder(ids, rows, func(r *Organization) uuid.UUID { return r.ID }), nil
}
