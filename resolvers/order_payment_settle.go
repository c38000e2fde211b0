package resolvers

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/payment"
	"till/storage"
)

// settleOrderIntent applies the final outcome of a payment intent that paid (or failed to pay) a pending order; handled is false when no pending order waits for that intent.
//
// The intent was recorded with the payment that waited on it: a renewal the card issuer
// wanted the holder to authenticate, or a retry from the portal that answered
// requires_action. Succeeded: the payment takes the charge and the order is paid as a
// successful dunning retry pays it (see orderPaidByRetry). Failed: the payment takes the
// decline and the manual retry lock is released; the order stays pending and its
// subscription past_due, and dunning goes on as scheduled, since the attempt was counted
// (a renewal) or is not dunning's (a manual retry). Once the order is paid no pending
// order waits any more, so a repeated outcome changes nothing and emits nothing.
func (r *Resolver) settleOrderIntent(ctx context.Context, tx *sqlx.Tx, processor string, in payment.IntentOutcome) (handled bool, err error) {
	p, err := storage.PaymentOfIntent(ctx, tx, processor, in.IntentID)
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	now, err := r.clockFor(ctx, tx, p.OrganizationID)
	if err != nil {
		return false, err
	}
	o, s, err := r.lockOrderPayment(ctx, tx, storage.OrderPaymentKey{ID: p.OrderID}, p.SubscriptionID, now)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && o.Status != storage.OrderStatusPending) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !in.Succeeded {
		out := storage.PaymentOutcome{Status: "failed", DeclineReason: &in.DeclineCode, DeclineMessage: &in.Message}
		if in.DeclineCode == "" {
			out.DeclineReason = nil
		}
		if in.Message == "" {
			out.DeclineMessage = nil
		}
		if err := storage.SettlePayment(ctx, tx, p.PaymentID, now, out); err != nil {
			return false, err
		}
		if err := storage.SetOrderPaymentLock(ctx, tx, o.ID, nil); err != nil {
			return false, err
		}
		if s != nil && p.Status == "pending" && o.NextPaymentAttemptAt == nil {
			return true, r.bankDebitFailed(ctx, tx, s, o.ID, now)
		}
		return true, nil
	}
	charge := in.ChargeID
	if charge == "" {
		charge = in.IntentID // as payment.StripeProcessor names a payment Stripe reports no charge for
	}
	if err := storage.SettlePayment(ctx, tx, p.PaymentID, now, storage.PaymentOutcome{Status: "succeeded", ProcessorID: &charge}); err != nil {
		return false, err
	}
	return true, r.orderPaidByRetry(ctx, tx, o.ID, s, now, p.PaymentMethodID)
}

// lockOrderPayment locks the subscription of an order, when it has one, then the order: the
// order in which renewals lock them, so a payment and a renewal of one subscription take
// turns instead of deadlocking. subscriptionID is the order's as read before the locks.
func (r *Resolver) lockOrderPayment(ctx context.Context, tx *sqlx.Tx, k storage.OrderPaymentKey, subscriptionID *uuid.UUID,
	now time.Time) (*storage.OrderPayment, *storage.Subscription, error) {
	var s *storage.Subscription
	if subscriptionID != nil {
		rows, err := storage.SubscriptionsByIDs(ctx, tx, []uuid.UUID{*subscriptionID})
		if err != nil {
			return nil, nil, err
		}
		if rows[0] != nil {
			if s, err = storage.LockSubscription(ctx, tx, []uuid.UUID{rows[0].OrganizationID}, nil, rows[0].ID); err != nil {
				return nil, nil, err
			}
		}
	}
	o, err := storage.LockOrderPayment(ctx, tx, k, now)
	return o, s, err
}

// orderPaidByRetry pays a pending order as a successful dunning retry does: the order is
// paid (order.updated, order.paid) and its subscription, past_due while dunning waited on
// the order, is active again once no other order of it is dunned (subscription.updated,
// subscription.active). method, when set, becomes the subscription's payment method, as
// upstream keeps the card a retry paid with for the renewals to come. s is the order's
// subscription, locked by the caller; nil when it has none.
func (r *Resolver) orderPaidByRetry(ctx context.Context, tx *sqlx.Tx, orderID uuid.UUID, s *storage.Subscription, now time.Time,
	method *uuid.UUID) error {
	if _, err := r.markOrderPaid(ctx, tx, orderID); err != nil {
		return err
	}
	if s == nil {
		return nil
	}
	return r.reactivateSubscription(ctx, tx, s, now, method)
}

// reactivateSubscription is the subscription side of a paid dunning order (see
// orderPaidByRetry). A payment method change alone announces nothing: no payload shows it.
func (r *Resolver) reactivateSubscription(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription, now time.Time,
	method *uuid.UUID) error {
	var u storage.SubscriptionUpdate
	var events []string
	if s.Status == storage.SubscriptionStatusPastDue {
		n, err := storage.CountDunningOrders(ctx, tx, s.ID)
		if err != nil {
			return err
		}
		if n == 0 {
			u.Status, u.PastDueAt = storage.Set(storage.SubscriptionStatusActive), storage.Set[*time.Time](nil)
			events = []string{"subscription.updated", "subscription.active"}
		}
	}
	if method != nil && (s.PaymentMethodID == nil || *s.PaymentMethodID != *method) {
		u.PaymentMethodID = storage.Set(method)
	}
	if u.IsZero() {
		return nil
	}
	out, err := storage.UpdateSubscription(ctx, tx, s.ID, now, u)
	if err != nil {
		return err
	}
	return r.emitSubscription(ctx, tx, out, events...)
}

// bankDebitFailed is dunning taking over a renewal (or the customer's retry of one) whose
// bank debit settled as failed: the subscription is past_due if it was still active, and
// the order's next retry is scheduled from now (or, after the last, the subscription ends
// unpaid), as when a card renewal is declined.
func (r *Resolver) bankDebitFailed(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription, orderID uuid.UUID, now time.Time) error {
	o, err := storage.LatestUnpaidOrder(ctx, tx, s.ID, now)
	if err != nil {
		return err
	}
	failed := max(o.FailedAttempts, 1)
	if o.ID != orderID {
		failed = 1
	}
	if s.Status == storage.SubscriptionStatusActive {
		out, err := storage.UpdateSubscription(ctx, tx, s.ID, now, storage.SubscriptionUpdate{
			Status: storage.Set(storage.SubscriptionStatusPastDue), PastDueAt: storage.Set(&now)})
		if err != nil {
			return err
		}
		if err := r.emitSubscription(ctx, tx, out, "subscription.updated", "subscription.past_due"); err != nil {
			return err
		}
		s = out
	}
	return r.nextDunningStep(ctx, tx, s, orderID, failed, now, now)
}
