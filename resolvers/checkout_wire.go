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
// amount type with only that type's fields. checkoutPriceOf builds them once, typed
// (productPrice, CheckoutProduct.prices), and renderPrice writes the same values as the JSON
// /v1 shows (wireProductPrice, CheckoutProduct.wirePrices and Checkout.prices, which maps
// product ids to lists of them as no GraphQL type can). The persisted documents select the
// JSON: typed, a page of 100 checkouts with every price's seat tiers would cost more than
// one operation may.

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

// checkoutPriceOf builds one price as its union member; metered prices embed their meter
// (loaded through the operation's loader).
func (r *Resolver) checkoutPriceOf(ctx context.Context, p *storage.ProductPrice) (model.CheckoutPrice, error) {
	switch p.AmountType {
	case storage.AmountTypeFixed:
		return &model.CheckoutPriceFixed{CreatedAt: p.CreatedAt, ModifiedAt: p.ModifiedAt, ID: p.ID, Source: p.Source,
			AmountType: p.AmountType, PriceCurrency: p.PriceCurrency, TaxBehavior: p.TaxBehavior, IsArchived: p.IsArchived,
			ProductID: p.ProductID, PriceAmount: int(deref(p.PriceAmount))}, nil
	case storage.AmountTypeCustom:
		return &model.CheckoutPriceCustom{CreatedAt: p.CreatedAt, ModifiedAt: p.ModifiedAt, ID: p.ID, Source: p.Source,
			AmountType: p.AmountType, PriceCurrency: p.PriceCurrency, TaxBehavior: p.TaxBehavior, IsArchived: p.IsArchived,
			ProductID: p.ProductID, MinimumAmount: int(deref(p.MinimumAmount)), MaximumAmount: intOf(p.MaximumAmount),
			PresetAmount: intOf(p.PresetAmount)}, nil
	case storage.AmountTypeSeatBased:
		t := parseSeatTiers(p.SeatTiers)
		tiers := make([]*model.CheckoutSeatTier, len(t.Tiers))
		for i, tier := range t.Tiers {
			tiers[i] = &model.CheckoutSeatTier{MinSeats: tier.MinSeats, MaxSeats: tier.MaxSeats, PricePerSeat: int(tier.PricePerSeat)}
		}
		lo, hi := t.Bounds()
		return &model.CheckoutPriceSeatBased{CreatedAt: p.CreatedAt, ModifiedAt: p.ModifiedAt, ID: p.ID, Source: p.Source,
			AmountType: p.AmountType, PriceCurrency: p.PriceCurrency, TaxBehavior: p.TaxBehavior, IsArchived: p.IsArchived,
			ProductID: p.ProductID, SeatTiers: &model.CheckoutSeatTiers{SeatTierType: t.Type, Tiers: tiers,
				MinimumSeats: lo, MaximumSeats: hi}}, nil
	case storage.AmountTypeMeteredUnit:
		out := &model.CheckoutPriceMeteredUnit{CreatedAt: p.CreatedAt, ModifiedAt: p.ModifiedAt, ID: p.ID, Source: p.Source,
			AmountType: p.AmountType, PriceCurrency: p.PriceCurrency, TaxBehavior: p.TaxBehavior, IsArchived: p.IsArchived,
			ProductID: p.ProductID, UnitAmount: deref(p.UnitAmount), CapAmount: intOf(p.CapAmount), MeterID: deref(p.MeterID)}
		if p.MeterID != nil {
			m, err := relatedOpt(ctx, loaders(ctx).PriceMeter, p, func(p *storage.ProductPrice) *uuid.UUID { return p.MeterID })
			if err != nil {
				return nil, err
			}
			out.Meter = &model.CheckoutPriceMeter{ID: m.ID, Name: m.Name, Unit: m.Unit, CustomLabel: m.CustomLabel,
				CustomMultiplier: m.CustomMultiplier}
		}
		return out, nil
	}
	return &model.CheckoutPriceFree{CreatedAt: p.CreatedAt, ModifiedAt: p.ModifiedAt, ID: p.ID, Source: p.Source,
		AmountType: p.AmountType, PriceCurrency: p.PriceCurrency, TaxBehavior: p.TaxBehavior, IsArchived: p.IsArchived,
		ProductID: p.ProductID}, nil
}

// intOf narrows a stored amount to the schema's Int, keeping null.
func intOf(v *int64) *int {
	if v == nil {
		return nil
	}
	n := int(*v)
	return &n
}

