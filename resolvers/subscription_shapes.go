package resolvers

import (
	"github.com/google/uuid"

	"context"
	"encoding/json"
	"time"

	"till/internal/scalar"
	"till/storage"
)

// Upstream spells a price as one member of the ProductPrice union per amount type, each with
// exactly its own fields, and the portal's organization with every feature flag present.
// GraphQL's ProductPrice and Organization types are flat, so these JSON renderings give the
// /v1 documents (and webhook payloads) the exact shapes.

// productWirePrices renders a product's prices as the ProductPrice union members, the one
// rendering checkouts use too (renderPrices), metered prices with their meter.
func (r *Resolver) productWirePrices(ctx context.Context, p *storage.Product) ([]storage.RawJSON, error) {
	prices, err := related(ctx, loaders(ctx).PricesByProduct, p, func(p *storage.Product) uuid.UUID { return p.ID })
	if err != nil {
		return nil, err
	}
	return r.renderPrices(ctx, prices)
}

// subscriptionWirePrices renders a subscription's prices the same way.
func (r *Resolver) subscriptionWirePrices(ctx context.Context, s *storage.Subscription) ([]storage.RawJSON, error) {
	prices, err := related(ctx, loaders(ctx).PricesBySubscription, s, func(s *storage.Subscription) uuid.UUID { return s.ID })
	if err != nil {
		return nil, err
	}
	return r.renderPrices(ctx, prices)
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
