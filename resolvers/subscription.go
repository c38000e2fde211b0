package resolvers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/pricing"
	"till/storage"
)

// The subscription lifecycle (tested transition by transition in
// subscription_lifecycle_test.go and renewal_test.go):
//
//	create ──► trialing ──(trial end, charged)──► active ◄──(retry paid)── past_due
//	create ──► active ──(period end, charged)──► active
//	                  ──(period end, declined)──► past_due ──(last retry declined)──► unpaid
//	active/trialing/past_due ──cancel──► cancel_at_period_end ──(period end)──► canceled
//	active/trialing ──pause──► pause_at_period_end ──(period end)──► paused ──resume──► active
//	paused ──cancel──► canceled (at once: no period is running)
//	any live status ──revoke──► canceled (at once)
//
// Every use case runs in one transaction that locks the subscription row, reads the time
// from the organization's clock (a test clock when one is set) and records its domain events
// in the same transaction.

// subscriptionEnded lists the statuses a subscription never leaves.
var subscriptionEnded = map[storage.SubscriptionStatus]bool{storage.SubscriptionStatusCanceled: true,
	storage.SubscriptionStatusUnpaid: true, storage.SubscriptionStatusIncompleteExpired: true}

// createSubscription stores a subscription for a recurring product inside the caller's
// transaction: trialing until spec.TrialEnd (when it lies ahead) or active for its first
// period, the meter period following the billing period when a price is metered. It grants
// the product's benefits for the subscription and emits subscription.created and
// subscription.active (a trial counts as started).
func (r *Resolver) createSubscription(ctx context.Context, tx *sqlx.Tx, spec subscriptionSpec) (*storage.Subscription, error) {
	p := spec.Product
	if p == nil || p.RecurringInterval == nil {
		return nil, BadRequest("Only recurring products can be subscribed to.")
	}
	now, err := r.clockFor(ctx, tx, spec.OrganizationID)
	if err != nil {
		return nil, err
	}
	count := 1
	if p.RecurringIntervalCount != nil {
		count = *p.RecurringIntervalCount
	}
	w := storage.SubscriptionWrite{CustomerID: spec.CustomerID, ProductID: p.ID, DiscountID: spec.DiscountID,
		CheckoutID: spec.CheckoutID, PaymentMethodID: spec.PaymentMethodID, Status: storage.SubscriptionStatusActive, Amount: spec.Amount,
		Currency: spec.Currency, RecurringInterval: *p.RecurringInterval, RecurringIntervalCount: count,
		CurrentPeriodStart: now, CurrentPeriodEnd: subscriptionPeriodEnd(now, now, *p.RecurringInterval, count),
		StartedAt: &now, Seats: spec.Seats, CustomFieldData: spec.CustomFieldData, Metadata: spec.Metadata}
	if spec.TrialEnd != nil && spec.TrialEnd.After(now) {
		trialEnd := spec.TrialEnd.UTC()
		w.Status, w.TrialStart, w.TrialEnd, w.CurrentPeriodEnd = storage.SubscriptionStatusTrialing, &now, &trialEnd, trialEnd
	}
	priceIDs := make([]uuid.UUID, len(spec.Prices))
	for i, pr := range spec.Prices {
		priceIDs[i] = pr.ID
		if pr.AmountType == storage.AmountTypeMeteredUnit {
			w.CurrentMeterPeriodStart, w.CurrentMeterPeriodEnd = &w.CurrentPeriodStart, &w.CurrentPeriodEnd
		}
	}
	s, err := storage.CreateSubscription(ctx, tx, spec.OrganizationID, now, w)
	if err != nil {
		return nil, err
	}
	if err := storage.SetSubscriptionPrices(ctx, tx, spec.OrganizationID, s.ID, priceIDs); err != nil {
		return nil, err
	}
	if err := r.grantBenefits(ctx, tx, subscriptionGrantScope(s, s.ProductID)); err != nil {
		return nil, err
	}
	return s, r.emitSubscription(ctx, tx, s, "subscription.created", "subscription.active")
}

// subscriptionGrantScope is the benefit scope of a subscription for one of its products.
func subscriptionGrantScope(s *storage.Subscription, productID uuid.UUID) grantScope {
	return grantScope{OrganizationID: s.OrganizationID, CustomerID: s.CustomerID, ProductID: productID,
		SubscriptionID: &s.ID}
}