// renderPrice renders one price as /v1 shows it: the fields of its union member, in the
// contract's order.
func (r *Resolver) renderPrice(ctx context.Context, p *storage.ProductPrice) (storage.RawJSON, error) {
	typed, err := r.checkoutPriceOf(ctx, p)
	if err != nil {
		return nil, err
	}
	var modified any
	if m := typed.GetModifiedAt(); m != nil {
		modified = scalar.FormatDateTime(*m)
	}
	fields := []field{{"created_at", scalar.FormatDateTime(typed.GetCreatedAt())}, {"modified_at", modified},
		{"id", typed.GetID()}, {"source", typed.GetSource()}, {"amount_type", typed.GetAmountType()},
		{"price_currency", typed.GetPriceCurrency()}, {"tax_behavior", typed.GetTaxBehavior()},
		{"is_archived", typed.GetIsArchived()}, {"product_id", typed.GetProductID()}}
	switch t := typed.(type) {
	case *model.CheckoutPriceFixed:
		fields = append(fields, field{"price_amount", t.PriceAmount})
	case *model.CheckoutPriceCustom:
		fields = append(fields, field{"minimum_amount", t.MinimumAmount}, field{"maximum_amount", t.MaximumAmount},
			field{"preset_amount", t.PresetAmount})
	case *model.CheckoutPriceSeatBased:
		// Structs, not maps, so the keys keep the contract's order.
		type seatTier struct {
			MinSeats     int  `json:"min_seats"`
			MaxSeats     *int `json:"max_seats"`
			PricePerSeat int  `json:"price_per_seat"`
		}
		tiers := make([]seatTier, len(t.SeatTiers.Tiers))
		for i, tier := range t.SeatTiers.Tiers {
			tiers[i] = seatTier{MinSeats: tier.MinSeats, MaxSeats: tier.MaxSeats, PricePerSeat: tier.PricePerSeat}
		}
		st, err := object(field{"seat_tier_type", t.SeatTiers.SeatTierType}, field{"tiers", tiers},
			field{"minimum_seats", t.SeatTiers.MinimumSeats}, field{"maximum_seats", t.SeatTiers.MaximumSeats})
		if err != nil {
			return nil, err
		}
		fields = append(fields, field{"seat_tiers", json.RawMessage(st)})
	case *model.CheckoutPriceMeteredUnit:
		var meter any
		if m := t.Meter; m != nil {
			mo, err := object(field{"id", m.ID}, field{"name", m.Name}, field{"unit", m.Unit},
				field{"custom_label", m.CustomLabel}, field{"custom_multiplier", m.CustomMultiplier})
			if err != nil {
				return nil, err
			}
			meter = json.RawMessage(mo)
		}
		fields = append(fields, field{"unit_amount", t.UnitAmount}, field{"cap_amount", t.CapAmount},
			field{"meter_id", t.MeterID}, field{"meter", meter})
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

// checkoutProductPrices are the live prices of a checkout's product, typed.
func (r *Resolver) checkoutProductPrices(ctx context.Context, p *storage.Product) ([]model.CheckoutPrice, error) {
	prices, err := related(ctx, loaders(ctx).PricesByProduct, p, func(p *storage.Product) uuid.UUID { return p.ID })
	if err != nil {
		return nil, err
	}
	out := make([]model.CheckoutPrice, len(prices))
	for i, price := range prices {
		if out[i], err = r.checkoutPriceOf(ctx, price); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkoutProductWirePrices renders the live prices of a checkout's product as /v1 shows them.
func (r *Resolver) checkoutProductWirePrices(ctx context.Context, p *storage.Product) ([]storage.RawJSON, error) {
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
		list, err := r.checkoutProductWirePrices(ctx, p)
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

// checkoutPrice is the selected price (nil when none).
func (r *Resolver) checkoutPrice(ctx context.Context, c *storage.Checkout) (*storage.ProductPrice, error) {
	if c.ProductPriceID == nil {
		return nil, nil
	}
	return relatedOpt(ctx, loaders(ctx).Price, c, func(c *storage.Checkout) *uuid.UUID { return c.ProductPriceID })
}

// checkoutTypedPrice is the selected price as its union member (nil when none).
func (r *Resolver) checkoutTypedPrice(ctx context.Context, c *storage.Checkout) (model.CheckoutPrice, error) {
	p, err := r.checkoutPrice(ctx, c)
	if err != nil || p == nil {
		return nil, err
	}
	return r.checkoutPriceOf(ctx, p)
}

// checkoutWirePrice renders the selected price as /v1 shows it (nil when none).
func (r *Resolver) checkoutWirePrice(ctx context.Context, c *storage.Checkout) (storage.RawJSON, error) {
	p, err := r.checkoutPrice(ctx, c)
	if err != nil || p == nil {
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
	if d.Type == storage.DiscountTypePercentage {
		bp := deref(d.BasisPoints)
		if d.Duration == storage.DiscountDurationRepeating {
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
	if d.Duration == storage.DiscountDurationRepeating {
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
