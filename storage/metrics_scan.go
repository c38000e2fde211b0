package storage

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
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
	fields := make([]reflect.StructField, len(cols))
	raw := make([]sql.RawBytes, len(cols))
	dest := make([]any, len(cols))
	for i, c := range cols {
		f, ok := metricsField(pointType, c)
		if !ok {
			return nil, fmt.Errorf("metrics: no MetricsPoint field for column %q", c)
		}
		fields[i], dest[i] = f, &raw[i]
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, err
	}
	var points []MetricsPoint
	var ints []int64
	var floats []float64
	for i, c := range cols {
		if i == 0 {
			if ints, err = appendInt64Array(ints[:0], raw[0]); err != nil {
				return nil, fmt.Errorf("metrics: column %q: %w", c, err)
			}
			points = make([]MetricsPoint, len(ints))
			for j, us := range ints {
				points[j].Timestamp = time.UnixMicro(us).UTC()
			}
			continue
		}
		var n int
		if fields[i].Type.Kind() == reflect.Float64 {
			floats, err = appendFloat64Array(floats[:0], raw[i])
			n = len(floats)
		} else {
			ints, err = appendInt64Array(ints[:0], raw[i])
			n = len(ints)
		}
		if err == nil && n != len(points) {
			err = fmt.Errorf("%d values for %d periods", n, len(points))
		}
		if err != nil {
			return nil, fmt.Errorf("metrics: column %q: %w", c, err)
		}
		all := reflect.ValueOf(points)
		for j := range points {
			v := all.Index(j).Field(fields[i].Index[0])
			if fields[i].Type.Kind() == reflect.Float64 {
				v.SetFloat(floats[j])
			} else {
				v.SetInt(ints[j])
			}
		}
	}
	if err := rows.Close(); err != nil {
		return nil, err
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

// appendInt64Array appends the elements of a one-dimensional bigint array in PostgreSQL's
// text form ("{1,-2,3}") to dst. An absent array (SQL NULL, nil bytes) has no elements; a
// NULL element is an error, as scanning it into an int64 is.
func appendInt64Array(dst []int64, b []byte) ([]int64, error) {
	return appendArray(dst, b, parseInt64)
}

// parseInt64 reads a decimal integer as PostgreSQL writes one: the digits of up to 18 (which
// cannot overflow) by hand, anything else through strconv, which also gives the errors.
func parseInt64(e []byte) (int64, error) {
	digits, neg := e, false
	if len(digits) > 0 && digits[0] == '-' {
		digits, neg = digits[1:], true
	}
	if len(digits) == 0 || len(digits) > 18 {
		return strconv.ParseInt(string(e), 10, 64)
	}
	var v int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return strconv.ParseInt(string(e), 10, 64)
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, nil
}

// appendFloat64Array is appendInt64Array for float8 arrays (NaN and Infinity included).
func appendFloat64Array(dst []float64, b []byte) ([]float64, error) {
	return appendArray(dst, b, func(e []byte) (float64, error) { return strconv.ParseFloat(string(e), 64) })
}

// appendArray splits a one-dimensional array of unquoted numbers in PostgreSQL's text form
// and appends each element parsed. It replaces lib/pq's array scanners, which handle every
// shape of array and allocated as much as the rest of a metrics request.
func appendArray[T any](dst []T, b []byte, parse func([]byte) (T, error)) ([]T, error) {
	if b == nil {
		return dst, nil
	}
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return dst, fmt.Errorf("not a one-dimensional array: %.20q", b)
	}
	body := b[1 : len(b)-1]
	if len(body) == 0 {
		return dst, nil
	}
	for len(body) > 0 {
		e := body
		if i := bytes.IndexByte(body, ','); i >= 0 {
			e, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		v, err := parse(e)
		if err != nil {
			return dst, fmt.Errorf("array element %q: %w", e, err)
		}
		dst = append(dst, v)
	}
	return dst, nil
}
