package rest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"till/graph/model"
	"till/resolvers"
	"till/rest/fastapi"
)

// ExportPathPrefix is where Till's own exports are served, beside /v1 (upstream has none):
// GET /export/{orders,subscriptions,customers,events,metrics}.{csv,jsonl}.
const ExportPathPrefix = "/export/"

// The media types of Till's own exports.
const (
	mediaCSV       = "text/csv"
	mediaJSONLines = "application/jsonl"
)

// tillExportRoutes are Till's own exports, one per list and format, taking the list's filters
// and sorting (a list route's parameters without page and limit).
func tillExportRoutes() []Route {
	var out []Route
	for _, e := range []struct {
		name, operation string
		params          []fastapi.Param
	}{
		{"orders", "ExportOrders", exportParams(routeOf("ListOrders"))},
		{"subscriptions", "ExportSubscriptions", exportParams(routeOf("ListSubscriptions"))},
		{"customers", "ExportCustomers", []fastapi.Param{
			Sorting("created_at", "email", "name"), withVar(Metadata(), "filter.metadata"),
			Filter("organization_id", "organizationId", fastapi.UUID4{}),
			Query("email", "filter.email", fastapi.Nullable{Schema: fastapi.String{}}),
			Query("external_id", "filter.externalId", fastapi.Nullable{Schema: fastapi.String{}}),
			Query("query", "filter.query", fastapi.Nullable{Schema: fastapi.String{}}),
		}},
		{"events", "ExportUsageEvents", []fastapi.Param{
			Sorting("timestamp"), withVar(Metadata(), "filter.metadata"),
			Filter("organization_id", "filter.organizationId", fastapi.UUID4{}),
			Filter("customer_id", "filter.customerId", fastapi.UUID4{}),
			Filter("external_customer_id", "filter.externalCustomerId", fastapi.String{}),
			Filter("name", "filter.name", fastapi.String{}),
			Filter("source", "filter.source", fastapi.Enum{Name: "EventSource", Values: []string{"system", "user"}}),
			Query("start_timestamp", "filter.startTimestamp", fastapi.Nullable{Schema: fastapi.DateTime{}}),
			Query("end_timestamp", "filter.endTimestamp", fastapi.Nullable{Schema: fastapi.DateTime{}}),
			Query("parent_id", "filter.parentId", fastapi.Nullable{Schema: fastapi.UUID4{}}),
		}},
	} {
		for _, ext := range []string{"csv", "jsonl"} {
			media := mediaCSV
			if ext == "jsonl" {
				media = mediaJSONLines
			}
			out = append(out, Route{Method: http.MethodGet, Path: ExportPathPrefix + e.name + "." + ext,
				Operation: e.operation, File: media, Params: e.params})
		}
	}
	// A metrics series is at most 8,784 periods: it is read whole and written at once.
	return append(out,
		Route{Method: http.MethodGet, Path: ExportPathPrefix + "metrics.csv", Operation: "GetMetrics", Field: "metrics",
			Params: metricsFilters(), ExcludeNone: true, Encode: metricsTillCSV},
		Route{Method: http.MethodGet, Path: ExportPathPrefix + "metrics.jsonl", Operation: "GetMetrics", Field: "metrics",
			Params: metricsFilters(), ExcludeNone: true, Encode: metricsJSONLines})
}

// routeOf is the /v1 route running operation.
func routeOf(operation string) Route {
	i := slices.IndexFunc(Routes(), func(r Route) bool { return r.Operation == operation })
	return Routes()[i]
}

// exportParams are a list route's parameters without page and limit, its filters going to
// the export operation's $filter.
func exportParams(list Route) []fastapi.Param {
	var out []fastapi.Param
	for _, p := range list.Params {
		switch p.Name {
		case "page", "limit":
		case "sorting":
			out = append(out, p)
		default:
			out = append(out, withVar(p, "filter."+p.Variable()))
		}
	}
	return out
}

// withVar is p sending its value to variable v.
func withVar(p fastapi.Param, v string) fastapi.Param {
	p.Var = v
	return p
}

