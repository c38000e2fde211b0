package resolvers

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"till/graph/model"
	"till/storage"
)

// metricsInterval is what a TimeInterval allows: the window it may span (upstream's
// MIN_INTERVAL_DAYS and MAX_INTERVAL_DAYS; only the maximum is enforced, as upstream does).
type metricsInterval struct {
	value            model.TimeInterval
	minDays, maxDays int
}

// metricsIntervals lists the intervals in the order the limits answer names them.
var metricsIntervals = [...]metricsInterval{
	{model.TimeIntervalHour, 0, 7}, {model.TimeIntervalDay, 0, 366}, {model.TimeIntervalWeek, 14, 7 * 53},
	{model.TimeIntervalMonth, 60, 365 * 4}, {model.TimeIntervalYear, 366, 365 * 10},
}

// metricsMinDate is the earliest start date the limits announce (upstream's MIN_DATE).
const metricsMinDate = "2023-01-01"

// MetricsArgs are the arguments of a metrics query, as GraphQL and /v1 pass them.
type MetricsArgs struct {
	StartDate, EndDate string
	Timezone           *string
	Interval           model.TimeInterval
	Organizations      []uuid.UUID
	Products           []uuid.UUID
	BillingTypes       []model.ProductBillingType
	Customers          []uuid.UUID
	Metrics            []string
}

// metrics answers a metrics query over the caller's organizations: the periods from the
// rollups (or the base tables, see storage.MetricsFilter), the totals and the catalog
// entries of the metrics asked for. Only what those metrics read is computed.
func (r *Resolver) metrics(ctx context.Context, a MetricsArgs) (*model.MetricsResult, error) {
	points, defs, err := r.metricsPoints(ctx, a)
	if err != nil {
		return nil, err
	}
	return metricsResult(metricsTable(points, defs)), nil
}

// metricsPoints validates a metrics query and reads its points, with the catalog entries of
// the metrics asked for.
func (r *Resolver) metricsPoints(ctx context.Context, a MetricsArgs) ([]storage.MetricsPoint, []*metricDef, error) {
	defs, err := selectMetrics(a.Metrics)
	if err != nil {
		return nil, nil, err
	}
	f, err := metricsFilter(ctx, a)
	if err != nil {
		return nil, nil, err
	}
	f.Columns = metricColumns(defs)
	// A read of some customers plans with its arguments: its index choices follow them.
	db := r.analytics
	if f.Customers != nil {
		db = r.db
	}
	points, err := storage.Metrics(ctx, db, f)
	if errors.Is(err, storage.ErrUnknownTimeZone) {
		// The zone as asked for: f.Zone may be the name PostgreSQL reads it by.
		zone := "UTC"
		if a.Timezone != nil {
			zone = *a.Timezone
		}
		return nil, nil, invalidZone(zone)
	}
	if err != nil {
		return nil, nil, err
	}
	return points, defs, nil
}

// FoldMetrics moves the metric changes writers appended into the rollups, so reads sum few
// rows beyond them; serve runs it every ten seconds. Reads are exact whether it ran or not.
func (r *Resolver) FoldMetrics(ctx context.Context) (int, error) {
	return storage.FoldMetrics(ctx, r.db)
}

// selectMetrics resolves the slugs asked for to the metrics Till computes, in catalog
// order; an unknown slug is upstream's 422 on query.metrics.
func selectMetrics(slugs []string) ([]*metricDef, error) {
	if slugs != nil {
		var invalid []string
		for _, s := range slugs {
			if !slices.Contains(upstreamMetricSlugs[:], s) && !slices.Contains(invalid, s) {
				invalid = append(invalid, s)
			}
		}
		if invalid != nil {
			sort.Strings(invalid)
			return nil, Invalid("value_error", "Invalid metric slugs: "+strings.Join(invalid, ", "), slugs, "metrics")
		}
	}
	var defs []*metricDef
	for i := range metricDefs {
		if slugs == nil || slices.Contains(slugs, metricDefs[i].slug) {
			defs = append(defs, &metricDefs[i])
		}
	}
	return defs, nil
}

// metricsFilter validates the window, the zone and the filters, and narrows the
// organizations to the caller's.
func metricsFilter(ctx context.Context, a MetricsArgs) (storage.MetricsFilter, error) {
	start, errStart := time.Parse(time.DateOnly, a.StartDate)
	if errStart != nil {
		return storage.MetricsFilter{}, Invalid("date_from_datetime_parsing", "Input should be a valid date", a.StartDate, "startDate")
	}
	end, errEnd := time.Parse(time.DateOnly, a.EndDate)
	if errEnd != nil {
		return storage.MetricsFilter{}, Invalid("date_from_datetime_parsing", "Input should be a valid date", a.EndDate, "endDate")
	}
	zone := "UTC"
	if a.Timezone != nil {
		zone = *a.Timezone
	}
	loc, err := metricsZone(zone)
	if err != nil {
		return storage.MetricsFilter{}, err
	}
	// The periods are cut in Go and in PostgreSQL alike: both read the name PostgreSQL reads
	// as the zone.
	if pg := storage.PostgresZone(zone); pg != zone {
		zone = pg
		if loc, err = metricsZone(zone); err != nil {
			return storage.MetricsFilter{}, err
		}
	}
	i := slices.IndexFunc(metricsIntervals[:], func(m metricsInterval) bool { return m.value == a.Interval })
	if i < 0 || start.After(end) || int(end.Sub(start).Hours()/24) > metricsIntervals[i].maxDays {
		return storage.MetricsFilter{}, Invalid("value_error", "The interval is too small for the given date range. "+
			"Use a larger interval or reduce the date range.", []any{a.StartDate, a.EndDate, string(a.Interval)}, "query")
	}
	f := storage.MetricsFilter{Orgs: organizations(ctx), Interval: string(a.Interval), Zone: zone, Location: loc,
		// The window's bounds are local midnights as PostgreSQL reads them, where its periods
		// start: a midnight that a change skips (Santiago's in September) is the instant after
		// the gap, where time.Date took the one before it, a day early.
		From:     storage.LocalTime(start, loc),
		To:       storage.LocalTime(end.AddDate(0, 0, 1), loc),
		Products: a.Products, Customers: a.Customers}
	if a.Organizations != nil {
		f.Orgs = slices.DeleteFunc(slices.Clone(f.Orgs), func(o uuid.UUID) bool { return !slices.Contains(a.Organizations, o) })
	}
	for _, b := range a.BillingTypes {
		f.BillingTypes = append(f.BillingTypes, string(b))
	}
	f.Exact = !offsetsDivide(loc, f.From, f.To, 3600)
	f.Quarters = offsetsDivide(loc, f.From, f.To, 900)
	return f, nil
}

