package resolvers

import (
	"testing"
	"time"
)

// TestMetricsZoneOffsets checks which zones read the rollups whole, which cut them with
// quarter-hour pieces and which with pieces of the base tables.
func TestMetricsZoneOffsets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		zone                 string
		from, to             time.Time
		wholeHours, quarters bool
	}{
		{"UTC", time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), true, true},
		{"America/New_York", time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), true, true},
		{"Asia/Kolkata", time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), false, true},
		{"Asia/Kathmandu", time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), false, true},
		// Lord Howe is +10:30 in winter and +11 in summer: the summer alone is whole hours.
		{"Australia/Lord_Howe", time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), true, true},
		{"Australia/Lord_Howe", time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), false, true},
		// Liberia kept Monrovia's mean time, -0:44:30, until 1972.
		{"Africa/Monrovia", time.Date(1971, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1971, 6, 1, 0, 0, 0, 0, time.UTC), false, false},
		{"Africa/Monrovia", time.Date(1971, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1973, 1, 1, 0, 0, 0, 0, time.UTC), false, false},
		{"Africa/Monrovia", time.Date(1973, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1974, 1, 1, 0, 0, 0, 0, time.UTC), true, true},
	}
	for _, tt := range tests {
		loc, err := time.LoadLocation(tt.zone)
		if err != nil {
			t.Fatal(err)
		}
		if got := offsetsDivide(loc, tt.from, tt.to, 3600); got != tt.wholeHours {
			t.Errorf("%s from %s: whole hours %v, want %v", tt.zone, tt.from, got, tt.wholeHours)
		}
		if got := offsetsDivide(loc, tt.from, tt.to, 900); got != tt.quarters {
			t.Errorf("%s from %s: whole quarters %v, want %v", tt.zone, tt.from, got, tt.quarters)
		}
	}
}
