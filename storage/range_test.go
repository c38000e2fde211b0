package storage_test

import (
	"context"
	"math"
	"testing"

	"till/storage"
	"till/storage/storagetest"
)

func TestPageOffsetSaturatesInsteadOfOverflowing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		page storage.Page
		want int
	}{
		{"the first page starts at row 0", storage.Page{Page: 1, Limit: 10}, 0},
		{"the third page of 10 starts at row 20", storage.Page{Page: 3, Limit: 10}, 20},
		{"the largest 32-bit page of 100 is exact", storage.Page{Page: math.MaxInt32, Limit: 100}, (math.MaxInt32 - 1) * 100},
		{"the largest page of 100 saturates", storage.Page{Page: math.MaxInt, Limit: 100}, math.MaxInt},
		{"a page whose offset is one row past the largest int saturates", storage.Page{Page: math.MaxInt/2 + 2, Limit: 2}, math.MaxInt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.page.Offset(); got != tt.want {
				t.Errorf("Offset() = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestOutOfRangeErrorsAreRecognised runs statements PostgreSQL refuses for a number out of
// range, so that a value no use case checked is still answered as the client's mistake.
func TestOutOfRangeErrorsAreRecognised(t *testing.T) {
	t.Parallel()
	db := storagetest.New(t)
	tests := []struct {
		name  string
		query string
		arg   any
		want  bool
	}{
		{"an integer beyond INTEGER (22003)", `SELECT $1::int`, int64(math.MaxInt32) + 1, true},
		{"a timestamp beyond the range (22008)", `SELECT now() + make_interval(years => $1)`, 300000, true},
		{"a negative OFFSET (2201X)", `SELECT 1 OFFSET $1`, -1, true},
		{"a negative LIMIT (2201W)", `SELECT 1 LIMIT $1`, -1, true},
		{"a division by zero is not one", `SELECT 1 / $1::int`, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out any
			err := db.QueryRowContext(context.Background(), tt.query, tt.arg).Scan(&out)
			if err == nil {
				t.Fatal("the statement succeeded")
			}
			if got := storage.IsOutOfRange(err); got != tt.want {
				t.Errorf("IsOutOfRange(%v) = %v, want %v", err, got, tt.want)
			}
			if got := storage.IsOutOfRange(storage.MapErr(err)); got != tt.want {
				t.Errorf("IsOutOfRange(mapErr(%v)) = %v, want %v", err, got, tt.want)
			}
		})
	}
}
