package resolvers

import (
	"fmt"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"till/graph/model"
	"till/internal/scalar"
)

// Caps on lists that GraphQL returns whole, without a page argument. Each is the
// `@listSize(assumedSize:)` the schema declares for the list, so the operation cost is an
// upper bound of the objects it reads; a write that would pass a cap is refused with a 422.
// Upstream declares none of them; they sit far above what a catalog needs and keep /v1's own
// documents (a page of 100 checkouts with their products and benefits) under maxCost.
const (
	// MaxProductBenefits caps the benefits of one product (Product.benefits,
	// CheckoutProduct.benefits).
	MaxProductBenefits = 20
	// MaxProductPrices caps the live prices of one product (Product.prices), and so the
	// prices and meters of a subscription and the lines of an order (one per metered price
	// and one for the rest).
	MaxProductPrices = 20
	// MaxSeatTiers caps the tiers of one seat-based price (CheckoutSeatTiers.tiers).
	MaxSeatTiers = 20
	// MaxCheckoutProducts caps the products a checkout offers (Checkout.products).
	MaxCheckoutProducts = 10
	// MaxDiscountProducts caps the products a discount is limited to (Discount.products).
	MaxDiscountProducts = 100
	// MaxLicenseKeyActivations is the benefit's cap on a key's activation limit, so
	// LicenseKey.activations holds at most this many, unless the seller raised one key's limit
	// through updateLicenseKey, which takes any positive 32-bit number as upstream's PATCH does.
	MaxLicenseKeyActivations = 50
	// MaxCustomerPaymentMethods caps the live payment methods saved for one customer
	// (Customer.paymentMethods), whether saved directly or by a checkout.
	MaxCustomerPaymentMethods = 20
	// MaxPublishedSigningKeys caps an organization's published license signing keys
	// (licenseSigningKeys): a rotation that would publish more is refused.
	MaxPublishedSigningKeys = 10
	// MaxJobErrors is how many of a job's latest errors Job.errors shows: retries can
	// add errors without end, and the list is read whole.
	MaxJobErrors = 25
	// MaxEventDeliveries is how many of an event's latest deliveries
	// WebhookEvent.deliveries shows: redeliveries can add them without end.
	MaxEventDeliveries = 20
	// MaxSeats caps the seats of one purchase, upstream's le=10000 on a checkout's seats:
	// revoked seats are reused, so CustomerSeatList.seats holds at most this many.
	MaxSeats = 10_000
)

// checkSeatCap refuses more than MaxSeats seats as upstream's pydantic le=10000 does,
// whatever the price's tiers allow: a price's own bound stays null when its last tier is
// open, as /v1 shows it.
func checkSeatCap(seats int) error {
	if seats > MaxSeats {
		return &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "less_than_equal",
			Loc: []any{"input", "seats"}, Msg: fmt.Sprintf("Input should be less than or equal to %d", MaxSeats),
			Input: seats, Ctx: map[string]any{"le": MaxSeats}}}}
	}
	return nil
}

// tooMany is the 422 for a list input one item over its cap, worded as pydantic's
// max_length.
func tooMany(n, limit int, loc ...any) error {
	return Invalid("too_long", fmt.Sprintf("List should have at most %d items after validation, not %d", limit, n), n, loc...)
}

// meterSeries are the fields that return intervals of a window (meterBuckets).
var meterSeries = map[string]bool{"meterQuantities": true, "meterCosts": true}

// meterBuckets is the number of intervals meterQuantities (or each meter of meterCosts)
// returns, read from its window and interval as the resolver will: ok is false for any
// other field. An argument the document does not give readably, or a window the resolver
// will refuse, counts the most buckets the interval allows.
func (c *costCalc) meterBuckets(f *ast.Field) (int, bool) {
	if !meterSeries[f.Name] || f.Definition.Arguments.ForName("interval") == nil {
		return 0, false
	}
	arg := func(name string) any {
		if a := f.Arguments.ForName(name); a != nil {
			v, _ := a.Value.Value(c.vars)
			return v
		}
		return nil
	}
	var interval model.MeterQuantityInterval
	switch v := arg("interval").(type) {
	case string:
		interval = model.MeterQuantityInterval(v)
	case model.MeterQuantityInterval:
		interval = v
	}
	most, known := maxQuantityBuckets(interval)
	if !known {
		return maxQuantityBucketsAny(), true
	}
	from, errFrom := scalar.UnmarshalDateTime(arg("startTimestamp"))
	to, errTo := scalar.UnmarshalDateTime(arg("endTimestamp"))
	if errFrom != nil || errTo != nil || (quantityWindow{from: from, to: to, interval: interval}).check() != nil {
		return most, true
	}
	return max(1, min(quantityBuckets(from, to, interval, most), most)), true
}

// idsSize is the size of a list that answers at most one object per id of its ids
// argument (meterCosts): the ids given, at most the list's @listSize, past which the
// resolver refuses them; the @listSize itself when the document gives them unreadably. ok
// is false for a field without an ids list or a declared size.
func (c *costCalc) idsSize(f *ast.Field) (int, bool) {
	def := f.Definition.Arguments.ForName("ids")
	if def == nil || def.Type.Elem == nil || f.Definition.Directives.ForName("listSize") == nil {
		return 0, false
	}
	most := c.listSize(f)
	if a := f.Arguments.ForName("ids"); a != nil {
		if v, err := a.Value.Value(c.vars); err == nil {
			if ids, ok := v.([]any); ok {
				return min(len(ids), most), true
			}
		}
	}
	return most, true
}

// quantityBuckets counts the intervals from the one holding from up to to, as the storage
// query's generate_series does, stopping at limit+1.
func quantityBuckets(from, to time.Time, interval model.MeterQuantityInterval, limit int) int {
	g := truncateInterval(from.UTC(), interval)
	n := 0
	for ; g.Before(to) && n <= limit; n++ {
		switch interval {
		case model.MeterQuantityIntervalHour:
			g = g.Add(time.Hour)
		case model.MeterQuantityIntervalDay:
			g = g.AddDate(0, 0, 1)
		case model.MeterQuantityIntervalWeek:
			g = g.AddDate(0, 0, 7)
		default:
			g = g.AddDate(0, 1, 0)
		}
	}
	return n
}

// truncateInterval is PostgreSQL's date_trunc in UTC (weeks start on Monday).
func truncateInterval(t time.Time, interval model.MeterQuantityInterval) time.Time {
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch interval {
	case model.MeterQuantityIntervalHour:
		return t.Truncate(time.Hour)
	case model.MeterQuantityIntervalWeek:
		return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	case model.MeterQuantityIntervalMonth:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return day
}

// maxQuantityBuckets is the most intervals a window within maxQuantityDays can hold: its
// calendar days plus the partial one at each end.
func maxQuantityBuckets(interval model.MeterQuantityInterval) (int, bool) {
	days, ok := maxQuantityDays[interval]
	switch interval {
	case model.MeterQuantityIntervalHour:
		return (days + 1) * 24, ok
	case model.MeterQuantityIntervalDay:
		return days + 1, ok
	case model.MeterQuantityIntervalWeek:
		return days/7 + 2, ok
	case model.MeterQuantityIntervalMonth:
		return days/28 + 2, ok
	}
	return 0, false
}

// maxQuantityBucketsAny is the most buckets of any interval.
func maxQuantityBucketsAny() int {
	most := 0
	for interval := range maxQuantityDays {
		n, _ := maxQuantityBuckets(interval)
		most = max(most, n)
	}
	return most
}
