package resolvers

import (
	"context"
	"time"

	"till/graph/model"
	"till/storage"
)

// MetricsTable is a metrics answer held by metric: the periods' starts and, for each metric
// asked for in catalog order, its value in every period and its total. GraphQL's answer is
// built from it (metricsResult), and /v1 renders it directly: a year of daily points is
// thousands of values, which written field by field through the executor and then stripped
// of the metrics not asked for cost more than the statement that computed them.
type MetricsTable struct {
	// Timestamps are the periods' starts, in UTC.
	Timestamps []time.Time
	Metrics    []MetricColumn
}

// MetricColumn is one metric of a MetricsTable.
type MetricColumn struct {
	Slug, DisplayName string
	Type              model.MetricType
	// Float says the values are fractional, rates, averages and amounts in fractions of a
	// cent (Floats); otherwise they are counts and amounts in cents (Ints). A total is the
	// kind its values are, or a ratio for aggregateRatio.
	Float      bool
	Ints       []int64
	Floats     []float64
	TotalInt   *int64   // nil unless the total is a count or an amount in cents and there are periods
	TotalFloat *float64 // nil unless the total is fractional and there are periods
}

// MetricsTableForV1 answers GET /v1/metrics/ (and its export) without executing its persisted
// operation. The operation's guard has checked the scopes; the role rule of the metrics
// field is applied here, as its @hasScope directive applies it in GraphQL.
func (r *Resolver) MetricsTableForV1(ctx context.Context, a MetricsArgs) (*MetricsTable, error) {
	args := map[string]any{"organizationId": a.Organizations, "productId": a.Products, "customerId": a.Customers}
	ctx, err := r.narrowByRole(ctx, r.listPermission("metrics"), args, false)
	if err != nil {
		return nil, err
	}
	points, defs, err := r.metricsPoints(ctx, a)
	if err != nil {
		return nil, err
	}
	return metricsTable(points, defs), nil
}

// metricsTable folds the points into one column per metric of defs.
func metricsTable(points []storage.MetricsPoint, defs []*metricDef) *MetricsTable {
	t := &MetricsTable{Timestamps: make([]time.Time, len(points)), Metrics: make([]MetricColumn, len(defs))}
	for i := range points {
		t.Timestamps[i] = points[i].Timestamp.UTC()
	}
	for j, d := range defs {
		c := MetricColumn{Slug: d.slug, DisplayName: d.display, Type: d.typ, Float: d.of == nil}
		var sum int64
		var real, num, den float64
		if c.Float {
			c.Floats = make([]float64, len(points))
		} else {
			c.Ints = make([]int64, len(points))
		}
		for i := range points {
			p := &points[i]
			switch {
			case d.ratio != nil:
				n, m := d.ratio(p)
				num, den = num+n, den+m
				c.Floats[i] = ratioOf(n, m)
			case d.real != nil:
				c.Floats[i] = d.real(p)
				real += c.Floats[i]
			default:
				c.Ints[i] = d.of(p)
				sum += c.Ints[i]
			}
		}
		last := len(points) - 1
		switch {
		case last < 0:
		case d.window != nil && d.ratio != nil:
			c.TotalFloat = ptrTo(ratioOf(num, d.window(&points[0])))
		case d.window != nil:
			c.TotalInt = ptrTo(int64(d.window(&points[0])))
		case d.agg == aggregateLast && c.Float:
			c.TotalFloat = ptrTo(c.Floats[last])
		case d.agg == aggregateLast:
			c.TotalInt = ptrTo(c.Ints[last])
		case d.agg == aggregateRatio:
			c.TotalFloat = ptrTo(ratioOf(num, den))
		case c.Float:
			c.TotalFloat = ptrTo(real)
		default:
			c.TotalInt = ptrTo(sum)
		}
		t.Metrics[j] = c
	}
	return t
}
