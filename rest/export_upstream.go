package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	_ "time/tzdata" // an export's time zone is valid or not whatever the host has installed

	"github.com/google/uuid"

	"till/graph/model"
	"till/resolvers"
	"till/rest/fastapi"
)

// upstreamExportRoutes are upstream's CSV exports. Where upstream's server differs from the
// published document:
//   - timezone is documented as any string; the server refuses a name that is not an IANA
//     time zone with a 422 value_error ("'X' is not a valid IANA time zone");
//   - created_after, created_before, started_after and started_before are documented as
//     date-times; the server refuses one without a UTC offset (422 timezone_aware);
//   - the 200 is documented as text/csv; the server sends "text/csv; charset=utf-8" and
//     Content-Disposition: attachment; filename="polar-orders[-from][-to].csv" (the bounds'
//     dates in the export's time zone), "polar-subscriptions…" and "polar-customers.csv";
//   - the customers export has no documented order; its rows come newest first here, as
//     the customer list's;
//   - the subscriptions export's Net Amount is the subscription's amount: Till keeps no
//     tax-inclusive split of a subscription's recurring amount.
func upstreamExportRoutes() []Route {
	org := Filter("organization_id", "filter.organizationId", fastapi.UUID4{})
	product := Filter("product_id", "filter.productId", fastapi.UUID4{})
	zone := Query("timezone", "timezone", fastapi.After{Schema: fastapi.String{}, Check: ianaZone})
	aware := fastapi.Nullable{Schema: fastapi.DateTime{Aware: true}}
	return []Route{
		{Method: http.MethodGet, Path: "/v1/customers/export", Operation: "ExportCustomers", File: "text/csv",
			Params: []fastapi.Param{Filter("organization_id", "organizationId", fastapi.UUID4{})}},
		{Method: http.MethodGet, Path: "/v1/orders/export", Operation: "ExportOrders", File: "text/csv",
			Params: []fastapi.Param{org, product, Filter("status", "filter.status", orderStatus()),
				Query("created_after", "filter.createdAfter", aware), Query("created_before", "filter.createdBefore", aware),
				zone, Filter("columns", "columns", fastapi.Enum{Name: "OrderExportColumn", Values: orderCSV.names()})}},
		{Method: http.MethodGet, Path: "/v1/subscriptions/export", Operation: "ExportSubscriptions", File: "text/csv",
			Params: []fastapi.Param{org, product, Filter("status", "filter.status", subscriptionStatus()),
				Query("cancel_at_period_end", "filter.cancelAtPeriodEnd", fastapi.Nullable{Schema: fastapi.Bool{}}),
				Query("started_after", "filter.startedAfter", aware), Query("started_before", "filter.startedBefore", aware),
				zone, Filter("columns", "columns", fastapi.Enum{Name: "SubscriptionExportColumn", Values: subscriptionCSV.names()})}},
	}
}

// ianaZone is upstream's time zone validator: ZoneInfo(value) must load.
func ianaZone(v any) string {
	s, _ := v.(string)
	if _, err := loadZone(s); err != nil {
		return fastapi.PyRepr(s) + " is not a valid IANA time zone"
	}
	return ""
}

// loadZone loads an IANA time zone. Go would also take "" and "Local" (UTC and the host's
// zone), which are no IANA names.
func loadZone(name string) (*time.Location, error) {
	if name == "" || name == "Local" || strings.ContainsRune(name, 0) {
		return nil, fmt.Errorf("not an IANA time zone: %q", name)
	}
	return time.LoadLocation(name)
}

// upstreamOrdersExport is GET /v1/orders/export.
func upstreamOrdersExport(r *resolvers.Resolver) ExportFunc {
	return func(ctx context.Context, vars map[string]any, h http.Header, w io.Writer) error {
		var f model.OrderFilter
		tz, cols, err := upstreamOptions(vars, &f, orderCSV, orderDefaults)
		if err != nil {
			return err
		}
		csvHeaders(h, exportFilename("polar-orders", tz, f.CreatedAfter, f.CreatedBefore))
		return writeCSV(w, cols, tz, func(each func(*resolvers.OrderExport) error) error {
			return r.ExportOrders(ctx, &f, nil, each)
		})
	}
}

// upstreamSubscriptionsExport is GET /v1/subscriptions/export.
func upstreamSubscriptionsExport(r *resolvers.Resolver) ExportFunc {
	return func(ctx context.Context, vars map[string]any, h http.Header, w io.Writer) error {
		var f model.SubscriptionFilter
		tz, cols, err := upstreamOptions(vars, &f, subscriptionCSV, subscriptionDefaults)
		if err != nil {
			return err
		}
		csvHeaders(h, exportFilename("polar-subscriptions", tz, f.StartedAfter, f.StartedBefore))
		return writeCSV(w, cols, tz, func(each func(*resolvers.SubscriptionExport) error) error {
			return r.ExportSubscriptions(ctx, &f, nil, each)
		})
	}
}

// upstreamCustomersExport is GET /v1/customers/export.
func upstreamCustomersExport(r *resolvers.Resolver) ExportFunc {
	return func(ctx context.Context, vars map[string]any, h http.Header, w io.Writer) error {
		var orgs struct {
			IDs []uuid.UUID `json:"organizationId"`
		}
		if err := decodeVars(vars, &orgs); err != nil {
			return err
		}
		csvHeaders(h, "polar-customers.csv")
		return writeCSV(w, customerCSV, time.UTC, func(each func(*resolvers.CustomerExport) error) error {
			return r.ExportCustomers(ctx, orgs.IDs, nil, nil, each)
		})
	}
}

// upstreamOptions reads an export's filter into f, and its time zone and columns (the
// defaults when none are asked for).
func upstreamOptions[T any](vars map[string]any, f any, all, defaults csvColumns[T]) (*time.Location, csvColumns[T], error) {
	if err := decodeVars(vars["filter"], f); err != nil {
		return nil, nil, err
	}
	name, _ := vars["timezone"].(string)
	if name == "" {
		name = "UTC"
	}
	tz, err := loadZone(name)
	if err != nil {
		return nil, nil, err // validated with the parameters already
	}
	cols := defaults
	if names, _ := vars["columns"].([]any); len(names) > 0 {
		cols = all.pick(names)
	}
	return tz, cols, nil
}

// decodeVars reads validated variables (GraphQL names, canonical values) into a filter.
func decodeVars(v, into any) error {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

// csvHeaders are the headers of upstream's CSVStreamingResponse.
func csvHeaders(h http.Header, filename string) {
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="`+filename+`"`)
}

// exportFilename is upstream's get_filename: the prefix, then each bound given as its date in
// the export's time zone.
func exportFilename(prefix string, tz *time.Location, bounds ...*time.Time) string {
	for _, b := range bounds {
		if b != nil {
			prefix += "-" + b.In(tz).Format("2006-01-02")
		}
	}
	return prefix + ".csv"
}
