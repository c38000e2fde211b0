package resolvers

import (
	"github.com/google/uuid"

	"bytes"
	"context"
	"encoding/json"

	"till/graph/model"
	"till/internal/scalar"
	"till/storage"
)

// A checkout shows prices in the contract's union shapes (ProductPriceFixed, …Custom,
// …SeatBased, …MeteredUnit; free prices in upstream's ProductPriceFree shape): one object per
// amount type with only that type's fields. The shapes are rendered here, once, as JSON,
// because Checkout.prices maps product ids to lists of them, which no GraphQL type can
// spell; productPrice and CheckoutProduct.prices use the same rendering so all three agree.

// field is one key of an object rendered in a fixed order (upstream's field order).
type field struct {
	key   string
	value any
}

// object renders fields as a JSON object in order.
func object(fields ...field) (storage.RawJSON, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// renderPrice renders one price in its union member's shape; metered prices embed their
// meter (loaded through the operation's loader).
func (r *Resolver) renderPrice(ctx context.Context, p *storage.ProductPrice) (storage.RawJSON, error) {
	var modified any
	if p.ModifiedAt != nil {
		modified = scalar.FormatDateTime(*p.ModifiedAt)
	}
	fields := []field{{"created_at", scalar.FormatDateTime(p.CreatedAt)}, {"modified_at", modified}, {"id", p.ID},
		{"source", p.Source}, {"amount_type", p.AmountType}, {"price_currency", p.PriceCurrency},
		{"tax_behavior", p.TaxBehavior}, {"is_archived", p.IsArchived}, {"product_id", p.ProductID}}
	switch p.AmountType {
	case "fixed":
		fields = append(fields, field{"price_amount", deref(p.PriceAmount)})
	case "custom":
		fields = append(fields, field{"minimum_amount", deref(p.MinimumAmount)}, field{"maximum_amount", p.MaximumAmount},
			field{"preset_amount", p.PresetAmount})
	case "seat_based":
		t := parseSeatTiers(p.SeatTiers)
		// A struct, not a map, so the keys keep the contract's order.
		type seatTier struct {
			MinSeats     int   `json:"min_seats"`
			MaxSeats     *int  `json:"max_seats"`
			PricePerSeat int64 `json:"price_per_seat"`
		}
		tiers := make([]seatTier, len(t.Tiers))
		for i, tier := range t.Tiers {
			tiers[i] = seatTier{MinSeats: tier.MinSeats, MaxSeats: tier.MaxSeats, PricePerSeat: int64(tier.PricePerSeat)}
		}
		lo, hi := t.bounds()
		st, err := object(field{"seat_tier_type", t.SeatTierType}, field{"tiers", tiers},
			field{"minimum_seats", lo}, field{"maximum_seats", hi})
		if err != nil {
			return nil, err
		}
		fields = append(fields, field{"seat_tiers", json.RawMessage(st)})
	case "metered_unit":
		var meter any
		if p.MeterID != nil {
			m, err := relatedOpt(ctx, loaders(ctx).PriceMeter, p, func(p *storage.ProductPrice) *uuid.UUID { return p.MeterID })
			if err != nil {
				return nil, err
			}
			mo, err := object(field{"id", m.ID}, field{"name", m.Name}, field{"unit", m.Unit},
				field{"custom_label", m.CustomLabel}, field{"custom_multiplier", m.CustomMultiplier})
			if err != nil {
				return nil, err
			}
			meter = json.RawMessage(mo)
		}
		fields = append(fields, field{"unit_amount", deref(p.UnitAmount)}, field{"cap_amount", p.CapAmount},
			field{"meter_id", p.MeterID}, field{"meter", meter})
	}
	return object(fields...)
}

// renderPrices renders a list of prices.
func (r *Resolver) renderPrices(ctx context.Context, prices []*storage.ProductPrice) ([]storage.RawJSON, error) {
	out := make([]storage.RawJSON, len(prices))
	for i, p := range prices {
		var err error
		if out[i], err = r.renderPrice(ctx, p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkoutProductPrices are the live prices of a checkout's product, rendered.
func (r *Resolver) checkoutProductPrices(ctx context.Context, p *storage.Product) ([]storage.RawJSON, error) {
	prices, err := related(ctx, loaders(ctx).PricesByProduct, p, func(p *storage.Product) uuid.UUID { return p.ID })
	if err != nil {
		return nil, err
	}
	return r.renderPrices(ctx, prices)
}

// checkoutPriceMap renders Checkout.prices: every offered product's prices by product id,
// in the checkout's product order.
func (r *Resolver) checkoutPriceMap(ctx context.Context, c *storage.Checkout) (storage.RawJSON, error) {
	products, err := related(ctx, loaders(ctx).ProductsByCheckout, c, func(c *storage.Checkout) uuid.UUID { return c.ID })
	if err != nil {
		return nil, err
	}
	fields := make([]field, len(products))
	for i, p := range products {
		list, err := r.checkoutProductPrices(ctx, p)
		if err != nil {
			return nil, err
		}
		raws := make([]json.RawMessage, len(list))
		for j, l := range list {
			raws[j] = json.RawMessage(l)
		}
		fields[i] = field{p.ID.String(), raws}
	}
	return object(fields...)
}

// checkoutPrice renders the selected price (nil when none).
func (r *Resolver) checkoutPrice(ctx context.Context, c *storage.Checkout) (storage.RawJSON, error) {
	if c.ProductPriceID == nil {
		return nil, nil
	}
	p, err := relatedOpt(ctx, loaders(ctx).Price, c, func(c *storage.Checkout) *uuid.UUID { return c.ProductPriceID })
	if err != nil {
		return nil, err
	}
	return r.renderPrice(ctx, p)
}

// checkoutDiscount is the checkout's discount in the union member of its type and duration.
func (r *Resolver) checkoutDiscount(ctx context.Context, c *storage.Checkout) (model.CheckoutDiscount, error) {
	if c.DiscountID == nil {
		return nil, nil
	}
	d, err := relatedOpt(ctx, loaders(ctx).Discount, c, func(c *storage.Checkout) *uuid.UUID { return c.DiscountID })
	if err != nil {
		return nil, err
	}
	months := deref(d.DurationInMonths)
	if d.Type == "percentage" {
		bp := deref(d.BasisPoints)
		if d.Duration == "repeating" {
			return model.CheckoutDiscountPercentageRepeatDuration{Duration: d.Duration, DurationInMonths: months,
				Type: d.Type, BasisPoints: bp, ID: d.ID, Name: d.Name, Code: d.Code}, nil
		}
		return model.CheckoutDiscountPercentageOnceForeverDuration{Duration: d.Duration, Type: d.Type,
			BasisPoints: bp, ID: d.ID, Name: d.Name, Code: d.Code}, nil
	}
	amount, currency := int(deref(d.Amount)), deref(d.Currency)
	amounts, err := json.Marshal(map[string]int{currency: amount})
	if err != nil {
		return nil, err
	}
	if d.Duration == "repeating" {
		return model.CheckoutDiscountFixedRepeatDuration{Duration: d.Duration, DurationInMonths: months, Type: d.Type,
			Amount: amount, Currency: currency, Amounts: amounts, ID: d.ID, Name: d.Name, Code: d.Code}, nil
	}
	return model.CheckoutDiscountFixedOnceForeverDuration{Duration: d.Duration, Type: d.Type, Amount: amount,
		Currency: currency, Amounts: amounts, ID: d.ID, Name: d.Name, Code: d.Code}, nil
}

// billingAddressFields says which address fields the form requires, as upstream derives
// them: a full address for billing-address checkouts, businesses and US buyers; a state in
// the US and Canada.
func billingAddressFields(c *storage.Checkout) *model.CheckoutBillingAddressFields {
	country := ""
	if c.CustomerBillingAddress != nil {
		country = c.CustomerBillingAddress.Country
	}
	full := c.RequireBillingAddress || c.IsBusinessCustomer || country == "US"
	mode := func(required bool, otherwise model.BillingAddressFieldMode) model.BillingAddressFieldMode {
		if required {
			return model.BillingAddressFieldModeRequired
		}
		return otherwise
	}
	optional := mode(false, model.BillingAddressFieldModeDisabled)
	if full {
		optional = model.BillingAddressFieldModeOptional
	}
	return &model.CheckoutBillingAddressFields{
		Country:    model.BillingAddressFieldModeRequired,
		State:      mode(country == "US" || country == "CA", optional),
		City:       mode(full, model.BillingAddressFieldModeDisabled),
		PostalCode: mode(full, model.BillingAddressFieldModeDisabled),
		Line1:      mode(full, model.BillingAddressFieldModeDisabled),
		Line2:      optional,
	}
}
