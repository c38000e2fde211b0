package pricing_test

import (
	"errors"
	"math"
	"testing"

	"till/internal/pricing"
)

func ptr[T any](v T) *T { return &v }

// Amounts are minor units whatever the currency: 1,999 is $19.99, €19.99 or ¥1,999, and a
// discount rounds to the minor unit the same way in each.
func TestDiscounts(t *testing.T) {
	tests := []struct {
		name        string
		currency    string
		base        int64
		basisPoints int
		fixed       int64
		want        int64
	}{
		{"a quarter off $19.99 rounds half up to 500 cents", "usd", 1999, 2500, 0, 500},
		{"a quarter off ¥1,999 rounds half up to ¥500", "jpy", 1999, 2500, 0, 500},
		{"15% off ₩1,000 is ₩150", "krw", 1000, 1500, 0, 150},
		{"half a cent rounds up: 0.5% of 100 cents is 1", "eur", 100, 50, 0, 1},
		{"just under half a unit rounds down: 0.49% of ¥100 is 0", "jpy", 100, 49, 0, 0},
		{"all of it: 100% off is the whole base", "usd", 1234, pricing.BasisPointsWhole, 0, 1234},
		{"nothing is off a free base", "usd", 0, 5000, 0, 0},
		{"a fixed €5 off €19.99 is 500 cents", "eur", 1999, 0, 500, 500},
		{"a fixed ¥500 off ¥300 takes only ¥300", "jpy", 300, 0, 500, 300},
		{"a fixed discount never applies to a negative base", "usd", -100, 0, 500, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pricing.PercentOff(tt.base, tt.basisPoints)
			if tt.fixed != 0 {
				got = pricing.FixedOff(tt.base, tt.fixed)
			}
			if got != tt.want {
				t.Errorf("%s %d off %d = %d, want %d", tt.currency, tt.basisPoints+int(tt.fixed), tt.base, got, tt.want)
			}
		})
	}
}

func TestSeatTiers(t *testing.T) {
	// Tiers listed out of order: they are priced by their minimums.
	tiers := `{"tiers": [{"min_seats": 6, "max_seats": 10, "price_per_seat": 800},
		{"min_seats": 1, "max_seats": 5, "price_per_seat": 1000}]}`
	graduated := `{"seat_tier_type": "graduated", "tiers": [{"min_seats": 1, "max_seats": 5, "price_per_seat": 1000},
		{"min_seats": 6, "max_seats": null, "price_per_seat": 800}]}`
	tests := []struct {
		name   string
		tiers  string
		seats  int
		want   int64
		priced bool
	}{
		{"volume: 3 seats at the first tier's rate", tiers, 3, 3000, true},
		{"volume: 7 seats all at the second tier's rate", tiers, 7, 5600, true},
		{"volume: no tier covers 11 seats", tiers, 11, 0, false},
		{"volume: no tier covers 0 seats", tiers, 0, 0, false},
		{"graduated: 7 seats are 5 at 1,000 and 2 at 800", graduated, 7, 6600, true},
		{"graduated: 5 seats stay in the first tier", graduated, 5, 5000, true},
		{"graduated: the last tier is unbounded", graduated, 1000, 5000 + 995*800, true},
		{"graduated: no tier covers 0 seats", graduated, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := pricing.ParseSeatTiers([]byte(tt.tiers))
			if err != nil {
				t.Fatal(err)
			}
			got, ok := s.Amount(tt.seats)
			if got != tt.want || ok != tt.priced {
				t.Errorf("Amount(%d) = %d, %t; want %d, %t", tt.seats, got, ok, tt.want, tt.priced)
			}
		})
	}
	t.Run("bounds run from the first minimum to the last maximum", func(t *testing.T) {
		s, _ := pricing.ParseSeatTiers([]byte(tiers))
		if lo, hi := s.Bounds(); lo != 1 || hi == nil || *hi != 10 {
			t.Errorf("Bounds() = %d, %v", lo, hi)
		}
		g, _ := pricing.ParseSeatTiers([]byte(graduated))
		if lo, hi := g.Bounds(); lo != 1 || hi != nil {
			t.Errorf("graduated Bounds() = %d, %v", lo, hi)
		}
	})
}

func TestMetered(t *testing.T) {
	tests := []struct {
		name   string
		unit   string
		units  float64
		cap    *int64
		want   int64
		capped bool
		err    error
	}{
		{"a quarter cent per call rounds 10 calls half away from zero", "0.25", 10, nil, 3, false, nil},
		{"exact decimal arithmetic: 0.1 × 3 is 0.3, rounded to 0", "0.1", 3, nil, 0, false, nil},
		{"whole units of a zero-decimal currency", "2", 1500, nil, 3000, false, nil},
		{"negative usage charges nothing", "5", -4, nil, 0, false, nil},
		{"held to the cap", "100", 1000, ptr(int64(50_000)), 50_000, true, nil},
		{"not a number", "abc", 1, nil, 0, false, pricing.ErrUnpriceable},
		{"infinite usage", "1", math.Inf(1), nil, 0, false, pricing.ErrUnpriceable},
		{"beyond an int64", "99999", 1e300, nil, 0, false, pricing.ErrUnpriceable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, capped, err := pricing.Metered(tt.unit, tt.units, tt.cap)
			if got != tt.want || capped != tt.capped || !errors.Is(err, tt.err) {
				t.Errorf("Metered(%q, %v) = %d, %t, %v; want %d, %t, %v", tt.unit, tt.units, got, capped, err, tt.want, tt.capped, tt.err)
			}
		})
	}
}