// emitSubscription records events about a subscription in the caller's transaction.
func (r *Resolver) emitSubscription(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription, types ...string) error {
	for _, t := range types {
		if err := r.emit(ctx, tx, s.OrganizationID, t, s.ID); err != nil {
			return err
		}
	}
	return nil
}

// clockFor is the time of an organization's subscription use cases: its test clock when it
// has one (test mode only), the server clock otherwise.
func (r *Resolver) clockFor(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID) (time.Time, error) {
	c, err := storage.GetTestClock(ctx, q, orgID)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return r.Now().UTC(), nil
	case err != nil:
		return time.Time{}, err
	}
	return c.FrozenAt.UTC(), nil
}

// subscriptionPeriodEnd is the end of a billing period that starts at start. Days and weeks
// are added as such. Months and years keep the billing day of the month and clamp it to the
// month's length as upstream (and its processor) do: a subscription started on January 31
// renews on February 28 (29 in leap years), then on March 31. The billing day is the start's
// day, unless the start is the last day of a month, where a clamp may have shortened it:
// then the day of origin (trial end or start of the subscription) is used when it is later.
func subscriptionPeriodEnd(origin, start time.Time, interval storage.Interval, count int) time.Time {
	start, origin = start.UTC(), origin.UTC()
	months := count
	switch interval {
	case storage.IntervalDay:
		return start.AddDate(0, 0, count)
	case storage.IntervalWeek:
		return start.AddDate(0, 0, 7*count)
	case storage.IntervalYear:
		months = 12 * count
	}
	day := start.Day()
	if start.AddDate(0, 0, 1).Day() == 1 && origin.Day() > day {
		day = origin.Day()
	}
	first := time.Date(start.Year(), start.Month()+time.Month(months), 1,
		start.Hour(), start.Minute(), start.Second(), start.Nanosecond(), time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(day, last)-1)
}

// subscriptionOrigin is the day billing started from: the trial end for trialed
// subscriptions, the start otherwise.
func subscriptionOrigin(s *storage.Subscription) time.Time {
	switch {
	case s.TrialEnd != nil:
		return *s.TrialEnd
	case s.StartedAt != nil:
		return *s.StartedAt
	}
	return s.CurrentPeriodStart
}

// subscriptionSeatPrice returns the seat-based price among prices and its tiers, or nil.
func subscriptionSeatPrice(prices []*storage.ProductPrice) (*storage.ProductPrice, pricing.SeatTiers, error) {
	for _, p := range prices {
		if p.AmountType == storage.AmountTypeSeatBased {
			tiers, err := pricing.ParseSeatTiers(p.SeatTiers)
			if err != nil {
				return nil, tiers, fmt.Errorf("price %s: seat tiers: %w", p.ID, err)
			}
			return p, tiers, nil
		}
	}
	return nil, pricing.SeatTiers{}, nil
}

// subscriptionAmount is the recurring amount of prices for a seat count: fixed prices at
// their amount, custom prices at their preset (or minimum), seat-based prices at what the
// seats cost under their tiers (volume or graduated, as a checkout prices them); free and
// metered prices add nothing (usage is billed apart).
func subscriptionAmount(prices []*storage.ProductPrice, seats *int) (int64, error) {
	var total int64
	for _, p := range prices {
		switch p.AmountType {
		case storage.AmountTypeFixed:
			total += centsOrZero(p.PriceAmount)
		case storage.AmountTypeCustom:
			if p.PresetAmount != nil {
				total += *p.PresetAmount
			} else {
				total += centsOrZero(p.MinimumAmount)
			}
		case storage.AmountTypeSeatBased:
			tiers, err := pricing.ParseSeatTiers(p.SeatTiers)
			if err != nil {
				return 0, fmt.Errorf("price %s: seat tiers: %w", p.ID, err)
			}
			n := 1
			if seats != nil {
				n = *seats
			}
			amount, ok := tiers.Amount(n)
			if !ok {
				return 0, BadRequest(fmt.Sprintf("No price tier covers %d seats.", n))
			}
			total += amount
		}
	}
	return total, nil
}

// centsOrZero reads an optional amount, zero when unset.
func centsOrZero(v *int64) int64 {
	if v == nil {
		return 0
	}
	return *v
}
