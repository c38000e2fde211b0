package storage

import (
	"context"
	"reflect"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/jmoiron/sqlx/reflectx"
)

// pagedRow is a record read with the bookkeeping columns of a window: its cursor, and for
// windows per parent the parent's total and whether the row is in the window.
type pagedRow[T any] struct {
	item   T
	cursor string
	total  int
	in     bool
	// prefetched holds the row's prefetch_* columns, nil when the query has none.
	prefetched Prefetched
}

// fieldAddr is the address of the field of struct v at index, a path through embedded or
// nested structs. Unlike reflectx.FieldByIndexes it does not allocate the field itself when
// it is a nil pointer (Scan sets it, or leaves it nil for NULL): a record has a dozen
// nullable columns, and allocating each up front was a tenth of a page's allocations.
func fieldAddr(v reflect.Value, index []int) any {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v.Addr().Interface()
}

// recordMapper maps columns to record fields as sqlx does by default (db tags, lower case).
var recordMapper = reflectx.NewMapperFunc("db", strings.ToLower)

// scanPaged runs a window query and scans each row into a new record (T is a pointer to a
// struct) plus the page_* columns, which no record has, and the prefetch_* columns as raw
// JSON. Errors are the driver's, for the caller to map.
func scanPaged[T any](ctx context.Context, q sqlx.ExtContext, query string, args []any) ([]pagedRow[T], error) {
	rows, err := q.QueryxContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	typ := reflect.TypeFor[T]().Elem()
	paths := recordMapper.TraversalsByName(typ, cols)
	prefetches := 0
	for _, c := range cols {
		if strings.HasPrefix(c, prefetchPrefix) {
			prefetches++
		}
	}
	var out []pagedRow[T]
	for rows.Next() {
		v := reflect.New(typ)
		var r pagedRow[T]
		var discard any
		var raw [][]byte
		if prefetches > 0 {
			raw = make([][]byte, len(cols))
		}
		dest := make([]any, len(cols))
		for i, c := range cols {
			if raw != nil && strings.HasPrefix(c, prefetchPrefix) {
				dest[i] = &raw[i]
				continue
			}
			switch c {
			case "page_cursor":
				dest[i] = &r.cursor
			case "page_total":
				dest[i] = &r.total
			case "page_in":
				dest[i] = &r.in
			case "page_row", "page_any", "page_admitted":
				dest[i] = &discard
			default:
				if len(paths[i]) == 0 {
					dest[i] = &discard
					continue
				}
				dest[i] = fieldAddr(v.Elem(), paths[i])
			}
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if raw != nil {
			r.prefetched = make(Prefetched, prefetches)
			for i, c := range cols {
				if strings.HasPrefix(c, prefetchPrefix) {
					r.prefetched[c[len(prefetchPrefix):]] = raw[i]
				}
			}
		}
		r.item = v.Interface().(T)
		out = append(out, r)
	}
	return out, rows.Err()
}
