package scalar_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"till/internal/scalar"
	"till/storage"
)

func TestFormatDateTime(t *testing.T) {
	cases := []struct {
		name string
		in   time.Time
		want string
	}{
		{"whole seconds have no fraction", time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC), "2026-04-01T12:00:00Z"},
		{"microseconds are written as six digits", time.Date(2026, 4, 1, 12, 0, 0, 123400000, time.UTC), "2026-04-01T12:00:00.123400Z"},
		{"nanoseconds below a microsecond are dropped", time.Date(2026, 4, 1, 12, 0, 0, 999, time.UTC), "2026-04-01T12:00:00Z"},
		{"other zones are converted to UTC", time.Date(2026, 4, 1, 14, 0, 0, 0, time.FixedZone("CEST", 7200)), "2026-04-01T12:00:00Z"},
		{"a microsecond alone", time.Date(2026, 12, 31, 23, 59, 59, 1000, time.UTC), "2026-12-31T23:59:59.000001Z"},
		{"years before 1000 are padded", time.Date(7, 1, 2, 3, 4, 5, 0, time.UTC), "0007-01-02T03:04:05Z"},
		{"years past 9999 are written as time writes them", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), "10000-01-01T00:00:00Z"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := scalar.FormatDateTime(c.in); got != c.want {
				t.Errorf("FormatDateTime = %q, want %q", got, c.want)
			}
		})
	}
}

// The date-times written by hand are time.AppendFormat's, over years 0 to 9999 and every
// fraction.
func TestAppendDateTimeIsTheLayouts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lo, hi := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro(), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	for range 200_000 {
		tm := time.UnixMicro(lo + rng.Int64N(hi-lo))
		if rng.IntN(2) == 0 {
			tm = tm.Truncate(time.Second)
		}
		want := tm.UTC().Format("2006-01-02T15:04:05.000000Z")
		if tm.Nanosecond() == 0 {
			want = tm.UTC().Format("2006-01-02T15:04:05Z")
		}
		if got := string(scalar.AppendDateTime([]byte("x"), tm)); got != "x"+want {
			t.Fatalf("AppendDateTime(%v) = %q, want %q", tm, got, "x"+want)
		}
	}
}

func TestMarshalJSON(t *testing.T) {
	cases := []struct {
		name string
		in   storage.RawJSON
		want string
	}{
		{"empty is null", nil, "null"},
		{"jsonb text is compacted", storage.RawJSON(`{"a": 1, "b": [1, 2]}`), `{"a":1,"b":[1,2]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			scalar.MarshalJSON(c.in).MarshalGQL(&buf)
			if buf.String() != c.want {
				t.Errorf("MarshalJSON = %s, want %s", buf.String(), c.want)
			}
		})
	}
}

func TestUnmarshalMetadataRejectsNestedValues(t *testing.T) {
	if _, err := scalar.UnmarshalMetadata(map[string]any{"a": map[string]any{}}); err == nil {
		t.Fatal("a nested object was accepted as a metadata value")
	}
	if _, err := scalar.UnmarshalMetadata(map[string]any{"a": "x", "b": true, "c": int64(3)}); err != nil {
		t.Fatalf("valid metadata rejected: %v", err)
	}
}

func TestDecodersRefuseWhatPostgreSQLCannotStore(t *testing.T) {
	cases := []struct {
		name   string
		decode func(any) error
		in     any
		want   string // "" when the value is accepted
	}{
		{"a plain string", str, "héllo", ""},
		{"a string with a NUL", str, "a\x00b", "This value contains invalid characters"},
		{"a string that is not UTF-8", str, "a\xffb", "This value contains invalid characters"},
		{"a number is converted as gqlgen converts it", str, 5, ""},
		{"JSON with a NUL deep inside", jsonValue, map[string]any{"a": []any{"x", map[string]any{"b": "\x00"}}}, "a[1].b: This value contains invalid characters"},
		{"JSON with a NUL in a key", jsonValue, map[string]any{"a": map[string]any{"\x00": 1}}, "a key of a: This value contains invalid characters"},
		{"JSON with 1e400", jsonValue, []any{json.Number("1e400")}, "[0]: Input should be a finite number"},
		{"JSON with -1e400", jsonValue, json.Number("-1e400"), "Input should be a finite number"},
		{"JSON with a big but finite number", jsonValue, json.Number("1e300"), ""},
		{"metadata with a NUL value", metadata, map[string]any{"k": "\x00"}, "k: This value contains invalid characters"},
		{"metadata with a NUL key", metadata, map[string]any{"\x00": "v"}, "a key: This value contains invalid characters"},
		{"metadata with 1e400", metadata, map[string]any{"k": json.Number("1e400")}, "k: Input should be a finite number"},
		{"metadata of plain values", metadata, map[string]any{"k": "v", "n": json.Number("1.5"), "b": true}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.decode(c.in)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("error = %q, want %q", got, c.want)
			}
		})
	}
}

func str(v any) error       { _, err := scalar.UnmarshalString(v); return err }
func jsonValue(v any) error { _, err := scalar.UnmarshalJSON(v); return err }
func metadata(v any) error  { _, err := scalar.UnmarshalMetadata(v); return err }
