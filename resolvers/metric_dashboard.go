package resolvers

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/storage"
)

// maxDashboardMetrics is upstream's max_length of a dashboard's metric list.
const maxDashboardMetrics = 10

// maxDashboardName bounds a dashboard's name, which upstream leaves unbounded: a name is a
// label on a tab, and an unbounded one would let a token fill the table.
const maxDashboardName = 256

// createMetricDashboard stores a dashboard in the caller's organization (named by
// organizationId for users of several).
func (r *Resolver) createMetricDashboard(ctx context.Context, in model.MetricDashboardCreateInput) (*storage.MetricDashboard, error) {
	if err := checkDashboard(&in.Name, in.Metrics); err != nil {
		return nil, err
	}
	orgID, err := creationOrganization(ctx, in.OrganizationID)
	if err != nil {
		return nil, err
	}
	return storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.MetricDashboard, error) {
		return storage.CreateMetricDashboard(ctx, q, orgID, in.Name, in.Metrics)
	})
}

// checkDashboard applies the name and list bounds of a dashboard's fields.
func checkDashboard(name *string, metrics []string) error {
	if name != nil {
		if n := utf8.RuneCountInString(*name); n < 1 {
			return &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "string_too_short", Loc: []any{"input", "name"},
				Msg: "String should have at least 1 character", Input: *name, Ctx: map[string]any{"min_length": 1}}}}
		} else if n > maxDashboardName {
			return &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "string_too_long", Loc: []any{"input", "name"},
				Msg: "String should have at most 256 characters", Input: *name, Ctx: map[string]any{"max_length": maxDashboardName}}}}
		}
	}
	if len(metrics) > maxDashboardMetrics {
		return &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "too_long", Loc: []any{"input", "metrics"},
			Msg: fmt.Sprintf("List should have at most 10 items after validation, not %d", len(metrics)), Input: metrics,
			Ctx: map[string]any{"field_type": "List", "max_length": maxDashboardMetrics, "actual_length": len(metrics)}}}}
	}
	return nil
}

// updateMetricDashboard changes the fields given of a dashboard of the caller's organizations.
func (r *Resolver) updateMetricDashboard(ctx context.Context, in model.MetricDashboardUpdateInput) (*storage.MetricDashboard, error) {
	if err := checkDashboard(in.Name, in.Metrics); err != nil {
		return nil, err
	}
	var u storage.MetricDashboardUpdate
	if in.Name != nil {
		u.Name = storage.Set(*in.Name)
	}
	if in.Metrics != nil {
		u.Metrics = storage.Set(in.Metrics)
	}
	d, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.MetricDashboard, error) {
		return storage.UpdateMetricDashboard(ctx, q, organizations(ctx), in.ID, u)
	})
	return d, notFoundOr(err, "")
}

// deleteMetricDashboard removes a dashboard of the caller's organizations.
func (r *Resolver) deleteMetricDashboard(ctx context.Context, id uuid.UUID) (*storage.MetricDashboard, error) {
	d, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.MetricDashboard, error) {
		return storage.DeleteMetricDashboard(ctx, q, organizations(ctx), id)
	})
	return d, notFoundOr(err, "")
}

// metricDashboard reads a dashboard of the caller's organizations.
func (r *Resolver) metricDashboard(ctx context.Context, id uuid.UUID) (*storage.MetricDashboard, error) {
	d, err := storage.GetMetricDashboard(ctx, r.db, organizations(ctx), id)
	return d, notFoundOr(err, "")
}

// metricDashboards lists the caller's dashboards, narrowed to orgIDs when given.
func (r *Resolver) metricDashboards(ctx context.Context, orgIDs []uuid.UUID) ([]*storage.MetricDashboard, error) {
	return storage.ListMetricDashboards(ctx, r.db, organizations(ctx), orgIDs)
}
