package resolvers

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"till/internal/scalar"
	"till/storage"
)

// Upstream spells a price as one member of the ProductPrice union per amount type, each with
// exactly its own fields, and the portal's organization with every feature flag present.
// GraphQL's ProductPrice and Organization types are flat, so these JSON renderings give the
// /v1 documents (and webhook payloads) the exact shapes.

// priceBase holds the fields every price variant has, in upstream's order.
type priceBase struct {
	CreatedAt     string    `json:"created_at"`
	ModifiedAt    *string   `json:"modified_at"`
	ID            uuid.UUID `json:"id"`
	Source        string    `json:"source"`
	AmountType    string    `json:"amount_type"`
	PriceCurrency string    `json:"price_currency"`
	TaxBehavior   *string   `json:"tax_behavior"`
	IsArchived    bool      `json:"is_archived"`
	ProductID     uuid.UUID `json:"product_id"`
}

// seatTiersShape is ProductPriceSeatTiers-Output: the stored tiers plus the derived bounds.
type seatTiersShape struct {
	SeatTierType string                 `json:"seat_tier_type"`
	Tiers        []subscriptionSeatTier `json:"tiers"`
	MinimumSeats int                    `json:"minimum_seats"`
	MaximumSeats *int                   `json:"maximum_seats"`
}

// productPriceShape renders a price as the ProductPrice union member of its amount type.
// Metered prices carry their meter id; the nested meter object is left null until usage
// billing lands.
func productPriceShape(p *storage.ProductPrice) storage.RawJSON {
	base := priceBase{CreatedAt: scalar.FormatDateTime(p.CreatedAt), ModifiedAt: formatOptionalTime(p.ModifiedAt),
		ID: p.ID, Source: p.Source, AmountType: p.AmountType, PriceCurrency: p.PriceCurrency,
		TaxBehavior: p.TaxBehavior, IsArchived: p.IsArchived, ProductID: p.ProductID}
	var v any = base
	switch p.AmountType {
	case "fixed":
		v = struct {
			priceBase
			PriceAmount int64 `json:"price_amount"`
		}{base, centsOrZero(p.PriceAmount)}
	case "custom":
		v = struct {
			priceBase
			MinimumAmount *int64 `json:"minimum_amount"`
			MaximumAmount *int64 `json:"maximum_amount"`
			PresetAmount  *int64 `json:"preset_amount"`
		}{base, p.MinimumAmount, p.MaximumAmount, p.PresetAmount}
	case "seat_based":
		var tiers struct {
			SeatTierType string `json:"seat_tier_type"`
			subscriptionSeatTiers
		}
		_ = json.Unmarshal(p.SeatTiers, &tiers)
		shape := seatTiersShape{SeatTierType: tiers.SeatTierType, Tiers: tiers.Tiers}
		if shape.SeatTierType == "" {
			shape.SeatTierType = "volume"
		}
		if shape.Tiers == nil {
			shape.Tiers = []subscriptionSeatTier{}
		}
		if n := len(shape.Tiers); n > 0 {
			shape.MinimumSeats, shape.MaximumSeats = shape.Tiers[0].MinSeats, shape.Tiers[n-1].MaxSeats
		}
		v = struct {
			priceBase
			SeatTiers seatTiersShape `json:"seat_tiers"`
		}{base, shape}
	case "metered_unit":
		v = struct {
			priceBase
			UnitAmount *string         `json:"unit_amount"`
			CapAmount  *int64          `json:"cap_amount"`
			MeterID    *uuid.UUID      `json:"meter_id"`
			Meter      json.RawMessage `json:"meter"`
		}{base, p.UnitAmount, p.CapAmount, p.MeterID, json.RawMessage("null")}
	}
	b, _ := json.Marshal(v) // plain structs of strings, numbers and raw JSON always encode
	return b
}

// productPriceShapes renders a list of prices.
func productPriceShapes(prices []*storage.ProductPrice) []storage.RawJSON {
	out := make([]storage.RawJSON, len(prices))
	for i, p := range prices {
		out[i] = productPriceShape(p)
	}
	return out
}

// organizationFeatures is CustomerOrganizationFeatureSettings: the stored flags with every
// flag present, false when unset.
func organizationFeatures(o *storage.Organization) storage.RawJSON {
	var f struct {
		MemberModelEnabled          bool `json:"member_model_enabled"`
		CheckoutLocalizationEnabled bool `json:"checkout_localization_enabled"`
	}
	_ = json.Unmarshal(o.FeatureSettings, &f)
	b, _ := json.Marshal(f)
	return b
}

// formatOptionalTime renders an optional date-time the way the DateTime scalar does.
func formatOptionalTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := scalar.FormatDateTime(*t)
	return &s
}
