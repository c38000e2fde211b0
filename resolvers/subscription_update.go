package resolvers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// subscriptionTarget is what a product or seat change turns a subscription into.
type subscriptionTarget struct {
	product *storage.Product
	prices  []*storage.ProductPrice
	seats   *int
	amount  int64
}

// updateSubscriptionProduct moves a subscription to another recurring product of its
// organization, keeping its seat count when the new product is seat-based. With proration
// next_period the change waits in pendingUpdate for the next renewal; otherwise it applies
// now and the new amount is billed from the next renewal on.
func (r *Resolver) updateSubscriptionProduct(ctx context.Context, in model.SubscriptionProductChangeInput) (*storage.Subscription, error) {
	return r.changeSubscription(ctx, in.ID, func(tx *sqlx.Tx, s *storage.Subscription, now time.Time) (*storage.Subscription, error) {
		org, err := checkChangeable(ctx, tx, s, "update_plan")
		if err != nil {
			return nil, err
		}
		invalid := func(msg string) error {
			return Invalid("value_error", msg, in.ProductID.String(), "input", "productId")
		}
		p, err := storage.GetProduct(ctx, tx, []uuid.UUID{s.OrganizationID}, in.ProductID)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			return nil, invalid("Product does not exist.")
		case err != nil:
			return nil, err
		case !p.IsRecurring():
			return nil, invalid("Product is not recurring.")
		case p.IsArchived:
			return nil, invalid("Product is archived.")
		case p.ID == s.ProductID:
			return nil, invalid("The subscription is already on this product.")
		}
		target, err := r.productTarget(ctx, tx, s, p, s.Seats)
		if err != nil {
			return nil, err
		}
		return r.applyOrSchedule(ctx, tx, s, org, now, in.ProrationBehavior, target,
			storage.PendingSubscriptionUpdate{ProductID: &p.ID, Seats: target.seats})
	})
}

// updateSubscriptionSeats changes the seat count of a seat-based subscription, within its
// price's tiers and not below the seats already assigned; timing as for products.
func (r *Resolver) updateSubscriptionSeats(ctx context.Context, in model.SubscriptionSeatsChangeInput) (*storage.Subscription, error) {
	return r.changeSubscription(ctx, in.ID, func(tx *sqlx.Tx, s *storage.Subscription, now time.Time) (*storage.Subscription, error) {
		org, err := checkChangeable(ctx, tx, s, "update_seats")
		if err != nil {
			return nil, err
		}
		priceLists, err := storage.SubscriptionPricesBySubscriptions(ctx, tx, []uuid.UUID{s.ID})
		if err != nil {
			return nil, err
		}
		seatPrice, tiers, err := subscriptionSeatPrice(priceLists[0])
		if err != nil {
			return nil, err
		}
		if seatPrice == nil {
			return nil, BadRequest("This subscription is not seat-based.")
		}
		if err := checkSeatCap(in.Seats); err != nil {
			return nil, err
		}
		lo, hi := tiers.Bounds()
		if in.Seats < lo || (hi != nil && in.Seats > *hi) {
			msg := fmt.Sprintf("Seats must be at least %d.", lo)
			if hi != nil {
				msg = fmt.Sprintf("Seats must be between %d and %d.", lo, *hi)
			}
			return nil, Invalid("value_error", msg, in.Seats, "input", "seats")
		}
		if s.Seats != nil && *s.Seats == in.Seats {
			return nil, Invalid("value_error", fmt.Sprintf("The subscription already has %d seats.", in.Seats), in.Seats, "input", "seats")
		}
		inUse, err := storage.SeatsInUse(ctx, tx, s.ID)
		if err != nil {
			return nil, err
		}
		if in.Seats < inUse {
			return nil, Invalid("value_error", fmt.Sprintf("Seats cannot be fewer than the %d seats already assigned.", inUse),
				in.Seats, "input", "seats")
		}
		seats := in.Seats
		amount, err := subscriptionAmount(priceLists[0], &seats)
		if err != nil {
			return nil, err
		}
		target := subscriptionTarget{prices: priceLists[0], seats: &seats, amount: amount}
		return r.applyOrSchedule(ctx, tx, s, org, now, in.ProrationBehavior, target,
			storage.PendingSubscriptionUpdate{Seats: &seats})
	})
}

