package resolvers

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/pricing"
	"till/storage"
)

// A subscription's meters (Subscription.meters) are stored rows, as upstream keeps them: a
// page of subscriptions reads them in one statement, while counting usage costs a meter
// aggregate per metered price. RefreshSubscriptionMeters recounts them in the background; the
// renewal bills the period that ended from a fresh count and zeroes them for the next one.

// meterUsage is what one metered price of a subscription owes for a window of its meter
// period.
type meterUsage struct {
	Price *storage.ProductPrice
	Meter *storage.Meter
	storage.SubscriptionMeterValues
	Capped bool // the price's cap held the amount down
}

// meteredPrices keeps a subscription's metered prices, one per meter (the first): a meter's
// usage is billed once however many prices name it.
func meteredPrices(prices []*storage.ProductPrice) []*storage.ProductPrice {
	seen := map[uuid.UUID]bool{}
	var out []*storage.ProductPrice
	for _, p := range prices {
		if p.AmountType != storage.AmountTypeMeteredUnit || p.MeterID == nil || seen[*p.MeterID] {
			continue
		}
		seen[*p.MeterID] = true
		out = append(out, p)
	}
	return out
}

// meterPeriod is the subscription's current meter period; a subscription without one meters
// over its billing period.
func meterPeriod(s *storage.Subscription) (start, end time.Time) {
	if s.CurrentMeterPeriodStart != nil && s.CurrentMeterPeriodEnd != nil {
		return *s.CurrentMeterPeriodStart, *s.CurrentMeterPeriodEnd
	}
	return s.CurrentPeriodStart, s.CurrentPeriodEnd
}

// measureMeters counts the usage of each metered price by the subscription's customer over
// [from, to): the meter's aggregate of the customer's events (sent with its id or its external
// id), less the units meter_credit grants credit in the window, priced by meteredAmount.
func measureMeters(ctx context.Context, q sqlx.ExtContext, s *storage.Subscription, prices []*storage.ProductPrice,
	from, to time.Time) ([]meterUsage, error) {
	if len(prices) == 0 {
		return nil, nil
	}
	ids := make([]uuid.UUID, len(prices))
	for i, p := range prices {
		ids[i] = *p.MeterID
	}
	meters, err := storage.MetersByIDs(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	customers, err := storage.CustomersByIDs(ctx, q, []uuid.UUID{s.CustomerID})
	if err != nil {
		return nil, err
	}
	if customers[0] == nil {
		return nil, fmt.Errorf("subscription %s: customer %s not found", s.ID, s.CustomerID)
	}
	credits, err := storage.MeterCredits(ctx, q, s.CustomerID, ids, from, to)
	if err != nil {
		return nil, err
	}
	who := storage.MeterCustomer{OrganizationID: s.OrganizationID, ID: s.CustomerID, ExternalID: customers[0].ExternalID}
	out := make([]meterUsage, len(prices))
	for i, p := range prices {
		if meters[i] == nil {
			return nil, fmt.Errorf("price %s: meter %s not found", p.ID, ids[i])
		}
		units, err := storage.MeterQuantity(ctx, q, meters[i], who, from, to)
		if err != nil {
			return nil, err
		}
		credited := credits[ids[i]]
		amount, capped, err := meteredAmount(p, units-float64(credited))
		if err != nil {
			return nil, err
		}
		out[i] = meterUsage{Price: p, Meter: meters[i], Capped: capped, SubscriptionMeterValues: storage.SubscriptionMeterValues{
			MeterID: ids[i], ConsumedUnits: units, CreditedUnits: credited, Amount: amount}}
	}
	return out, nil
}

// meteredAmount is what a metered unit price charges for units, in cents, as upstream's
// get_amount_and_label: the units (never below zero) times the unit amount, a decimal number
// of cents, computed exactly and rounded half away from zero, then held to the price's cap
// (capped reports that it was).
func meteredAmount(p *storage.ProductPrice, units float64) (amount int64, capped bool, err error) {
	if p.UnitAmount == nil {
		return 0, false, fmt.Errorf("metered price %s has no unit amount", p.ID)
	}
	amount, capped, err = pricing.Metered(*p.UnitAmount, units, p.CapAmount)
	if err != nil {
		return 0, false, fmt.Errorf("metered price %s: %v units at %q: %w", p.ID, units, *p.UnitAmount, err)
	}
	return amount, capped, nil
}

// RefreshSubscriptionMeters recounts the meters of up to limit live subscriptions whose
// counts are older than staleAfter (or were never made, or were zeroed by a new period), each
// in its own transaction, over their meter period up to the organization's now. It returns
// how many it recounted; fewer than limit means none is left (but for those a renewal held
// locked, which the next call picks up). orgID nil covers every
// organization. Safe to run concurrently and beside the renewal loop: a subscription being
// renewed is skipped and recounted at the next call.
func (r *Resolver) RefreshSubscriptionMeters(ctx context.Context, orgID *uuid.UUID, staleAfter time.Duration, limit int) (int, error) {
	ids, err := storage.StaleMeteredSubscriptions(ctx, r.db, orgID, staleAfter, limit)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, id := range ids {
		counted := false
		err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
			s, err := storage.ShareLiveSubscription(ctx, tx, id)
			if errors.Is(err, storage.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			counted = true
			return r.refreshSubscriptionMeters(ctx, tx, s)
		})
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("counting the meters of subscription %s: %w", id, err))
		case counted:
			n++
		}
	}
	return n, errors.Join(errs...)
}

