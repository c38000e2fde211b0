// Package pricing is the one home of Till's money arithmetic: what a discount takes off,
// what a number of seats costs under a price's tiers, and what metered usage charges. Every
// amount is an integer in the currency's minor unit (cents, or whole yen for a zero-decimal
// currency), so the same rules hold in every currency; checkout, renewal, seat changes and
// invoices all call here, and a price is never computed two ways.
package pricing

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"sort"
)

// BasisPointsWhole is 100% in basis points.
const BasisPointsWhole = 10_000

// PercentOff is what basisPoints take off base, rounded half up as upstream's polar_round;
// nothing off a base that is zero or less.
func PercentOff(base int64, basisPoints int) int64 {
	if base <= 0 || basisPoints <= 0 {
		return 0
	}
	return (base*int64(basisPoints) + BasisPointsWhole/2) / BasisPointsWhole
}

// FixedOff is what a fixed discount of amount takes off base: never more than base, so a
// total never goes negative.
func FixedOff(base, amount int64) int64 {
	if base <= 0 || amount <= 0 {
		return 0
	}
	return min(amount, base)
}

// Tier types of a seat-based price: volume charges every seat the rate of the tier the
// count falls in; graduated charges each tier's range of seats at its own rate.
const (
	TierVolume    = "volume"
	TierGraduated = "graduated"
)

// SeatTiers is a seat-based price's tiers, as stored (upstream's ProductPriceSeatTiers):
// ordered by their minimum, volume unless stated otherwise.
type SeatTiers struct {
	Type  string     `json:"seat_tier_type"`
	Tiers []SeatTier `json:"tiers"`
}

// SeatTier is one tier: the seat counts it covers (MaxSeats nil: unbounded) and its rate.
type SeatTier struct {
	MinSeats     int   `json:"min_seats"`
	MaxSeats     *int  `json:"max_seats"`
	PricePerSeat int64 `json:"price_per_seat"`
}

// ParseSeatTiers reads stored tiers, ordering them by their minimum and defaulting the type
// to volume.
func ParseSeatTiers(raw []byte) (SeatTiers, error) {
	var t SeatTiers
	if err := json.Unmarshal(raw, &t); err != nil {
		return t, err
	}
	sort.SliceStable(t.Tiers, func(i, j int) bool { return t.Tiers[i].MinSeats < t.Tiers[j].MinSeats })
	if t.Type == "" {
		t.Type = TierVolume
	}
	return t, nil
}

// Bounds are the seat counts the tiers price: from the first tier's minimum (at least one)
// to the last tier's maximum (nil: unlimited).
func (t SeatTiers) Bounds() (int, *int) {
	if len(t.Tiers) == 0 {
		return 1, nil
	}
	return max(t.Tiers[0].MinSeats, 1), t.Tiers[len(t.Tiers)-1].MaxSeats
}

// Amount is what seats cost; ok is false when no tier covers the count.
func (t SeatTiers) Amount(seats int) (amount int64, ok bool) {
	lo, hi := t.Bounds()
	if seats < lo || (hi != nil && seats > *hi) {
		return 0, false
	}
	if t.Type == TierGraduated {
		var total int64
		for _, tier := range t.Tiers {
			top := seats
			if tier.MaxSeats != nil {
				top = min(top, *tier.MaxSeats)
			}
			if n := top - max(tier.MinSeats, 1) + 1; n > 0 {
				total += int64(n) * tier.PricePerSeat
			}
		}
		return total, true
	}
	for _, tier := range t.Tiers {
		if seats >= tier.MinSeats && (tier.MaxSeats == nil || seats <= *tier.MaxSeats) {
			return tier.PricePerSeat * int64(seats), true
		}
	}
	return 0, false
}

// ErrUnpriceable is a metered charge that cannot be computed: a unit amount that is not a
// decimal number, units that are not finite, or a result beyond an int64.
var ErrUnpriceable = errors.New("pricing: usage cannot be priced")

// Metered is what units of usage charge at unitAmount, a decimal number of minor units (as
// upstream's get_amount_and_label): the units (never below zero) times the unit amount,
// computed exactly and rounded half away from zero, then held to capAmount when set
// (capped reports that it was).
func Metered(unitAmount string, units float64, capAmount *int64) (amount int64, capped bool, err error) {
	unit, ok := new(big.Rat).SetString(unitAmount)
	if !ok || math.IsNaN(units) || math.IsInf(units, 0) {
		return 0, false, ErrUnpriceable
	}
	raw := new(big.Rat).Mul(unit, new(big.Rat).SetFloat64(max(0, units)))
	if raw.Sign() < 0 {
		return 0, false, ErrUnpriceable
	}
	// raw >= 0, so half away from zero is floor(raw + 1/2) = (2·num + den) div (2·den).
	num := new(big.Int).Add(new(big.Int).Lsh(raw.Num(), 1), raw.Denom())
	rounded := num.Quo(num, new(big.Int).Lsh(raw.Denom(), 1))
	if capAmount != nil && rounded.Cmp(big.NewInt(*capAmount)) > 0 {
		return *capAmount, true, nil
	}
	if !rounded.IsInt64() {
		return 0, false, ErrUnpriceable
	}
	return rounded.Int64(), false, nil
}
