package resolvers

import (
	"encoding/json"

	"till/graph/model"
	"till/storage"
)

// storedSeatTier is one tier as prices store it: upstream's ProductPriceSeatTier, so the
// stored JSON reads back through parseSeatTiers like a tier written by the upstream API.
type storedSeatTier struct {
	MinSeats     int  `json:"min_seats"`
	MaxSeats     *int `json:"max_seats"`
	PricePerSeat int  `json:"price_per_seat"`
}

// seatTiersWrite validates a seat-based price's tiers as upstream's ProductPriceSeatTiers
// does (at least one tier, minSeats at least 1, pricePerSeat at least 0) with Till's cap on
// their number, and returns them in the stored shape; at is the input's location.
func seatTiersWrite(in *model.ProductPriceSeatTiersInput, at ...any) (storage.RawJSON, error) {
	if in == nil || len(in.Tiers) == 0 {
		given, _ := json.Marshal(in)
		return nil, Invalid("value_error", "Seat tiers need at least one tier.", json.RawMessage(given), at...)
	}
	if len(in.Tiers) > MaxSeatTiers {
		return nil, tooMany(len(in.Tiers), MaxSeatTiers, append(at, "tiers")...)
	}
	stored := struct {
		SeatTierType model.SeatTierType `json:"seat_tier_type"`
		Tiers        []storedSeatTier   `json:"tiers"`
	}{SeatTierType: model.SeatTierTypeVolume, Tiers: make([]storedSeatTier, len(in.Tiers))}
	if in.SeatTierType != nil {
		stored.SeatTierType = *in.SeatTierType
	}
	for i, t := range in.Tiers {
		loc := append(append([]any{}, at...), "tiers", i)
		if t.MinSeats < 1 {
			return nil, Invalid("greater_than_equal", "Input should be greater than or equal to 1", t.MinSeats, append(loc, "minSeats")...)
		}
		if t.MaxSeats != nil && *t.MaxSeats < 1 {
			return nil, Invalid("greater_than_equal", "Input should be greater than or equal to 1", *t.MaxSeats, append(loc, "maxSeats")...)
		}
		if t.PricePerSeat < 0 {
			return nil, Invalid("greater_than_equal", "Input should be greater than or equal to 0", t.PricePerSeat, append(loc, "pricePerSeat")...)
		}
		stored.Tiers[i] = storedSeatTier{MinSeats: t.MinSeats, MaxSeats: t.MaxSeats, PricePerSeat: t.PricePerSeat}
	}
	b, err := json.Marshal(stored)
	return storage.RawJSON(b), err
}
