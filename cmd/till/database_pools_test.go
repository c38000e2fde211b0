package main

import "testing"

// The metrics reads' pool is a quarter of the main pool, at least two, and unbounded when
// the main pool is.
func TestAnalyticsConns(t *testing.T) {
	tests := []struct{ main, want int }{{0, 0}, {1, 2}, {7, 2}, {8, 2}, {12, 3}, {20, 5}, {100, 25}}
	for _, tt := range tests {
		if got := analyticsConns(tt.main); got != tt.want {
			t.Errorf("analyticsConns(%d) = %d, want %d", tt.main, got, tt.want)
		}
	}
}