// checkChangeable is the check plan and seat changes both start with: the subscription can
// be changed and, from the portal, its organization allows the change (setting, see
// portalMayChange). It returns the organization, whose proration behavior the change follows.
func checkChangeable(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription, setting string) (*storage.Organization, error) {
	if err := subscriptionChangeable(s); err != nil {
		return nil, err
	}
	org, err := storage.GetOrganization(ctx, tx, s.OrganizationID)
	if err != nil {
		return nil, err
	}
	if err := portalMayChange(ctx, org, setting); err != nil {
		return nil, err
	}
	return org, nil
}

// subscriptionChangeable refuses changes of subscriptions that ended, will end, are paused
// or wait for a payment.
func subscriptionChangeable(s *storage.Subscription) error {
	switch {
	case subscriptionEnded[s.Status] || s.CancelAtPeriodEnd:
		return errSubscriptionEnded()
	case s.Status == storage.SubscriptionStatusPastDue:
		return BadRequest("A past due subscription cannot be changed until its payment succeeds.")
	case s.Status != storage.SubscriptionStatusActive && s.Status != storage.SubscriptionStatusTrialing:
		return BadRequest(fmt.Sprintf("A %s subscription cannot be changed.", s.Status))
	}
	return nil
}

// portalMayChange applies the organization's portal settings to customers: changes need
// allow_customer_updates and the setting named (update_plan, update_seats).
func portalMayChange(ctx context.Context, org *storage.Organization, setting string) error {
	if k := auth.FromContext(ctx).Kind; k != auth.KindCustomerSession && k != auth.KindMemberSession {
		return nil
	}
	var settings struct {
		Subscription map[string]bool `json:"subscription"`
	}
	_ = json.Unmarshal(org.CustomerPortalSettings, &settings)
	if !org.AllowCustomerUpdates || !settings.Subscription[setting] {
		return NotPermitted("The organization does not allow this change from the customer portal.")
	}
	return nil
}

// productTarget prices a subscription on a new product: its live prices in the
// subscription's currency, and the seats kept (or the tiers' minimum) when it is seat-based.
func (r *Resolver) productTarget(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription, p *storage.Product,
	seats *int) (subscriptionTarget, error) {
	lists, err := storage.PricesByProducts(ctx, tx, []uuid.UUID{p.ID})
	if err != nil {
		return subscriptionTarget{}, err
	}
	var prices []*storage.ProductPrice
	for _, pr := range lists[0] {
		if pr.PriceCurrency == s.Currency {
			prices = append(prices, pr)
		}
	}
	if len(prices) == 0 {
		return subscriptionTarget{}, Invalid("value_error", "Product has no price in the subscription's currency.",
			p.ID.String(), "input", "productId")
	}
	seatPrice, tiers, err := subscriptionSeatPrice(prices)
	if err != nil {
		return subscriptionTarget{}, err
	}
	if seatPrice == nil {
		seats = nil
	} else {
		lo, hi := tiers.Bounds()
		n := lo
		if seats != nil {
			n = *seats
		}
		if err := checkSeatCap(n); err != nil {
			return subscriptionTarget{}, err
		}
		if n < lo || (hi != nil && n > *hi) {
			return subscriptionTarget{}, Invalid("value_error",
				fmt.Sprintf("The subscription's %d seats are outside the product's seat tiers.", n), p.ID.String(), "input", "productId")
		}
		seats = &n
	}
	amount, err := subscriptionAmount(prices, seats)
	if err != nil {
		return subscriptionTarget{}, err
	}
	return subscriptionTarget{product: p, prices: prices, seats: seats, amount: amount}, nil
}

