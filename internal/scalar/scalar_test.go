package scalar_test

import (
	"bytes"
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
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := scalar.FormatDateTime(c.in); got != c.want {
				t.Errorf("FormatDateTime = %q, want %q", got, c.want)
			}
		})
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