// metricsZone loads an IANA zone name; anything else (a path, an abbreviation the zone
// database does not hold, a huge or binary string) is a 422 on timezone, as pydantic's
// TimeZoneName refuses it upstream.
func metricsZone(zone string) (*time.Location, error) {
	if zone != "" && len(zone) <= 64 && utf8.ValidString(zone) && !strings.ContainsAny(zone, "\x00\\") &&
		zone != "Local" {
		if loc, err := time.LoadLocation(zone); err == nil {
			return loc, nil
		}
	}
	return nil, invalidZone(zone)
}

// invalidZone is the 422 on timezone that upstream's TimeZoneName answers.
func invalidZone(zone string) error {
	return &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "TimeZoneName", Loc: []any{"timezone"},
		Msg: "Invalid timezone name.", Input: zone}}}
}

// offsetsDivide reports whether every offset loc takes in [from, to] is a whole number of
// seconds steps, checked at both ends and at each month between (zones change offset at most
// a few times a year). Only with whole hours do the rollups' UTC hours cut into the zone's
// periods exactly; the other zones' periods are cut inside hours (storage.MetricsFilter.Exact),
// with pieces of the quarter-hour rollups when the offsets are whole quarters.
func offsetsDivide(loc *time.Location, from, to time.Time, seconds int) bool {
	for t := from; ; t = t.AddDate(0, 1, 0) {
		if t.After(to) {
			t = to
		}
		if _, off := t.In(loc).Zone(); off%seconds != 0 {
			return false
		}
		if t.Equal(to) {
			return true
		}
	}
}

// metricsResult writes a table as periods, totals and catalog entries. The values go to the
// model fields named after the slugs (revenue → Revenue).
func metricsResult(t *MetricsTable) *model.MetricsResult {
	res := &model.MetricsResult{Periods: make([]*model.MetricsPeriod, len(t.Timestamps)),
		Totals: &model.MetricsTotals{}, Metrics: &model.MetricsInfo{}}
	for i, ts := range t.Timestamps {
		res.Periods[i] = &model.MetricsPeriod{Timestamp: ts}
	}
	totals, info := reflect.ValueOf(res.Totals).Elem(), reflect.ValueOf(res.Metrics).Elem()
	periodType := reflect.TypeFor[model.MetricsPeriod]()
	for _, c := range t.Metrics {
		field := metricGoName(c.Slug)
		// The field is looked up once per metric, not per period: a year of daily points
		// looked up by name spent more than the statement that computed them.
		f, _ := periodType.FieldByName(field)
		for i, p := range res.Periods {
			period := reflect.ValueOf(p).Elem().Field(f.Index[0])
			if c.Float {
				period.Set(reflect.ValueOf(ptrTo(c.Floats[i])))
			} else {
				period.Set(reflect.ValueOf(ptrTo(int(c.Ints[i]))))
			}
		}
		total := totals.FieldByName(field)
		switch {
		case c.TotalFloat != nil:
			total.Set(reflect.ValueOf(c.TotalFloat))
		case c.TotalInt != nil:
			total.Set(reflect.ValueOf(ptrTo(int(*c.TotalInt))))
		}
		info.FieldByName(field).Set(reflect.ValueOf(&model.Metric{Slug: c.Slug, DisplayName: c.DisplayName, Type: c.Type}))
	}
	return res
}

// ratioOf is num/den, 0 when den is 0.
func ratioOf(num, den float64) float64 {
	if den == 0 {
		return 0
	}
	return num / den
}

// metricGoName is the Go field gqlgen generates for a slug's GraphQL field.
func metricGoName(slug string) string {
	parts := strings.Split(slug, "_")
	for i, p := range parts {
		parts[i] = strings.ToUpper(p[:1]) + p[1:]
	}
	return strings.Join(parts, "")
}

// metricsLimits is the static answer of GET /v1/metrics/limits.
func metricsLimits() *model.MetricsLimits {
	l := &model.MetricsLimits{MinDate: metricsMinDate, Intervals: &model.MetricsIntervalsLimits{}}
	v := reflect.ValueOf(l.Intervals).Elem()
	for _, m := range metricsIntervals {
		v.FieldByName(metricGoName(string(m.value))).Set(reflect.ValueOf(&model.MetricsIntervalLimit{
			MinDays: m.minDays, MaxDays: m.maxDays}))
	}
	return l
}
