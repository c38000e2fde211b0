package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// MetricDashboard is a named selection of metric slugs an organization keeps, so its people
// open the same charts together.
type MetricDashboard struct {
	ID             uuid.UUID      `db:"id"`
	CreatedAt      time.Time      `db:"created_at"`
	ModifiedAt     *time.Time     `db:"modified_at"`
	OrganizationID uuid.UUID      `db:"organization_id"`
	Name           string         `db:"name"`
	Metrics        pq.StringArray `db:"metrics"`
}

const metricDashboardColumns = `id, created_at, modified_at, organization_id, name, metrics`

// CreateMetricDashboard stores a dashboard of a live organization.
func CreateMetricDashboard(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, name string, metrics []string) (*MetricDashboard, error) {
	var d MetricDashboard
	err := sqlx.GetContext(ctx, q, &d, `INSERT INTO metric_dashboards (organization_id, name, metrics)
		SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM organizations WHERE id = $1 AND deleted_at IS NULL)
		RETURNING `+metricDashboardColumns, orgID, name, pq.Array(nonNilStrings(metrics)))
	return &d, mapErr(err)
}

// GetMetricDashboard reads a dashboard of one of orgs; another organization's is ErrNotFound.
func GetMetricDashboard(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*MetricDashboard, error) {
	var d MetricDashboard
	err := sqlx.GetContext(ctx, q, &d, `SELECT `+metricDashboardColumns+` FROM metric_dashboards
		WHERE id = $1 AND organization_id = ANY($2)`, id, pq.Array(orgs))
	return &d, mapErr(err)
}

// ListMetricDashboards lists the dashboards of orgs, narrowed to orgFilter when it is not
// nil, oldest first (upstream lists them unpaged): the first 100, a bound the GraphQL cost
// of the list relies on.
func ListMetricDashboards(ctx context.Context, q sqlx.ExtContext, orgs, orgFilter []uuid.UUID) ([]*MetricDashboard, error) {
	var filter any
	if orgFilter != nil {
		filter = pq.Array(orgFilter)
	}
	ds := []*MetricDashboard{}
	err := sqlx.SelectContext(ctx, q, &ds, `SELECT `+metricDashboardColumns+` FROM metric_dashboards
		WHERE organization_id = ANY($1) AND ($2::uuid[] IS NULL OR organization_id = ANY($2))
		ORDER BY created_at, id LIMIT 100`, pq.Array(orgs), filter)
	return ds, mapErr(err)
}

// MetricDashboardUpdate holds the fields to change; unset ones are left alone.
type MetricDashboardUpdate struct {
	Name    Omittable[string]
	Metrics Omittable[[]string]
}

func (u MetricDashboardUpdate) assignments() []assignment {
	return []assignment{u.Name.to("name"),
		mapped(u.Metrics, "metrics", func(v []string) any { return pq.Array(nonNilStrings(v)) })}
}

// UpdateMetricDashboard writes the set fields of u to a dashboard of one of orgs.
func UpdateMetricDashboard(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, u MetricDashboardUpdate) (*MetricDashboard, error) {
	sets, args := setClause("modified_at = now()", u, []any{id, pq.Array(orgs)})
	var d MetricDashboard
	err := sqlx.GetContext(ctx, q, &d, `UPDATE metric_dashboards SET `+sets+`
		WHERE id = $1 AND organization_id = ANY($2) RETURNING `+metricDashboardColumns, args...)
	return &d, mapErr(err)
}

// DeleteMetricDashboard removes a dashboard of one of orgs and returns it as it was.
func DeleteMetricDashboard(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*MetricDashboard, error) {
	var d MetricDashboard
	err := sqlx.GetContext(ctx, q, &d, `DELETE FROM metric_dashboards WHERE id = $1 AND organization_id = ANY($2)
		RETURNING `+metricDashboardColumns, id, pq.Array(orgs))
	return &d, mapErr(err)
}
