package resolvers

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"till/graph/model"
	"till/storage"
)

// discountVariant presents a discount as the variant type its kind and duration call for,
// so a document that selects each variant's fields with inline fragments emits exactly the
// keys upstream's Discount*DurationBase schemas have: amount, currency and amounts for fixed
// discounts, basis_points for percentages, duration_in_months for repeating ones.
func discountVariant(d *storage.Discount) model.DiscountBase {
	months := 0
	if d.DurationInMonths != nil {
		months = *d.DurationInMonths
	}
	repeating := d.Duration == storage.DiscountDurationRepeating
	if d.Type == storage.DiscountTypePercentage {
		bp := 0
		if d.BasisPoints != nil {
			bp = *d.BasisPoints
		}
		if repeating {
			return &model.DiscountPercentageRepeatDurationBase{ID: d.ID, CreatedAt: d.CreatedAt, ModifiedAt: d.ModifiedAt,
				Duration: d.Duration, DurationInMonths: months, Type: d.Type, BasisPoints: bp, Name: d.Name, Code: d.Code,
				StartsAt: d.StartsAt, EndsAt: d.EndsAt, MaxRedemptions: d.MaxRedemptions,
				MaxRedemptionsPerCustomer: d.MaxRedemptionsPerCustomer, RedemptionsCount: d.RedemptionsCount,
				Metadata: d.Metadata, OrganizationID: d.OrganizationID}
		}
		return &model.DiscountPercentageOnceForeverDurationBase{ID: d.ID, CreatedAt: d.CreatedAt, ModifiedAt: d.ModifiedAt,
			Duration: d.Duration, Type: d.Type, BasisPoints: bp, Name: d.Name, Code: d.Code,
			StartsAt: d.StartsAt, EndsAt: d.EndsAt, MaxRedemptions: d.MaxRedemptions,
			MaxRedemptionsPerCustomer: d.MaxRedemptionsPerCustomer, RedemptionsCount: d.RedemptionsCount,
			Metadata: d.Metadata, OrganizationID: d.OrganizationID}
	}
	var amount int64
	currency := ""
	if d.Amount != nil {
		amount = *d.Amount
	}
	if d.Currency != nil {
		currency = *d.Currency
	}
	amounts := discountAmounts(currency, amount)
	if repeating {
		return &model.DiscountFixedRepeatDurationBase{ID: d.ID, CreatedAt: d.CreatedAt, ModifiedAt: d.ModifiedAt,
			Duration: d.Duration, DurationInMonths: months, Type: d.Type, Amount: int(amount), Currency: currency,
			Amounts: amounts, Name: d.Name, Code: d.Code, StartsAt: d.StartsAt, EndsAt: d.EndsAt,
			MaxRedemptions: d.MaxRedemptions, MaxRedemptionsPerCustomer: d.MaxRedemptionsPerCustomer,
			RedemptionsCount: d.RedemptionsCount, Metadata: d.Metadata, OrganizationID: d.OrganizationID}
	}
	return &model.DiscountFixedOnceForeverDurationBase{ID: d.ID, CreatedAt: d.CreatedAt, ModifiedAt: d.ModifiedAt,
		Duration: d.Duration, Type: d.Type, Amount: int(amount), Currency: currency, Amounts: amounts,
		Name: d.Name, Code: d.Code, StartsAt: d.StartsAt, EndsAt: d.EndsAt, MaxRedemptions: d.MaxRedemptions,
		MaxRedemptionsPerCustomer: d.MaxRedemptionsPerCustomer, RedemptionsCount: d.RedemptionsCount,
		Metadata: d.Metadata, OrganizationID: d.OrganizationID}
}

// discountOf loads the discount an order or subscription points at (id, nil without one)
// through the request's loader and presents it as its variant type: Order.discount and
// Subscription.discount are the same field.
func discountOf[P any](ctx context.Context, obj *P, id func(*P) *uuid.UUID) (model.DiscountBase, error) {
	d, err := relatedOpt(ctx, loaders(ctx).Discount, obj, id)
	if err != nil || d == nil {
		return nil, err
	}
	return discountVariant(d), nil
}

// discountAmounts is the wire `amounts` of a fixed discount: currency to amount. Till stores
// one currency per fixed discount, so it has one entry.
func discountAmounts(currency string, amount int64) storage.RawJSON {
	b, _ := json.Marshal(map[string]int64{currency: amount}) // a map of integers always encodes
	return b
}
