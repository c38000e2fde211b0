package resolvers

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/pricing"
	"till/storage"
)

// customPriceFallback is upstream's CUSTOM_PRICE_PRESET_FALLBACK: the amount of a
// pay-what-you-want price with neither preset nor (non-zero) minimum.
const customPriceFallback = 1000

// checkoutTTL is how long a checkout stays open (upstream's CHECKOUT_TTL_SECONDS).
const checkoutTTL = time.Hour

// checkoutDraft is what a checkout sells, as the use cases price it: the selected product and
// price, the quantities and the discount. Create, update and confirm build one and price it
// with the same rules, so the stored amounts always follow from the stored choices.
type checkoutDraft struct {
	orgID              uuid.UUID
	product            *storage.Product
	prices             []*storage.ProductPrice // the product's live prices
	price              *storage.ProductPrice
	seats              *int
	minSeats, maxSeats *int
	customAmount       *int64 // the buyer's amount for a custom price
	discountID         *uuid.UUID
	discountCode       *string // resolves discountID when set
	customerID         uuid.UUID
	allowTrial         *bool
	trialInterval      *storage.Interval
	trialIntervalCount *int
}

// staticPrice is the price a product sells at by default: its first non-metered price, which
// decides the amount and behaviour (pay what you want, seats), else its first price.
func staticPrice(prices []*storage.ProductPrice) *storage.ProductPrice {
	for _, p := range prices {
		if p.AmountType != storage.AmountTypeMeteredUnit {
			return p
		}
	}
	if len(prices) > 0 {
		return prices[0]
	}
	return nil
}

// parseSeatTiers reads a seat-based price's stored tiers; tiers that do not parse price no
// seat count (they are validated when written, so only a damaged row has them).
func parseSeatTiers(raw storage.RawJSON) pricing.SeatTiers {
	t, _ := pricing.ParseSeatTiers(raw)
	return t
}

