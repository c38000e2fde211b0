package storage

import (
	"bytes"
	"database/sql"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx/reflectx"
	"github.com/lib/pq"

	"till/internal/rawjson"
)

// A read of parent records can carry related records as JSON columns named prefetch_<name>,
// so that a page which shows an order with its customer, product and items costs one
// statement instead of one per relation. Each such column is built from the very column
// list the relation's batch loader reads (prefetchOne, prefetchMany), and decodeRecord turns
// it into the record sqlx would have scanned from those columns, value for value: the
// resolvers hand it to the loader, and nobody downstream can tell which path it came by.

// prefetchPrefix starts the name of every column that carries related records.
const prefetchPrefix = "prefetch_"

// Prefetched holds the relations one row was read with: the raw JSON of each prefetch_<name>
// column, by name (JSON null when the row has no such record).
type Prefetched map[string][]byte

// prefetchOne is a select expression carrying, as prefetch_<name>, the record of table that
// where selects (at most one; where names the outer row, "id = o.customer_id"), read with
// columns; null when there is none.
func prefetchOne(name, columns, table, where string) string {
	return "(SELECT to_json(r) FROM (SELECT " + columns + " FROM " + table + " WHERE " + where + ") r) AS " +
		prefetchPrefix + name
}

// prefetchMany is prefetchOne for many records: a JSON array in the order of order (columns
// of the list, "created_at, id"), [] when there are none.
func prefetchMany(name, columns, table, where, order string) string {
	return "(SELECT coalesce(json_agg(r ORDER BY " + qualify("r", order) + "), '[]') FROM (SELECT " + columns +
		" FROM " + table + " WHERE " + where + ") r) AS " + prefetchPrefix + name
}

// decodeRecord decodes one carried record (T is a record struct), nil for JSON null or an
// absent column. loc is the location lib/pq gives the session's timestamptz values (see
// sessionLocation).
func decodeRecord[T any](raw []byte, loc *time.Location) (*T, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	v := new(T)
	if err := decodeStruct(reflect.ValueOf(v).Elem(), raw, loc); err != nil {
		return nil, err
	}
	return v, nil
}

// decodeRecords decodes a carried array of records; like a batch loader's group, it is empty
// but not nil when there are none.
func decodeRecords[T any](raw []byte, loc *time.Location) ([]*T, error) {
	out := []*T{}
	err := rawjson.Elements(raw, func(item []byte) error {
		v := new(T)
		out = append(out, v)
		return decodeStruct(reflect.ValueOf(v).Elem(), item, loc)
	})
	if err != nil {
		return nil, fmt.Errorf("storage: prefetched %T: %w", out, err)
	}
	return out, nil
}

// sessionLocation is the location lib/pq reads the session's timestamptz values in, taken
// from a timestamptz it read in the same statement: lib/pq puts a time in the location of
// the session's TimeZone when Go agrees on the offset (UTC on a UTC server), else in a
// fixed zone, and decodeRecord must do the same to give identical times.
func sessionLocation(t time.Time) *time.Location { return t.Location() }

// column is how decodeStruct fills the field a column maps to.
type column struct {
	index []int
	// base is the field's type without pointers, which decides the driver value.
	base reflect.Type
}

// columnsOf maps the columns of a record type to its fields as sqlx does (recordMapper),
// worked out once per type.
func columnsOf(t reflect.Type) map[string]column {
	if c, ok := recordColumns.Load(t); ok {
		return c.(map[string]column)
	}
	out := map[string]column{}
	for name, fi := range recordMapper.TypeMap(t).Names {
		base := fi.Field.Type
		for base.Kind() == reflect.Pointer {
			base = base.Elem()
		}
		out[name] = column{index: fi.Index, base: base}
	}
	recordColumns.Store(t, out)
	return out
}

// recordColumns caches columnsOf by type.
var recordColumns sync.Map

// decodeStruct sets the fields of the struct v from a JSON object whose keys are column names.
// A key with no field is an error, as in sqlx.
func decodeStruct(v reflect.Value, raw []byte, loc *time.Location) error {
	cols := columnsOf(v.Type())
	return rawjson.Fields(raw, func(name, val []byte) error {
		c, ok := cols[string(name)]
		if !ok {
			return fmt.Errorf("storage: prefetched %s: missing destination name %s", v.Type(), name)
		}
		src, err := driverValue(val, c.base, loc)
		if err == nil {
			err = assign(reflectx.FieldByIndexes(v, c.index), src)
		}
		if err != nil {
			return fmt.Errorf("storage: prefetched %s.%s: %w", v.Type(), name, err)
		}
		return nil
	})
}

