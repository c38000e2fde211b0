package resolvers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/payment"
	"till/storage"
)

// dunningRetries are the waits between a declined renewal charge and its retries, after each
// declined attempt in turn (like upstream's dunning). After the last retry is declined the
// subscription is unpaid and loses its benefits.
var dunningRetries = []time.Duration{2 * 24 * time.Hour, 4 * 24 * time.Hour, 7 * 24 * time.Hour}

// RenewDue runs the renewal work that is due at now, one subscription per transaction, and
// returns how many steps it ran (at most limit; fewer means nothing else is due). A step is
// one of: a period end (cancel at period end → canceled; pause at period end → paused;
// otherwise the pending change applies and a cycle order is created and charged to the saved
// payment method), or a due payment retry of a past_due subscription. A subscription many
// periods behind takes one step per period, each at the time it fell due.
//
// orgID nil is the background loop: every organization except those on a test clock (their
// time moves only through advanceTestClock, which passes its organization). Concurrent calls
// are safe: subscriptions are claimed with FOR UPDATE SKIP LOCKED and re-read under the lock,
// so one period is never cycled twice.
func (r *Resolver) RenewDue(ctx context.Context, orgID *uuid.UUID, now time.Time, limit int) (int, error) {
	n := 0
	// failed holds subscriptions whose step failed in this call: they are skipped so one
	// broken subscription never holds up the renewals behind it, and retried next call.
	var failed []uuid.UUID
	var errs []error
	for n < limit {
		var claimed uuid.UUID
		err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
			id, err := storage.ClaimDueSubscription(ctx, tx, orgID, now, failed)
			if errors.Is(err, storage.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			claimed = id
			rows, err := storage.SubscriptionsByIDs(ctx, tx, []uuid.UUID{id})
			if err != nil {
				return err
			}
			return r.renewStep(ctx, tx, rows[0], now)
		})
		if claimed == uuid.Nil {
			if err != nil {
				errs = append(errs, err)
			}
			break
		}
		if err != nil {
			failed = append(failed, claimed)
			errs = append(errs, fmt.Errorf("renewing subscription %s: %w", claimed, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// renewStep does what is due for one locked subscription, read after the lock was taken;
// when another worker got there first nothing is due any more and nothing happens.
func (r *Resolver) renewStep(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription, now time.Time) error {
	if s == nil {
		return nil
	}
	periodOver := !s.CurrentPeriodEnd.After(now)
	switch {
	case periodOver && (s.Status == storage.SubscriptionStatusTrialing || s.Status == storage.SubscriptionStatusActive || (s.Status == storage.SubscriptionStatusPastDue && s.CancelAtPeriodEnd)):
		return r.endPeriod(ctx, tx, s, now)
	case s.Status == storage.SubscriptionStatusPastDue:
		return r.retryRenewal(ctx, tx, s, now)
	}
	return nil
}

// endPeriod handles the end of the current period, at the time it ended.
func (r *Resolver) endPeriod(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription, now time.Time) error {
	at := s.CurrentPeriodEnd
	switch {
	case s.CancelAtPeriodEnd:
		if err := r.billFinalUsage(ctx, tx, s, at); err != nil {
			return err
		}
		_, err := r.endSubscription(ctx, tx, s, at, now, nil, nil)
		return err
	case s.PauseAtPeriodEnd:
		out, err := r.stopSubscription(ctx, tx, s, now, storage.SubscriptionUpdate{Status: storage.Set(storage.SubscriptionStatusPaused),
			PausedAt: storage.Set(&at), PauseAtPeriodEnd: storage.Set(false)})
		if err != nil {
			return err
		}
		return r.emitSubscription(ctx, tx, out, "subscription.updated", "subscription.paused")
	}
	u, err := storage.OpenPendingUpdate(ctx, tx, s.ID)
	switch {
	case err == nil && !u.AppliesAt.After(now):
		if s, err = r.applyPendingUpdate(ctx, tx, s, u, now); err != nil {
			return err
		}
	case err != nil && !errors.Is(err, storage.ErrNotFound):
		return err
	}
	_, err = r.cycleSubscription(ctx, tx, s, at, now)
	return err
}

// cycleSubscription starts a new period at start: a subscription_cycle order for it, charged
// to the saved payment method with an idempotency key of the subscription and the period
// start (a repeated attempt never charges twice). Paid: the subscription is active. Declined:
// it is past_due and the order's payment is retried per dunningRetries. Emits
// subscription.updated and subscription.cycled (and subscription.past_due).
func (r *Resolver) cycleSubscription(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription, start, now time.Time) (*storage.Subscription, error) {
	end := subscriptionPeriodEnd(subscriptionOrigin(s), start, s.RecurringInterval, s.RecurringIntervalCount)
	u := storage.SubscriptionUpdate{CurrentPeriodStart: storage.Set(start), CurrentPeriodEnd: storage.Set(end)}
	if s.CurrentMeterPeriodStart != nil {
		u.CurrentMeterPeriodStart, u.CurrentMeterPeriodEnd = storage.Set(start), storage.Set(end)
	}
	order, err := r.createCycleOrder(ctx, tx, s, start)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("subscription:%s:period:%s", s.ID, start.UTC().Format(time.RFC3339Nano))
	charged, err := r.chargeRenewal(ctx, tx, s, order, key, start)
	if err != nil {
		return nil, err
	}
	events := []string{"subscription.updated", "subscription.cycled"}
	if charged != renewalFailed { // paid, or a bank debit the processor settles later
		u.Status, u.PastDueAt = storage.Set(storage.SubscriptionStatusActive), storage.Set[*time.Time](nil)
	} else {
		u.Status, u.PastDueAt = storage.Set(storage.SubscriptionStatusPastDue), storage.Set(&start)
		events = append(events, "subscription.past_due")
		if err := r.scheduleOrderPayment(ctx, tx, order.ID, renewalPtr(start.Add(dunningRetries[0]))); err != nil {
			return nil, err
		}
	}
	out, err := storage.UpdateSubscription(ctx, tx, s.ID, now, u)
	if err != nil {
		return nil, err
	}
	return out, r.emitSubscription(ctx, tx, out, events...)
}

// retryRenewal retries the unpaid order of a past_due subscription when its retry is due.
// Paid: the subscription is active again. Declined: the next retry is scheduled, or after the
// last one the subscription is unpaid, its benefits revoked. While the customer retries the
// payment from the portal (the order's payment lock), dunning waits: both could charge.
func (r *Resolver) retryRenewal(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription, now time.Time) error {
	o, err := storage.LatestUnpaidOrder(ctx, tx, s.ID, now)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.NextPaymentAttemptAt == nil || o.NextPaymentAttemptAt.After(now) || o.PaymentLocked {
		return nil
	}
	at := *o.NextPaymentAttemptAt
	key := fmt.Sprintf("subscription:%s:period:%s:retry:%d", s.ID, s.CurrentPeriodStart.UTC().Format(time.RFC3339Nano), o.FailedAttempts)
	charged, err := r.chargeRenewal(ctx, tx, s, &storage.Order{ID: o.ID, DueAmount: o.DueAmount, Currency: o.Currency}, key, at)
	if err != nil {
		return err
	}
	switch charged {
	case renewalPaid:
		return r.reactivateSubscription(ctx, tx, s, now, nil)
	case renewalSettling:
		// No retry while the debit settles: its event pays the order or resumes dunning.
		return r.scheduleOrderPayment(ctx, tx, o.ID, nil)
	}
	return r.nextDunningStep(ctx, tx, s, o.ID, o.FailedAttempts+1, at, now)
}

// nextDunningStep follows the failed-th declined attempt (at `at`) to pay a subscription's
// order: the next retry on the dunning schedule, or after the last one the subscription
// unpaid, its benefits revoked.
func (r *Resolver) nextDunningStep(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription, orderID uuid.UUID, failed int,
	at, now time.Time) error {
	if failed <= len(dunningRetries) {
		return r.scheduleOrderPayment(ctx, tx, orderID, renewalPtr(at.Add(dunningRetries[failed-1])))
	}
	out, err := r.stopSubscription(ctx, tx, s, now, storage.SubscriptionUpdate{Status: storage.Set(storage.SubscriptionStatusUnpaid),
		EndedAt: storage.Set(at), EndsAt: storage.Set(&at)})
	if err != nil {
		return err
	}
	return r.emitSubscription(ctx, tx, out, "subscription.updated", "subscription.revoked")
}

// createCycleOrder creates the pending subscription_cycle order of the period starting at
// start: one line for the subscription's amount, less its discount when it still applies,
// and one per metered price for its usage in the meter period that ends at start.
func (r *Resolver) createCycleOrder(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription, start time.Time) (*storage.Order, error) {
	products, err := storage.ProductsByIDs(ctx, tx, []uuid.UUID{s.ProductID})
	if err != nil {
		return nil, err
	}
	label := "Subscription"
	if products[0] != nil {
		label = products[0].Name
	}
	prices, err := storage.SubscriptionPricesBySubscriptions(ctx, tx, []uuid.UUID{s.ID})
	if err != nil {
		return nil, err
	}
	var priceID *uuid.UUID
	for _, p := range prices[0] {
		if p.AmountType != storage.AmountTypeMeteredUnit {
			priceID = &p.ID
			break
		}
	}
	discount, err := r.renewalDiscount(ctx, tx, s, start)
	if err != nil {
		return nil, err
	}
	metered, err := r.meteredOrderItems(ctx, tx, s, prices[0], start)
	if err != nil {
		return nil, err
	}
	spec := orderSpec{OrganizationID: s.OrganizationID, CustomerID: s.CustomerID, ProductID: &s.ProductID,
		SubscriptionID: &s.ID, BillingReason: storage.OrderBillingReasonSubscriptionCycle, Status: storage.OrderStatusPending, Currency: s.Currency,
		Items: append([]orderItemSpec{{Label: label, Amount: s.Amount, ProductPriceID: priceID}}, metered...),
		Seats: s.Seats, Description: label}
	if discount > 0 {
		spec.DiscountID, spec.DiscountAmount = s.DiscountID, discount
	}
	return r.createOrder(ctx, tx, spec)
}

// billFinalUsage bills the metered usage of the period ending at end when the subscription
// ends with it (canceled at period end), as upstream does: no renewal order follows, so
// without this last order the period's usage would never be billed. The order holds only
// the metered lines and is charged like a renewal; a decline leaves it pending, its payment
// retried on the renewal schedule.
func (r *Resolver) billFinalUsage(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription, end time.Time) error {
	prices, err := storage.SubscriptionPricesBySubscriptions(ctx, tx, []uuid.UUID{s.ID})
	if err != nil {
		return err
	}
	items, err := r.meteredOrderItems(ctx, tx, s, prices[0], end)
	if err != nil || len(items) == 0 {
		return err
	}
	order, err := r.createOrder(ctx, tx, orderSpec{OrganizationID: s.OrganizationID, CustomerID: s.CustomerID,
		ProductID: &s.ProductID, SubscriptionID: &s.ID, BillingReason: storage.OrderBillingReasonSubscriptionCycle, Status: storage.OrderStatusPending,
		Currency: s.Currency, Items: items, Seats: s.Seats, Description: "Final usage"})
	if err != nil {
		return err
	}
	key := fmt.Sprintf("subscription:%s:final-usage:%s", s.ID, end.UTC().Format(time.RFC3339Nano))
	charged, err := r.chargeRenewal(ctx, tx, s, order, key, end)
	if err != nil || charged != renewalFailed {
		return err
	}
	return r.scheduleOrderPayment(ctx, tx, order.ID, renewalPtr(end.Add(dunningRetries[0])))
}

// renewalDiscount is what the subscription's discount takes off a renewal starting at start:
// once-discounts applied to the first order only, repeating ones apply for duration_in_months
// from the start of the subscription, forever ones always. Percentages round half up; fixed
// amounts apply in their currency (or the amounts map) and never exceed the amount.
func (r *Resolver) renewalDiscount(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription, start time.Time) (int64, error) {
	if s.DiscountID == nil || s.Amount == 0 {
		return 0, nil
	}
	rows, err := storage.DiscountsByIDs(ctx, tx, []uuid.UUID{*s.DiscountID})
	if err != nil || rows[0] == nil {
		return 0, err
	}
	d := rows[0]
	switch d.Duration {
	case storage.DiscountDurationOnce:
		return 0, nil
	case storage.DiscountDurationRepeating:
		if d.DurationInMonths == nil || s.StartedAt == nil || !start.Before(s.StartedAt.AddDate(0, *d.DurationInMonths, 0)) {
			return 0, nil
		}
	}
	if d.Type == storage.DiscountTypeFixed && (d.Currency == nil || *d.Currency != s.Currency) {
		return 0, nil
	}
	return discountAmount(d, s.Amount), nil
}

// renewalCharge is how a renewal charge ended.
type renewalCharge int

const (
	renewalFailed   renewalCharge = iota // declined, or nothing to charge: dunning follows
	renewalPaid                          // the order is paid
	renewalSettling                      // a bank debit is processing: the processor's event settles the order
)

// chargeRenewal charges an order's due amount to the subscription's payment method (its own,
// else the customer's default; storage.ChargeableMethod decides) and records the attempt as
// made at `at`, the time it fell due. It reports whether the order is paid (then marked
// paid) or settles later (a bank debit, whose attempt stays pending with its intent until
// the processor's event settles it, see settleOrderIntent); a decline, a card whose issuer
// wants the holder to authenticate (nobody is there to do so off session), or no payment
// method at all, is a failed attempt, not an error, and dunning follows. A processor fault
// is an error and rolls the step back.
func (r *Resolver) chargeRenewal(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription, o *storage.Order, key string,
	at time.Time) (renewalCharge, error) {
	attempt := storage.ChargeAttempt{OrganizationID: s.OrganizationID, CustomerID: s.CustomerID, OrderID: o.ID,
		Processor: r.payments.Name(), Amount: o.DueAmount, Currency: o.Currency, Status: "succeeded"}
	if o.DueAmount > 0 {
		method, err := storage.ChargeableMethod(ctx, tx, s)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			attempt.Status = "failed"
			attempt.DeclineReason, attempt.DeclineMessage = renewalPtr("no_payment_method"), renewalPtr("The customer has no payment method.")
		case err != nil:
			return renewalFailed, err
		default:
			attempt.PaymentMethodID = &method.ID
			ch, err := r.payments.Charge(ctx, chargeRequest(method, o.DueAmount, o.Currency, key, "Subscription renewal"))
			var decline *payment.DeclineError
			var action *payment.ActionRequiredError
			switch {
			case errors.As(err, &decline):
				attempt.Status = "failed"
				attempt.DeclineReason, attempt.DeclineMessage = &decline.DeclineCode, &decline.Message
			case errors.As(err, &action):
				// The intent stays open at the processor: should the holder complete it
				// after all, its outcome settles the order (settleOrderIntent).
				attempt.Status, attempt.IntentID = "failed", &action.PaymentIntentID
				attempt.DeclineReason = renewalPtr("authentication_required")
				attempt.DeclineMessage = renewalPtr("The card issuer requires the customer to authenticate this payment.")
			case err != nil:
				return renewalFailed, err
			case ch.Processing:
				attempt.Status, attempt.IntentID = "pending", &ch.IntentID
			default:
				attempt.ProcessorID = &ch.ID
			}
		}
		if err := storage.RecordChargeAttempt(ctx, tx, at, attempt); err != nil {
			return renewalFailed, err
		}
	}
	switch attempt.Status {
	case "pending":
		return renewalSettling, nil
	case "succeeded":
		_, err := r.markOrderPaid(ctx, tx, o.ID)
		return renewalPaid, err
	}
	return renewalFailed, nil
}

// renewalPtr points at a copy of v, for optional fields.
func renewalPtr[T any](v T) *T { return &v }