// applyOrSchedule stores the change as the open pending update (next_period) or applies it
// now. Either way it emits subscription.updated.
func (r *Resolver) applyOrSchedule(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription, org *storage.Organization,
	now time.Time, behavior *model.SubscriptionProrationBehavior, target subscriptionTarget,
	pending storage.PendingSubscriptionUpdate) (*storage.Subscription, error) {
	when := org.ProrationBehavior
	if behavior != nil {
		when = string(*behavior)
	}
	if when == "next_period" {
		pending.OrganizationID, pending.SubscriptionID, pending.ProrationBehavior = s.OrganizationID, s.ID, &when
		pending.AppliesAt = s.CurrentPeriodEnd
		if _, err := storage.SchedulePendingUpdate(ctx, tx, now, pending); err != nil {
			return nil, err
		}
		out, err := storage.UpdateSubscription(ctx, tx, s.ID, now, storage.SubscriptionUpdate{})
		if err != nil {
			return nil, err
		}
		return out, r.emitSubscription(ctx, tx, out, "subscription.updated")
	}
	if _, err := storage.CancelPendingUpdate(ctx, tx, s.ID, now); err != nil {
		return nil, err
	}
	return r.applySubscriptionTarget(ctx, tx, s, now, target)
}

// applySubscriptionTarget writes a product or seat change: product, interval, prices, seats
// and amount; a new product's benefits replace the old one's. It emits subscription.updated.
func (r *Resolver) applySubscriptionTarget(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription, now time.Time,
	target subscriptionTarget) (*storage.Subscription, error) {
	u := storage.SubscriptionUpdate{Seats: storage.Set(target.seats), Amount: storage.Set(target.amount)}
	if target.product != nil {
		u.ProductID = storage.Set(target.product.ID)
		u.RecurringInterval = storage.Set(*target.product.RecurringInterval)
		u.RecurringIntervalCount = storage.Set(1)
		if target.product.RecurringIntervalCount != nil {
			u.RecurringIntervalCount = storage.Set(*target.product.RecurringIntervalCount)
		}
		ids := make([]uuid.UUID, len(target.prices))
		for i, p := range target.prices {
			ids[i] = p.ID
		}
		if err := storage.SetSubscriptionPrices(ctx, tx, s.OrganizationID, s.ID, ids); err != nil {
			return nil, err
		}
	}
	out, err := storage.UpdateSubscription(ctx, tx, s.ID, now, u)
	if err != nil {
		return nil, err
	}
	if target.product != nil {
		if err := r.revokeBenefits(ctx, tx, subscriptionGrantScope(s, s.ProductID)); err != nil {
			return nil, err
		}
		if err := r.grantBenefits(ctx, tx, subscriptionGrantScope(out, out.ProductID)); err != nil {
			return nil, err
		}
	}
	return out, r.emitSubscription(ctx, tx, out, "subscription.updated")
}

// applyPendingUpdate applies the open change of a subscription at its renewal. A product
// that can no longer be sold (archived, no price) drops the change instead of failing the
// renewal.
func (r *Resolver) applyPendingUpdate(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription,
	u *storage.PendingSubscriptionUpdate, now time.Time) (*storage.Subscription, error) {
	if err := storage.MarkPendingUpdateApplied(ctx, tx, u.ID, now); err != nil {
		return nil, err
	}
	var target subscriptionTarget
	var err error
	if u.ProductID != nil {
		p, perr := storage.GetProduct(ctx, tx, []uuid.UUID{s.OrganizationID}, *u.ProductID)
		if perr != nil {
			return nil, perr
		}
		if p.IsArchived {
			return s, nil
		}
		target, err = r.productTarget(ctx, tx, s, p, u.Seats)
	} else {
		lists, lerr := storage.SubscriptionPricesBySubscriptions(ctx, tx, []uuid.UUID{s.ID})
		if lerr != nil {
			return nil, lerr
		}
		target.prices, target.seats = lists[0], u.Seats
		target.amount, err = subscriptionAmount(lists[0], u.Seats)
	}
	var re *Error
	if errors.As(err, &re) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	return r.applySubscriptionTarget(ctx, tx, s, now, target)
}
