package storage

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// The series statement answers one row of arrays, one array per column, rather than a row
// per period: a year of every metric is some 19,000 values, and scanning them a row at a
// time (a protocol message per row, a text decode and a reflective assignment per value)
// took more of till serve's time than PostgreSQL took to compute them. The arrays are
// built by one aggregate step, which reads the periods once and appends to every array in
// the same step, so the arrays' elements line up; the points are sorted by time after.

// metricsArrays wraps the series statement rows (one per period, its first column the
// timestamp) into one row of arrays named after the columns.
func metricsArrays(rows string, cols []string) string {
	var q strings.Builder
	q.WriteString(`SELECT array_agg((extract(epoch FROM r.timestamp) * 1000000)::bigint) AS timestamp`)
	for _, c := range cols {
		fmt.Fprintf(&q, `, array_agg(r.%s) AS %[1]s`, c)
	}
	fmt.Fprintf(&q, `
	FROM (%s) r`, rows)
	return q.String()
}

// outputName is the name an output expression of the series statement is given ("expr AS
// name").
func outputName(expr string) string {
	return expr[strings.LastIndex(expr, " AS ")+len(" AS "):]
}

// scanMetricsArrays runs the array statement and unfolds its row into points, one per
// element, ordered by time.
func scanMetricsArrays(ctx context.Context, q sqlx.QueryerContext, query string, args ...any) ([]MetricsPoint, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("metrics: the series statement answered no row")
	}
	pointType := reflect.TypeFor[MetricsPoint]()
	fields := make([]int, len(cols))
	dest := make([]any, len(cols))
	for i, c := range cols {
		f, ok := metricsField(pointType, c)
		if !ok {
			return nil, fmt.Errorf("metrics: no MetricsPoint field for column %q", c)
		}
		fields[i] = f.Index[0]
		switch f.Type.Kind() {
		case reflect.Float64:
			dest[i] = new(pq.Float64Array)
		default:
			dest[i] = new(pq.Int64Array)
		}
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, err
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	times := *dest[0].(*pq.Int64Array)
	points := make([]MetricsPoint, len(times))
	for i, us := range times {
		points[i].Timestamp = time.UnixMicro(us).UTC()
	}
	for i := 1; i < len(cols); i++ {
		switch d := dest[i].(type) {
		case *pq.Int64Array:
			if len(*d) != len(points) {
				return nil, fmt.Errorf("metrics: column %q has %d values for %d periods", cols[i], len(*d), len(points))
			}
			for j, v := range *d {
				reflect.ValueOf(&points[j]).Elem().Field(fields[i]).SetInt(v)
			}
		case *pq.Float64Array:
			if len(*d) != len(points) {
				return nil, fmt.Errorf("metrics: column %q has %d values for %d periods", cols[i], len(*d), len(points))
			}
			for j, v := range *d {
				reflect.ValueOf(&points[j]).Elem().Field(fields[i]).SetFloat(v)
			}
		}
	}
	slices.SortStableFunc(points, func(a, b MetricsPoint) int { return a.Timestamp.Compare(b.Timestamp) })
	return points, nil
}

// metricsField finds the MetricsPoint field whose db tag is col.
func metricsField(t reflect.Type, col string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if f := t.Field(i); f.Tag.Get("db") == col {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