// priceAmount is the amount before discount of the selected price for the draft's seats or
// custom amount, with upstream's errors for seats and amounts out of range.
func (d *checkoutDraft) priceAmount() (int64, error) {
	p := d.price
	if p.AmountType != storage.AmountTypeSeatBased && d.seats != nil {
		return 0, Invalid("value_error", "Seats can only be set for seat-based pricing.", *d.seats, "input", "seats")
	}
	switch p.AmountType {
	case storage.AmountTypeFixed:
		return deref(p.PriceAmount), nil
	case storage.AmountTypeCustom:
		if d.customAmount == nil {
			switch {
			case p.PresetAmount != nil && *p.PresetAmount > 0:
				return *p.PresetAmount, nil
			case p.MinimumAmount != nil && *p.MinimumAmount > 0:
				return *p.MinimumAmount, nil
			}
			return customPriceFallback, nil
		}
		a := *d.customAmount
		if p.MinimumAmount != nil && a < *p.MinimumAmount {
			return 0, Invalid("greater_than_equal", "Amount is below minimum.", a, "input", "amount")
		}
		if a > maxPriceAmount || p.MaximumAmount != nil && a > *p.MaximumAmount {
			return 0, Invalid("less_than_equal", "Amount is above maximum.", a, "input", "amount")
		}
		return a, nil
	case storage.AmountTypeSeatBased:
		if d.seats == nil || *d.seats < 1 {
			return 0, Invalid("missing", "Seats is required for seat-based pricing.", d.seats, "input", "seats")
		}
		tiers := parseSeatTiers(p.SeatTiers)
		if err := checkSeatCap(*d.seats); err != nil {
			return 0, err
		}
		lo, hi := tiers.Bounds()
		if d.minSeats != nil {
			lo = max(lo, *d.minSeats)
		}
		if d.maxSeats != nil && (hi == nil || *d.maxSeats < *hi) {
			hi = d.maxSeats
		}
		amount, ok := tiers.Amount(*d.seats)
		if !ok || *d.seats < lo || hi != nil && *d.seats > *hi {
			msg := fmt.Sprintf("Seats must be at least %d.", lo)
			if hi != nil {
				msg = fmt.Sprintf("Seats must be between %d and %d.", lo, *hi)
			}
			return 0, Invalid("value_error", msg, *d.seats, "input", "seats")
		}
		return amount, nil
	}
	return 0, nil // free, and metered prices billed later from usage
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// discountApplicable reports whether a price can be discounted: free and metered ones cannot.
func discountApplicable(p *storage.ProductPrice) bool {
	switch p.AmountType {
	case storage.AmountTypeFixed, storage.AmountTypeCustom, storage.AmountTypeSeatBased:
		return true
	}
	return false
}

// price computes the draft's amounts and sets the fields that store them on u. No tax
// engine exists yet, so the tax amount is 0 and total equals net (documented on the Checkout
// type). The trial end is measured on the organization's clock, as the subscription it
// previews will be.
func (r *Resolver) price(ctx context.Context, tx *sqlx.Tx, d *checkoutDraft, u *storage.CheckoutUpdate) (*storage.Discount, error) {
	amount, err := d.priceAmount()
	if err != nil {
		return nil, err
	}
	var (
		discount *storage.Discount
		off      int64
	)
	if d.discountID != nil || d.discountCode != nil {
		if !discountApplicable(d.price) {
			loc := "discountId"
			if d.discountCode != nil {
				loc = "discountCode"
			}
			return nil, Invalid("value_error", "Discounts are not applicable to this product.", nil, "input", loc)
		}
		id := d.discountID
		if d.discountCode != nil {
			id = nil
		}
		use, err := r.applyDiscount(ctx, tx, d.orgID, id, d.discountCode, d.customerID, d.product.ID, amount, d.price.PriceCurrency)
		if err != nil {
			return nil, err
		}
		if use.Discount.Duration == storage.DiscountDurationRepeating && !d.product.IsRecurring() {
			return nil, Invalid("value_error", "Discount is not applicable to this product.", use.Discount.ID.String(), "input", "discountId")
		}
		discount, off = use.Discount, use.Amount
		d.discountID = &discount.ID
	}
	now, err := r.clockFor(ctx, tx, d.orgID)
	if err != nil {
		return nil, err
	}
	var tax int64
	seats := d.seats
	if d.price.AmountType != storage.AmountTypeSeatBased {
		seats = nil
	}
	u.ProductID, u.ProductPriceID, u.Currency = storage.Set(d.product.ID), storage.Set(d.price.ID), storage.Set(d.price.PriceCurrency)
	u.Amount, u.DiscountAmount, u.NetAmount = storage.Set(amount), storage.Set(off), storage.Set(amount-off)
	u.TaxAmount, u.TotalAmount = storage.Set(tax), storage.Set(amount-off+tax)
	u.Seats, u.DiscountID, u.TrialEnd = storage.Set(seats), storage.Set(d.discountID), storage.Set(d.trialEnd(now))
	return discount, nil
}

// activeTrial is the trial the checkout would start: its own interval when set, else the
// product's, unless trials are disallowed or the product is one-time.
func activeTrial(c *storage.Checkout, p *storage.Product) (*storage.Interval, *int) {
	if p == nil || !p.IsRecurring() || (c.AllowTrial != nil && !*c.AllowTrial) {
		return nil, nil
	}
	if c.TrialInterval != nil {
		n := 1
		if c.TrialIntervalCount != nil {
			n = *c.TrialIntervalCount
		}
		return c.TrialInterval, &n
	}
	if p.TrialInterval != nil {
		n := 1
		if p.TrialIntervalCount != nil {
			n = *p.TrialIntervalCount
		}
		return p.TrialInterval, &n
	}
	return nil, nil
}

// trialEnd is when the draft's trial would end if the checkout were paid at now.
func (d *checkoutDraft) trialEnd(now time.Time) *time.Time {
	interval, count := activeTrial(&storage.Checkout{AllowTrial: d.allowTrial, TrialInterval: d.trialInterval,
		TrialIntervalCount: d.trialIntervalCount}, d.product)
	if interval == nil {
		return nil
	}
	end := addInterval(now.UTC(), *interval, *count)
	return &end
}

// addInterval adds count intervals to t, calendar-aware for months and years.
func addInterval(t time.Time, interval storage.Interval, count int) time.Time {
	switch interval {
	case storage.IntervalDay:
		return t.AddDate(0, 0, count)
	case storage.IntervalWeek:
		return t.AddDate(0, 0, 7*count)
	case storage.IntervalMonth:
		return t.AddDate(0, count, 0)
	default:
		return t.AddDate(count, 0, 0)
	}
}

// checkoutFlags are the derived booleans of the Checkout schema, computed as upstream's
// model properties are.
type checkoutFlags struct {
	discountApplicable, freePrice, paymentRequired, setupRequired bool
}

func (f checkoutFlags) formRequired() bool { return f.paymentRequired || f.setupRequired }

// flagsOf derives the flags from the checkout, its product, the product's prices and the
// discount (nil when none).
func flagsOf(c *storage.Checkout, product *storage.Product, prices []*storage.ProductPrice, d *storage.Discount) checkoutFlags {
	var f checkoutFlags
	f.freePrice = len(prices) > 0
	metered := false
	for _, p := range prices {
		f.discountApplicable = f.discountApplicable || discountApplicable(p)
		f.freePrice = f.freePrice && p.AmountType == storage.AmountTypeFree
		metered = metered || p.AmountType == storage.AmountTypeMeteredUnit
	}
	f.paymentRequired = c.TotalAmount > 0 && c.TrialEnd == nil
	fullyFree := d != nil && d.Duration == storage.DiscountDurationForever && d.Type == storage.DiscountTypePercentage &&
		deref(d.BasisPoints) == pricing.BasisPointsWhole
	f.setupRequired = product != nil && product.IsRecurring() && !f.freePrice &&
		!(c.Amount == 0 && !metered) && !fullyFree
	return f
}
