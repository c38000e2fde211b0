// Package scalar implements Till's custom GraphQL scalars. It exists so that GraphQL and the
// /v1 layer (which re-emits GraphQL results) write date-times and JSON exactly as the upstream
// API does: UTC with a Z suffix and microseconds only when non-zero, metadata as a JSON object.
package scalar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"till/storage"
)

// dateTimeMicros is the pydantic v2 rendering of a datetime with a fractional part.
const (
	dateTimeMicros = "2006-01-02T15:04:05.000000Z"
	dateTimeWhole  = "2006-01-02T15:04:05Z"
)

// FormatDateTime renders t the way upstream clients expect: UTC, Z suffix, six fractional
// digits only when the microsecond part is non-zero.
func FormatDateTime(t time.Time) string {
	return string(AppendDateTime(nil, t))
}

// AppendDateTime appends FormatDateTime(t) to dst, for writers of many date-times. Quoted, it
// is a JSON string as it stands: it holds nothing JSON escapes.
//
// The digits are written by hand for the years 0 to 9999, which time.AppendFormat writes
// alike: a year of daily metrics writes 365 date-times, and the layout's interpretation took
// most of the time spent writing them.
func AppendDateTime(dst []byte, t time.Time) []byte {
	t = t.UTC().Truncate(time.Microsecond)
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		if t.Nanosecond() == 0 {
			return t.AppendFormat(dst, dateTimeWhole)
		}
		return t.AppendFormat(dst, dateTimeMicros)
	}
	hour, minute, second := t.Clock()
	dst = appendDigits(dst, year, 4)
	dst = appendDigits(append(dst, '-'), int(month), 2)
	dst = appendDigits(append(dst, '-'), day, 2)
	dst = appendDigits(append(dst, 'T'), hour, 2)
	dst = appendDigits(append(dst, ':'), minute, 2)
	dst = appendDigits(append(dst, ':'), second, 2)
	if us := t.Nanosecond() / 1000; us != 0 {
		dst = appendDigits(append(dst, '.'), us, 6)
	}
	return append(dst, 'Z')
}

// appendDigits appends the n lowest decimal digits of v (0 <= v < 10^n), zero-padded.
func appendDigits(dst []byte, v, n int) []byte {
	dst = append(dst, "000000"[:n]...)
	for i := len(dst) - 1; v > 0; i-- {
		dst[i] = byte('0' + v%10)
		v /= 10
	}
	return dst
}

// MarshalDateTime writes a DateTime scalar.
func MarshalDateTime(t time.Time) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(FormatDateTime(t)))
	})
}

// UnmarshalDateTime accepts RFC 3339 date-times (with or without fractional seconds).
func UnmarshalDateTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, errors.New("DateTime must be an RFC 3339 string")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("DateTime must be an RFC 3339 string: %w", err)
	}
	return t.UTC(), nil
}

// MarshalMetadata writes a metadata object; nil becomes {} because upstream always emits an object.
func MarshalMetadata(m storage.JSONMap) graphql.Marshaler {
	if m == nil {
		m = storage.JSONMap{}
	}
	return marshalJSON(map[string]any(m))
}

// UnmarshalMetadata accepts a JSON object whose values are strings, integers, floats or booleans;
// the limits upstream places on keys and values are checked by the use cases.
func UnmarshalMetadata(v any) (storage.JSONMap, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("Metadata must be an object")
	}
	for k, val := range m {
		switch val.(type) {
		case string, bool, int, int64, float64, json.Number:
		default:
			return nil, fmt.Errorf("Metadata value of %q must be a string, number or boolean", k)
		}
	}
	if err := checkValue(m, ""); err != nil {
		return nil, err
	}
	return storage.JSONMap(m), nil
}

// MarshalJSON writes an arbitrary JSON value stored as raw bytes; empty means null. jsonb
// comes back from PostgreSQL with spaces after colons and commas, so it is compacted to
// the form every other value of a response has.
func MarshalJSON(raw storage.RawJSON) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		if len(raw) == 0 {
			_, _ = io.WriteString(w, "null")
			return
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			_, _ = w.Write(raw)
			return
		}
		_, _ = w.Write(buf.Bytes())
	})
}

// UnmarshalJSON accepts any JSON value PostgreSQL's jsonb can store and Go can read back
// (no U+0000, no number beyond a float64) and keeps it as raw bytes for the use case to
// validate.
func UnmarshalJSON(v any) (storage.RawJSON, error) {
	if err := checkValue(v, ""); err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("JSON: %w", err)
	}
	return storage.RawJSON(b), nil
}

func marshalJSON(v any) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		b, err := json.Marshal(v)
		if err != nil {
			_, _ = io.WriteString(w, "null")
			return
		}
		_, _ = w.Write(b)
	})
}
