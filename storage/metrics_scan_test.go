package storage

import (
	"math"
	"slices"
	"testing"
)

func TestAppendArrayReadsPostgresArrays(t *testing.T) {
	ints := []struct {
		in      string
		null    bool
		want    []int64
		wantErr bool
	}{
		{in: "{1,-2,3}", want: []int64{1, -2, 3}},
		{in: "{9223372036854775807,-9223372036854775808}", want: []int64{math.MaxInt64, math.MinInt64}},
		{in: "{999999999999999999,-999999999999999999,1000000000000000000,-0,007}",
			want: []int64{999999999999999999, -999999999999999999, 1000000000000000000, 0, 7}},
		{in: "{9223372036854775808}", wantErr: true},
		{in: "{-}", wantErr: true},
		{in: "{1a}", wantErr: true},
		{in: "{1.5}", wantErr: true},
		{in: "{}", want: nil},
		{null: true, want: nil},
		{in: "{1,NULL}", wantErr: true},
		{in: "{1,2", wantErr: true},
		{in: "{{1,2},{3,4}}", wantErr: true},
		{in: "{1,,2}", wantErr: true},
		{in: `{"1"}`, wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tc := range ints {
		var in []byte
		if !tc.null {
			in = []byte(tc.in)
		}
		got, err := appendInt64Array(nil, in)
		if (err != nil) != tc.wantErr || (!tc.wantErr && !slices.Equal(got, tc.want)) {
			t.Errorf("appendInt64Array(%q) = %v, %v; want %v (error: %t)", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
	got, err := appendFloat64Array([]float64{7}, []byte("{1.5,-0.25,1e+20,Infinity,-Infinity}"))
	if want := []float64{7, 1.5, -0.25, 1e20, math.Inf(1), math.Inf(-1)}; err != nil || !slices.Equal(got, want) {
		t.Errorf("appendFloat64Array = %v, %v; want %v appended to what was there", got, err, want)
	}
	if got, err := appendFloat64Array(nil, []byte("{NaN}")); err != nil || len(got) != 1 || !math.IsNaN(got[0]) {
		t.Errorf("appendFloat64Array({NaN}) = %v, %v", got, err)
	}
}
