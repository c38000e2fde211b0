package storage_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/storage"
)

// jsonSample is a record with a column of each kind the prefetch decoder tells apart.
type jsonSample struct {
	ID   uuid.UUID       `db:"id"`
	Name *string         `db:"name"`
	N    int             `db:"n"`
	On   bool            `db:"on"`
	At   *time.Time      `db:"at"`
	Meta storage.JSONMap `db:"meta"`
	Raw  storage.RawJSON `db:"raw"`
}

func TestPrefetchedJSONIsReadAsPostgreSQLWritesIt(t *testing.T) {
	t.Parallel()
	id := uuid.MustParse("7eb5babe-2550-40e1-8cd2-5572304f12e5")
	at := time.Date(2024, 3, 31, 1, 0, 0, 500000000, time.UTC)
	tests := []struct {
		name string
		raw  string
		want *jsonSample
		err  bool
	}{
		{name: "a compact object", raw: `{"id":"7eb5babe-2550-40e1-8cd2-5572304f12e5","name":"Ann","n":3,"on":true,` +
			`"at":"2024-03-31T01:00:00.5+00:00","meta":{"a": [1, {"b": "}]"}]},"raw":"x"}`,
			want: &jsonSample{ID: id, Name: ptr("Ann"), N: 3, On: true, At: &at, Meta: storage.JSONMap{"a": []any{1.0, map[string]any{"b": "}]"}}},
				Raw: storage.RawJSON(`"x"`)}},
		{name: "spaces, escapes and nulls", raw: " { \"id\" : \"7eb5babe-2550-40e1-8cd2-5572304f12e5\" , \"name\" : \"a \\\"q\\\" \\u00e9\\\\\" ,\n" +
			"\"n\": -2, \"on\": false, \"at\": null, \"meta\": {}, \"raw\": null } ",
			want: &jsonSample{ID: id, Name: ptr(`a "q" é\`), N: -2, Meta: storage.JSONMap{}}},
		{name: "null", raw: `null`},
		{name: "an unknown column", raw: `{"id":"7eb5babe-2550-40e1-8cd2-5572304f12e5","other":1}`, err: true},
		{name: "a float into an int", raw: `{"n":1.5}`, err: true},
		{name: "an int too large", raw: `{"n":92233720368547758070}`, err: true},
		{name: "NULL into a plain value", raw: `{"n":null}`, err: true},
		{name: "an array into text", raw: `{"name":["a"]}`, err: true},
		{name: "a truncated object", raw: `{"id":"7eb5babe-2550-40e1-8cd2-5572304f12e5","name":"An`, err: true},
		{name: "a missing value", raw: `{"n":}`, err: true},
		{name: "not an object", raw: `[1]`, err: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := storage.DecodeRecord[jsonSample]([]byte(tc.raw), time.UTC)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if !tc.err && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestPrefetchedArraysKeepTheirOrder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  string
		want []int
		err  bool
	}{
		{raw: `[]`, want: []int{}},
		{raw: ` [ {"n": 2} , {"n": 1}, {"n": 3} ] `, want: []int{2, 1, 3}},
		{raw: `[{"n": 2},]`, err: true},
		{raw: `[{"n": 2}`, err: true},
	} {
		got, err := storage.DecodeRecords[jsonSample]([]byte(tc.raw), time.UTC)
		if (err != nil) != tc.err {
			t.Fatalf("%s: err = %v, want error %v", tc.raw, err, tc.err)
		}
		if tc.err {
			continue
		}
		ns := []int{}
		for _, s := range got {
			ns = append(ns, s.N)
		}
		if got == nil || !reflect.DeepEqual(ns, tc.want) {
			t.Errorf("%s: %v, want %v", tc.raw, ns, tc.want)
		}
	}
}

// FuzzDecodeRecord checks that no input makes the decoder panic or read past its end.
func FuzzDecodeRecord(f *testing.F) {
	for _, s := range []string{`{"n":1,"name":"a\"b","meta":{"x":[1,"]"]}}`, `[{"n":1}]`, `{"at":"2024-01-01T00:00:00+00:00"}`, `{`, `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		_, _ = storage.DecodeRecord[jsonSample](raw, time.UTC)
		_, _ = storage.DecodeRecords[jsonSample](raw, time.UTC)
	})
}

func ptr[T any](v T) *T { return &v }
