package resolvers

import (
	"github.com/google/uuid"

	"context"
	"encoding/json"
	"fmt"
	"time"

	"till/graph/model"
	"till/internal/scalar"
	"till/storage"
)

// Upstream spells a price as one member of the ProductPrice union per amount type, each with
// exactly its own fields; GraphQL's ProductPrice is flat, so wirePrices gives the /v1
// documents (and webhook payloads) the union as ProductPriceVariant.

// productWirePrices is a product's live prices as ProductPriceVariant members.
func (r *Resolver) productWirePrices(ctx context.Context, p *storage.Product) ([]model.ProductPriceVariant, error) {
	prices, err := related(ctx, loaders(ctx).PricesByProduct, p, func(p *storage.Product) uuid.UUID { return p.ID })
	if err != nil {
		return nil, err
	}
	return priceVariants(prices), nil
}

// subscriptionWirePrices is a subscription's prices the same way.
func (r *Resolver) subscriptionWirePrices(ctx context.Context, s *storage.Subscription) ([]model.ProductPriceVariant, error) {
	prices, err := related(ctx, loaders(ctx).PricesBySubscription, s, func(s *storage.Subscription) uuid.UUID { return s.ID })
	if err != nil {
		return nil, err
	}
	return priceVariants(prices), nil
}

// priceVariants spells each price as the union member of its amount type, with the fields
// renderPrice writes for checkouts, so a price reads the same in both.
func priceVariants(prices []*storage.ProductPrice) []model.ProductPriceVariant {
	out := make([]model.ProductPriceVariant, len(prices))
	for i, p := range prices {
		out[i] = priceVariant(p)
	}
	return out
}

func priceVariant(p *storage.ProductPrice) model.ProductPriceVariant {
	switch p.AmountType {
	case storage.AmountTypeFixed:
		return &model.ProductPriceFixed{CreatedAt: p.CreatedAt, ModifiedAt: p.ModifiedAt, ID: p.ID, Source: p.Source,
			AmountType: p.AmountType, PriceCurrency: p.PriceCurrency, TaxBehavior: p.TaxBehavior, IsArchived: p.IsArchived,
			ProductID: p.ProductID, PriceAmount: int(deref(p.PriceAmount))}
	case storage.AmountTypeCustom:
		return &model.ProductPriceCustom{CreatedAt: p.CreatedAt, ModifiedAt: p.ModifiedAt, ID: p.ID, Source: p.Source,
			AmountType: p.AmountType, PriceCurrency: p.PriceCurrency, TaxBehavior: p.TaxBehavior, IsArchived: p.IsArchived,
			ProductID: p.ProductID, MinimumAmount: int(deref(p.MinimumAmount)), MaximumAmount: narrowAmount(p.MaximumAmount),
			PresetAmount: narrowAmount(p.PresetAmount)}
	case storage.AmountTypeSeatBased:
		return &model.ProductPriceSeatBased{CreatedAt: p.CreatedAt, ModifiedAt: p.ModifiedAt, ID: p.ID, Source: p.Source,
			AmountType: p.AmountType, PriceCurrency: p.PriceCurrency, TaxBehavior: p.TaxBehavior, IsArchived: p.IsArchived,
			ProductID: p.ProductID, SeatTiers: seatTiersOf(p.SeatTiers)}
	case storage.AmountTypeMeteredUnit:
		return &model.ProductPriceMeteredUnit{CreatedAt: p.CreatedAt, ModifiedAt: p.ModifiedAt, ID: p.ID, Source: p.Source,
			AmountType: p.AmountType, PriceCurrency: p.PriceCurrency, TaxBehavior: p.TaxBehavior, IsArchived: p.IsArchived,
			ProductID: p.ProductID, UnitAmount: deref(p.UnitAmount), CapAmount: narrowAmount(p.CapAmount), MeterID: deref(p.MeterID)}
	default: // free
		return &model.ProductPriceFree{CreatedAt: p.CreatedAt, ModifiedAt: p.ModifiedAt, ID: p.ID, Source: p.Source,
			AmountType: p.AmountType, PriceCurrency: p.PriceCurrency, TaxBehavior: p.TaxBehavior, IsArchived: p.IsArchived,
			ProductID: p.ProductID}
	}
}

// seatTiersOf reads a seat-based price's stored tiers as upstream's ProductPriceSeatTiers
// output: tiers by minimum, volume unless stored otherwise, with the bounds they imply.
func seatTiersOf(raw storage.RawJSON) *model.ProductPriceSeatTiers {
	t := parseSeatTiers(raw)
	out := &model.ProductPriceSeatTiers{SeatTierType: model.SeatTierType(t.Type),
		Tiers: make([]*model.ProductPriceSeatTier, len(t.Tiers))}
	for i, tier := range t.Tiers {
		out.Tiers[i] = &model.ProductPriceSeatTier{MinSeats: tier.MinSeats, MaxSeats: tier.MaxSeats,
			PricePerSeat: int(tier.PricePerSeat)}
	}
	out.MinimumSeats, out.MaximumSeats = t.Bounds()
	return out
}

// narrowAmount narrows an optional amount to GraphQL's Int; amounts are bounded to 32 bits where
// they are written.
func narrowAmount(v *int64) *int {
	if v == nil {
		return nil
	}
	n := int(*v)
	return &n
}

// organizationFeatures reads the stored feature flags; a flag never set is false.
func organizationFeatures(o *storage.Organization) *model.OrganizationFeatureSettings {
	var f struct {
		MemberModelEnabled          bool `json:"member_model_enabled"`
		CheckoutLocalizationEnabled bool `json:"checkout_localization_enabled"`
	}
	_ = json.Unmarshal(o.FeatureSettings, &f)
	return &model.OrganizationFeatureSettings{MemberModelEnabled: f.MemberModelEnabled,
		CheckoutLocalizationEnabled: f.CheckoutLocalizationEnabled}
}

// organizationPortalSettings reads the stored customer portal settings; a setting never
// stored is false.
func organizationPortalSettings(o *storage.Organization) (*model.OrganizationCustomerPortalSettings, error) {
	var s struct {
		Usage struct {
			Show bool `json:"show"`
		} `json:"usage"`
		Subscription struct {
			UpdateSeats bool `json:"update_seats"`
			UpdatePlan  bool `json:"update_plan"`
		} `json:"subscription"`
		Customer struct {
			AllowEmailChange bool `json:"allow_email_change"`
		} `json:"customer"`
	}
	if err := json.Unmarshal(o.CustomerPortalSettings, &s); err != nil {
		return nil, fmt.Errorf("stored customer portal settings: %w", err)
	}
	return &model.OrganizationCustomerPortalSettings{
		Usage: &model.CustomerPortalUsageSettings{Show: s.Usage.Show},
		Subscription: &model.CustomerPortalSubscriptionSettings{UpdateSeats: s.Subscription.UpdateSeats,
			UpdatePlan: s.Subscription.UpdatePlan},
		Customer: &model.CustomerPortalCustomerSettings{AllowEmailChange: s.Customer.AllowEmailChange},
	}, nil
}

// formatOptionalTime renders an optional date-time the way the DateTime scalar does.
func formatOptionalTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := scalar.FormatDateTime(*t)
	return &s
}