// tillExports wires Till's export routes to the use cases, by path.
func tillExports(r *resolvers.Resolver) map[string]ExportFunc {
	out := map[string]ExportFunc{}
	for _, media := range []string{mediaCSV, mediaJSONLines} {
		ext := map[string]string{mediaCSV: ".csv", mediaJSONLines: ".jsonl"}[media]
		out[ExportPathPrefix+"orders"+ext] = tillExport(media, orderFields,
			func(ctx context.Context, vars map[string]any, each func(*resolvers.OrderExport) error) error {
				var f model.OrderFilter
				return withFilter(vars, &f, func() error { return r.ExportOrders(ctx, &f, sortingOf(vars), each) })
			})
		out[ExportPathPrefix+"subscriptions"+ext] = tillExport(media, subscriptionFields,
			func(ctx context.Context, vars map[string]any, each func(*resolvers.SubscriptionExport) error) error {
				var f model.SubscriptionFilter
				return withFilter(vars, &f, func() error { return r.ExportSubscriptions(ctx, &f, sortingOf(vars), each) })
			})
		out[ExportPathPrefix+"customers"+ext] = tillExport(media, customerFields,
			func(ctx context.Context, vars map[string]any, each func(*resolvers.CustomerExport) error) error {
				var f model.CustomerFilter
				var orgs struct {
					IDs []uuid.UUID `json:"organizationId"`
				}
				if err := decodeVars(vars, &orgs); err != nil {
					return err
				}
				return withFilter(vars, &f, func() error { return r.ExportCustomers(ctx, orgs.IDs, &f, sortingOf(vars), each) })
			})
		out[ExportPathPrefix+"events"+ext] = tillExport(media, eventFields,
			func(ctx context.Context, vars map[string]any, each func(*resolvers.UsageEventExport) error) error {
				var f model.UsageEventFilter
				return withFilter(vars, &f, func() error { return r.ExportUsageEvents(ctx, &f, sortingOf(vars), each) })
			})
	}
	return out
}

// withFilter reads the export's filter into f, then runs the export.
func withFilter(vars map[string]any, f any, run func() error) error {
	if err := decodeVars(vars["filter"], f); err != nil {
		return err
	}
	return run()
}

// sortingOf is the export's validated sorting.
func sortingOf(vars map[string]any) []string {
	raw, _ := vars["sorting"].([]any)
	out := make([]string, 0, len(raw))
	for _, s := range raw {
		if s, ok := s.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// tillExport is one of Till's exports in one format: a header row then a row per record for
// CSV, an object per line for JSON lines, each with the fields in order.
func tillExport[T any](media string, fields []tillField[T],
	stream func(context.Context, map[string]any, func(*T) error) error) ExportFunc {
	return func(ctx context.Context, vars map[string]any, h http.Header, w io.Writer) error {
		h.Set("Content-Type", media+"; charset=utf-8")
		if media == mediaJSONLines {
			return stream(ctx, vars, func(row *T) error { return writeJSONLine(w, fields, row) })
		}
		out := &csvOut{w: w}
		cells := make([]string, len(fields))
		for i, f := range fields {
			cells[i] = f.name
		}
		if err := out.write(cells); err != nil {
			return err
		}
		return stream(ctx, vars, func(row *T) error {
			for i, f := range fields {
				cells[i] = csvValue(f.value(row), f.text)
			}
			return out.write(cells)
		})
	}
}

// tillField is one field of Till's own exports: its name (the JSON key and the CSV header,
// as the /v1 shape names it), its value, and whether a person wrote it (text a spreadsheet
// must not run as a formula).
type tillField[T any] struct {
	name  string
	value func(*T) any // nil, string, int64, int, bool, time.Time, uuid.UUID or a JSON-marshalable value
	text  bool
}

// csvValue is a field's CSV cell: date-times in RFC 3339 UTC as on /v1, JSON values compact.
func csvValue(v any, text bool) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		if text {
			return neutralized(v)
		}
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	case bool:
		return strconv.FormatBool(v)
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano)
	case uuid.UUID:
		return v.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return neutralized(string(b))
}

// writeJSONLine writes one record as a JSON object on one line, its fields in order.
func writeJSONLine[T any](w io.Writer, fields []tillField[T], row *T) error {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(f.name)
		b.Write(key)
		b.WriteByte(':')
		v := f.value(row)
		if t, ok := v.(time.Time); ok {
			v = t.UTC().Format(time.RFC3339Nano)
		}
		val, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b.Write(val)
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}
