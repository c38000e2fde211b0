package rest

import (
	"net/http"

	"till/rest/fastapi"
)

// metricsRoutes serve revenue metrics (the series, its limits and its CSV export) and the
// metric dashboards' CRUD.
//
// Where upstream's server differs from the published document or from what the document
// leaves open:
//   - The series answers with response_model_exclude_none: a metric not asked for is absent
//     from periods, totals and metrics, not null; the document marks every one optional.
//   - Upstream accepts every slug of its catalog in metrics, and Till computes them all.
//   - A subscription's monthly amount is its amount (before discounts, in its own currency)
//     as the subscriptions' amount sort reads it: a year's / 12, a week's × 4, a day's × 30,
//     whatever its interval count; the sums are rounded to cents. Upstream's is its net
//     amount converted to USD, a week's × 52/12 and a day's × 365/12, over the interval
//     count, rounded per subscription. A subscription without started_at counts nowhere;
//     upstream counts it as active in every period.
//   - active_subscriptions and monthly_recurring_revenue count a subscription until its
//     ended_at; upstream's until ends_at when it is set to end (canceled at period end),
//     which differs for the periods after ends_at before the subscription is ended (future
//     periods among them). The committed and trialing metrics read ends_at as upstream's do:
//     a subscription set to end is not committed in any period, and its trial amount stops
//     at ends_at if that comes before the trial's end.
//   - average_revenue_per_user is monthly_recurring_revenue over the distinct customers
//     holding an active subscription (trials included), both at the period's end, as Till's
//     subscription stocks are; rounded half away from zero, 0 without subscribers. Upstream's
//     counts the subscriptions started by the period and not ending in it or before, a
//     subscription set to end leaving at ends_at (as for active_subscriptions above); Till's
//     counts one until its ended_at. ltv is upstream's formula over the period's ARPU, cost per
//     user and churn rate: max(0, int((ARPU - cost per user) / churn rate)), 0 when the churn
//     rate is. Narrowed to products or customers, the subscribers are the customers of the
//     subscriptions selected; costs are not narrowed by product.
//   - active_user_by_event counts a customer once whether its events name it by id or by
//     external id; upstream adds the distinct customer ids to the distinct external ids. Its
//     total counts the users of the whole window, and cost_per_user's total divides the
//     window's costs by them, where upstream's totals read the last period's active
//     subscriptions (none when those were not asked for). Costs, as upstream's, are not
//     narrowed by product or billing type.
//   - An unknown slug is 422 at ["query", "metrics"], "Invalid metric slugs: a, b"; a window
//     longer than the interval allows (or an end before the start) 422 at ["query"] with the
//     input [start_date, end_date, interval]; a zone the zone database does not hold 422 at
//     ["query", "timezone"] (the document lists the zone names as an enum).
//   - Period timestamps are the periods' starts as UTC instants (…Z), where upstream writes
//     them with the zone's offset; the export writes them with +00:00.
//   - The export streams nothing larger than the series it reads (at most 8,784 rows), as a
//     whole body: text/csv; charset=utf-8, attachment "polar-metrics.csv".
//   - Dashboards list unpaged, oldest first, the first 100 of them. A dashboard's name is at most 256 characters
//     (upstream's is unbounded); a PATCH with "name": null or "metrics": null leaves the field
//     as it is, where upstream fails writing null.
func metricsRoutes() []Route {
	filters := metricsFilters()
	dashboardCreate := fastapi.Object{Name: "MetricDashboardCreate", Fields: []fastapi.Field{
		{Name: "name", Schema: fastapi.String{MinLength: 1}, Required: true},
		{Name: "metrics", Schema: fastapi.List{Items: fastapi.String{}, MaxLength: 10}},
		{Name: "organization_id", Schema: fastapi.Nullable{Schema: fastapi.UUID4{}}},
	}}
	dashboardUpdate := fastapi.Object{Name: "MetricDashboardUpdate", Fields: []fastapi.Field{
		{Name: "name", Schema: fastapi.Nullable{Schema: fastapi.String{MinLength: 1}}},
		{Name: "metrics", Schema: fastapi.Nullable{Schema: fastapi.List{Items: fastapi.String{}, MaxLength: 10}}},
	}}
	return []Route{
		{Method: http.MethodGet, Path: "/v1/metrics/", Operation: "GetMetrics", Field: "metrics", Params: filters,
			ExcludeNone: true},
		{Method: http.MethodGet, Path: "/v1/metrics/export", Operation: "GetMetrics", Field: "metrics", Params: filters,
			ExcludeNone: true, Encode: metricsCSV},
		{Method: http.MethodGet, Path: "/v1/metrics/limits", Operation: "GetMetricsLimits", Field: "metricsLimits"},
		{Method: http.MethodGet, Path: "/v1/metrics/dashboards", Operation: "ListMetricDashboards", Field: "metricDashboards",
			Params: []fastapi.Param{Filter("organization_id", "organizationId", fastapi.UUID4{})}},
		{Method: http.MethodPost, Path: "/v1/metrics/dashboards", Operation: "CreateMetricDashboard",
			Field: "createMetricDashboard", Status: http.StatusCreated, Body: &fastapi.Body{Var: "input", Schema: dashboardCreate}},
		{Method: http.MethodGet, Path: "/v1/metrics/dashboards/{id}", Operation: "GetMetricDashboard", Field: "metricDashboard",
			Params: []fastapi.Param{PathUUID4("id", "id")}},
		{Method: http.MethodPatch, Path: "/v1/metrics/dashboards/{id}", Operation: "UpdateMetricDashboard",
			Field: "updateMetricDashboard", Params: []fastapi.Param{PathUUID4("id", "input.id")},
			Body: &fastapi.Body{Var: "input", Schema: dashboardUpdate}},
		{Method: http.MethodDelete, Path: "/v1/metrics/dashboards/{id}", Operation: "DeleteMetricDashboard",
			Status: http.StatusNoContent, Params: []fastapi.Param{PathUUID4("id", "id")}},
	}
}

// metricsFilters are the query parameters of a metrics series, /v1's and Till's exports'.
func metricsFilters() []fastapi.Param {
	return []fastapi.Param{
		required(Query("start_date", "startDate", fastapi.Date{})),
		required(Query("end_date", "endDate", fastapi.Date{})),
		Query("timezone", "timezone", fastapi.String{MinLength: 1}),
		required(Query("interval", "interval", fastapi.Enum{Name: "TimeInterval", Values: []string{"year", "month", "week", "day", "hour"}})),
		Filter("organization_id", "organizationId", fastapi.UUID4{}),
		Filter("product_id", "productId", fastapi.UUID4{}),
		Filter("billing_type", "billingType", fastapi.Enum{Name: "ProductBillingType", Values: []string{"one_time", "recurring"}}),
		Filter("customer_id", "customerId", fastapi.UUID4{}),
		{In: fastapi.InQuery, Name: "metrics", Shape: fastapi.ShapeList},
	}
}

// required marks a query parameter upstream declares without a default.
func required(p fastapi.Param) fastapi.Param {
	p.Required = true
	return p
}