var (
	timeType  = reflect.TypeFor[time.Time]()
	bytesType = reflect.TypeFor[[]byte]()
	// jsonTypes are the records' jsonb column types: lib/pq hands them the column's JSON text,
	// whatever JSON value it holds.
	jsonTypes = map[reflect.Type]bool{
		reflect.TypeFor[JSONMap](): true, reflect.TypeFor[RawJSON](): true, reflect.TypeFor[Address](): true,
	}
)

// driverValue is the value lib/pq hands database/sql for the column that to_json rendered as
// raw, given the type of the field it is scanned into (base, without pointers): nil for null,
// the JSON text for jsonb columns, time.Time for timestamps, text as []byte, booleans as
// bool, integers as int64 and other numbers as float64 (as []byte text when scanned into a
// string or bytes). A JSON array or object outside a jsonb type is a PostgreSQL array or
// composite, whose text lib/pq would hand over in another syntax: an error rather than a
// different value. One ambiguity remains: a jsonb column holding the JSON value null reads
// as NULL. Like the driver's, a []byte value is only valid until the next column is read.
func driverValue(raw []byte, base reflect.Type, loc *time.Location) (any, error) {
	switch {
	case len(raw) == 0:
		return nil, fmt.Errorf("empty value")
	case raw[0] == 'n':
		return nil, nil
	case jsonTypes[base]:
		return raw, nil
	}
	switch raw[0] {
	case 't', 'f':
		return raw[0] == 't', nil
	case '"':
		s, err := rawjson.Unquote(raw)
		if err != nil {
			return nil, err
		}
		if base == timeType {
			return parseTimestamp(string(s), loc)
		}
		return s, nil
	case '{', '[':
		return nil, fmt.Errorf("cannot decode %.20s into %s", raw, base)
	}
	if base.Kind() == reflect.String || base == bytesType {
		return raw, nil
	}
	if i, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return i, nil
	}
	return strconv.ParseFloat(string(raw), 64)
}

// parseTimestamp reads to_json's rendering of a date, timestamp or timestamptz as lib/pq reads
// PostgreSQL's text: to_json writes a T between date and time and ±hh:mm offsets, which
// lib/pq's parser accepts once the T is a space. Only a timestamptz (the one with an offset)
// takes the session's location.
func parseTimestamp(s string, loc *time.Location) (time.Time, error) {
	s = strings.Replace(s, "T", " ", 1)
	if strings.LastIndexAny(s, "+-") <= len("2006-01-02") {
		loc = nil
	}
	return pq.ParseTimestamp(loc, s)
}

// assign stores src in the field dst as database/sql's Rows.Scan does (convertAssign) for the
// values driverValue makes: a sql.Scanner scans it, a pointer is nil for NULL or points to
// the value, and plain values are set or converted.
func assign(dst reflect.Value, src any) error {
	if s, ok := dst.Addr().Interface().(sql.Scanner); ok {
		return s.Scan(src)
	}
	if dst.Kind() == reflect.Pointer {
		if src == nil {
			dst.SetZero()
			return nil
		}
		p := reflect.New(dst.Type().Elem())
		if err := assign(p.Elem(), src); err != nil {
			return err
		}
		dst.Set(p)
		return nil
	}
	if src == nil {
		return fmt.Errorf("converting NULL to %s is unsupported", dst.Type())
	}
	sv := reflect.ValueOf(src)
	switch {
	case sv.Type().AssignableTo(dst.Type()):
		if b, ok := src.([]byte); ok {
			src = bytes.Clone(b)
		}
		dst.Set(reflect.ValueOf(src))
	case dst.Kind() == sv.Kind() && sv.Type().ConvertibleTo(dst.Type()):
		dst.Set(sv.Convert(dst.Type()))
	case dst.Kind() == reflect.String:
		b, ok := src.([]byte)
		if !ok {
			return fmt.Errorf("converting %T to %s is unsupported", src, dst.Type())
		}
		dst.SetString(string(b))
	case dst.CanInt():
		i, ok := src.(int64)
		if !ok || dst.OverflowInt(i) {
			return fmt.Errorf("converting %v to %s is unsupported", src, dst.Type())
		}
		dst.SetInt(i)
	case dst.CanUint():
		i, ok := src.(int64)
		if !ok || i < 0 || dst.OverflowUint(uint64(i)) {
			return fmt.Errorf("converting %v to %s is unsupported", src, dst.Type())
		}
		dst.SetUint(uint64(i))
	case dst.CanFloat():
		switch n := src.(type) {
		case int64:
			dst.SetFloat(float64(n))
		case float64:
			dst.SetFloat(n)
		default:
			return fmt.Errorf("converting %T to %s is unsupported", src, dst.Type())
		}
	default:
		return fmt.Errorf("converting %T to %s is unsupported", src, dst.Type())
	}
	return nil
}