// refreshSubscriptionMeters recounts and stores one subscription's meters over its meter
// period up to now (or the period end, when a renewal is still to come).
func (r *Resolver) refreshSubscriptionMeters(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription) error {
	now, err := r.clockFor(ctx, tx, s.OrganizationID)
	if err != nil {
		return err
	}
	from, end := meterPeriod(s)
	to := now
	if to.After(end) {
		to = end
	}
	prices, err := storage.SubscriptionPricesBySubscriptions(ctx, tx, []uuid.UUID{s.ID})
	if err != nil {
		return err
	}
	usage, err := measureMeters(ctx, tx, s, meteredPrices(prices[0]), from, to)
	if err != nil {
		return err
	}
	values := make([]storage.SubscriptionMeterValues, len(usage))
	for i, u := range usage {
		values[i] = u.SubscriptionMeterValues
	}
	return storage.SaveSubscriptionMeters(ctx, tx, s.OrganizationID, s.ID, values, now)
}

// meteredOrderItems bills a subscription's metered prices for the meter period that ends at
// end, one line per price with usage, labelled as upstream's: the meter's name, the units
// billed and the unit amount, and the cap when it applied. The meters are then zeroed for the
// period starting at end.
func (r *Resolver) meteredOrderItems(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription,
	prices []*storage.ProductPrice, end time.Time) ([]orderItemSpec, error) {
	from, _ := meterPeriod(s)
	usage, err := measureMeters(ctx, tx, s, meteredPrices(prices), from, end)
	if err != nil {
		return nil, err
	}
	var items []orderItemSpec
	for _, u := range usage {
		if u.ConsumedUnits <= 0 && u.Amount == 0 {
			continue
		}
		items = append(items, orderItemSpec{Label: meteredLabel(u), Amount: u.Amount, ProductPriceID: &u.Price.ID})
	}
	return items, storage.ResetSubscriptionMeters(ctx, tx, s.ID, end)
}

// meteredLabel spells a metered line as upstream's "API calls — (1,500 consumed units) ×
// $0.05", with " — Capped at $10.00" when the cap applied. The units shown are those billed
// (consumed less credited).
func meteredLabel(u meterUsage) string {
	units := max(0, u.ConsumedUnits-float64(u.CreditedUnits))
	label := fmt.Sprintf("%s — (%s consumed units) × %s", u.Meter.Name, groupThousands(units),
		formatCents(*u.Price.UnitAmount, u.Price.PriceCurrency, false))
	if u.Capped {
		label += " — Capped at " + formatCents(fmt.Sprint(*u.Price.CapAmount), u.Price.PriceCurrency, true)
	}
	return label
}

// groupThousands writes units with comma thousands separators and at most three decimals,
// as Babel's en_US decimal format.
func groupThousands(units float64) string {
	s := strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", units), "0"), ".")
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}

// formatCents writes a decimal number of cents in the currency's major unit: two decimals,
// more when the amount has them and exact is false (unit amounts go below a cent).
func formatCents(cents, currency string, exact bool) string {
	r, ok := new(big.Rat).SetString(cents)
	if !ok {
		return cents
	}
	r.Quo(r, big.NewRat(100, 1))
	s := r.FloatString(14)
	if whole, frac, found := strings.Cut(s, "."); found {
		frac = strings.TrimRight(frac, "0")
		if exact || len(frac) < 2 {
			frac = (frac + "00")[:2]
		}
		s = whole + "." + frac
	}
	switch strings.ToLower(currency) {
	case "usd":
		return "$" + s
	case "eur":
		return "€" + s
	case "gbp":
		return "£" + s
	}
	return strings.ToUpper(currency) + " " + s
}
