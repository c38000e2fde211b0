package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/graph/model"
	"till/internal/scalar"
	"till/resolvers"
)

// GET /v1/metrics/ answers a year of daily points with every metric in some 400 kB. It reads
// the metrics as a table and writes it here, without the nulls of the metrics not asked for,
// where executing GetMetrics wrote every field of every period through the executor and
// excludeNone then copied the answer again without the nulls: that cost as much as the
// statement. The operation stays the definition of the shape: it authorizes the route, and a
// test answers the same queries both ways and requires identical bytes.

// metricsDirect serves the metrics routes (the series and its export).
func metricsDirect(r *resolvers.Resolver, present func(context.Context, error) *gqlerror.Error) DirectFunc {
	return func(ctx context.Context, vars map[string]any) (json.RawMessage, *gqlerror.Error) {
		t, err := r.MetricsTableForV1(ctx, metricsArgs(vars))
		if err != nil {
			return nil, present(ctx, err)
		}
		var buf bytes.Buffer
		writeMetrics(ctx, &buf, t)
		return buf.Bytes(), nil
	}
}

// metricsArgs reads GetMetrics' validated variables (GraphQL names, canonical values).
func metricsArgs(vars map[string]any) resolvers.MetricsArgs {
	a := resolvers.MetricsArgs{Interval: model.TimeInterval(str(vars["interval"])),
		Organizations: uuids(vars["organizationId"]), Products: uuids(vars["productId"]),
		Customers: uuids(vars["customerId"])}
	a.StartDate, a.EndDate = str(vars["startDate"]), str(vars["endDate"])
	if z, isStr := vars["timezone"].(string); isStr {
		a.Timezone = &z
	}
	if list, isList := vars["billingType"].([]any); isList {
		a.BillingTypes = make([]model.ProductBillingType, len(list))
		for i, v := range list {
			a.BillingTypes[i] = model.ProductBillingType(str(v))
		}
	}
	if list, isList := vars["metrics"].([]any); isList {
		a.Metrics = make([]string, len(list))
		for i, v := range list {
			a.Metrics[i] = str(v)
		}
	}
	return a
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// uuids reads a list of canonical UUIDs; nil when the filter is absent.
func uuids(v any) []uuid.UUID {
	list, isList := v.([]any)
	if !isList {
		return nil
	}
	out := make([]uuid.UUID, 0, len(list))
	for _, s := range list {
		if id, err := uuid.Parse(str(s)); err == nil {
			out = append(out, id)
		}
	}
	return out
}

// writeMetrics writes t as GetMetrics' metrics field renders it with its nulls dropped:
// periods, totals and catalog entries, each holding the metrics asked for in catalog order,
// every value as the GraphQL scalars' marshalers write it.
func writeMetrics(ctx context.Context, w *bytes.Buffer, t *resolvers.MetricsTable) {
	// The period values are written as the scalars' marshalers write them (Int: strconv.Itoa;
	// Float: %g, which is strconv's shortest 'g'; DateTime: the quoted FormatDateTime), into
	// a buffer sized for them, each member name quoted once: a year of every metric is some
	// 20,000 values.
	keys := make([]string, len(t.Metrics))
	size := 64
	for i, c := range t.Metrics {
		keys[i] = `,"` + c.Slug + `":`
		size += len(keys[i]) + 24
	}
	w.Grow(len(t.Timestamps)*(size+40) + 4096)
	w.WriteString(`{"periods":[`)
	scratch := make([]byte, 0, 32)
	for i, ts := range t.Timestamps {
		if i > 0 {
			w.WriteByte(',')
		}
		scratch = append(scratch[:0], `{"timestamp":"`...)
		scratch = scalar.AppendDateTime(scratch, ts)
		scratch = append(scratch, '"')
		w.Write(scratch)
		for k, c := range t.Metrics {
			w.WriteString(keys[k])
			if c.Float {
				// NaN and ±Inf, which the marshaler refuses, come from no sum of bounded costs
				// nor from ratioOf.
				scratch = strconv.AppendFloat(scratch[:0], c.Floats[i], 'g', -1, 64)
			} else {
				scratch = strconv.AppendInt(scratch[:0], c.Ints[i], 10)
			}
			w.Write(scratch)
		}
		w.WriteByte('}')
	}
	w.WriteString(`],"totals":`)
	totals := jsonObject{w: w}
	for _, c := range t.Metrics {
		switch {
		case c.TotalFloat != nil:
			totals.key(c.Slug)
			_ = graphql.MarshalFloatContext(*c.TotalFloat).MarshalGQLContext(ctx, w)
		case c.TotalInt != nil:
			totals.field(c.Slug, graphql.MarshalInt(int(*c.TotalInt)))
		}
	}
	totals.close()
	w.WriteString(`,"metrics":`)
	info := jsonObject{w: w}
	for _, c := range t.Metrics {
		info.key(c.Slug)
		m := jsonObject{w: w}
		m.field("slug", graphql.MarshalString(c.Slug))
		m.field("display_name", graphql.MarshalString(c.DisplayName))
		m.field("type", c.Type)
		m.close()
	}
	info.close()
	w.WriteByte('}')
}
