package resolvers

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/auth"
	"till/storage"
)

// subscriptionChange is one lifecycle change applied to a locked subscription at the
// organization's time; it returns the changed subscription.
type subscriptionChange func(tx *sqlx.Tx, s *storage.Subscription, now time.Time) (*storage.Subscription, error)

// changeSubscription locks a subscription the caller may see (an organization's, or the
// session customer's in the portal), reads the organization's clock and applies change in
// one transaction. An unknown id, or one of another tenant or customer, is ResourceNotFound.
func (r *Resolver) changeSubscription(ctx context.Context, id uuid.UUID, change subscriptionChange) (*storage.Subscription, error) {
	var customerID *uuid.UUID
	// Portal changes are limited to the session's customer; @billing on the portal fields has
	// checked a member's role.
	if p := auth.FromContext(ctx); p.Kind == auth.KindCustomerSession || p.Kind == auth.KindMemberSession {
		customerID = &p.CustomerID
	}
	var out *storage.Subscription
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		s, err := storage.LockSubscription(ctx, tx, organizations(ctx), customerID, id)
		if err != nil {
			return notFoundOr(err, "")
		}
		now, err := r.clockFor(ctx, tx, s.OrganizationID)
		if err != nil {
			return err
		}
		out, err = change(tx, s, now)
		return err
	})
	return out, err
}

// errSubscriptionEnded is upstream's AlreadyCanceledSubscription message, as a BadRequest.
func errSubscriptionEnded() error {
	return BadRequest("This subscription is already canceled or will be at the end of the period.")
}

// cancelSubscription sets the subscription to end at the end of its period (the trial end
// for trials), with the customer's reason and comment. Benefits stay until then. A paused
// subscription has no running period, so cancelling it ends it at once.
func (r *Resolver) cancelSubscription(ctx context.Context, id uuid.UUID, reason *storage.CustomerCancellationReason,
	comment *string) (*storage.Subscription, error) {
	return r.changeSubscription(ctx, id, func(tx *sqlx.Tx, s *storage.Subscription, now time.Time) (*storage.Subscription, error) {
		if subscriptionEnded[s.Status] || s.CancelAtPeriodEnd {
			return nil, errSubscriptionEnded()
		}
		if s.Status == storage.SubscriptionStatusPaused {
			return r.endSubscription(ctx, tx, s, now, now, reason, comment)
		}
		if _, err := storage.CancelPendingUpdate(ctx, tx, s.ID, now); err != nil {
			return nil, err
		}
		out, err := storage.UpdateSubscription(ctx, tx, s.ID, now, storage.SubscriptionUpdate{
			CancelAtPeriodEnd: storage.Set(true), CanceledAt: storage.Set(&now), EndsAt: storage.Set(&s.CurrentPeriodEnd),
			PauseAtPeriodEnd: storage.Set(false), CustomerCancellationReason: storage.Set(reason),
			CustomerCancellationComment: storage.Set(comment)})
		if err != nil {
			return nil, err
		}
		return out, r.emitSubscription(ctx, tx, out, "subscription.updated", "subscription.canceled")
	})
}

// uncancelSubscription takes back a cancellation at period end before the period ends.
func (r *Resolver) uncancelSubscription(ctx context.Context, id uuid.UUID) (*storage.Subscription, error) {
	return r.changeSubscription(ctx, id, func(tx *sqlx.Tx, s *storage.Subscription, now time.Time) (*storage.Subscription, error) {
		if subscriptionEnded[s.Status] {
			return nil, BadRequest("This subscription has ended and cannot be uncanceled.")
		}
		if !s.CancelAtPeriodEnd {
			return nil, BadRequest("This subscription is not set to cancel.")
		}
		out, err := storage.UpdateSubscription(ctx, tx, s.ID, now, storage.SubscriptionUpdate{
			CancelAtPeriodEnd: storage.Set(false), CanceledAt: storage.Set[*time.Time](nil), EndsAt: storage.Set[*time.Time](nil),
			CustomerCancellationReason: storage.Set[*storage.CustomerCancellationReason](nil), CustomerCancellationComment: storage.Set[*string](nil)})
		if err != nil {
			return nil, err
		}
		return out, r.emitSubscription(ctx, tx, out, "subscription.updated", "subscription.uncanceled")
	})
}

// revokeSubscription ends the subscription now. Revoking twice is a BadRequest.
func (r *Resolver) revokeSubscription(ctx context.Context, id uuid.UUID, reason *storage.CustomerCancellationReason,
	comment *string) (*storage.Subscription, error) {
	return r.changeSubscription(ctx, id, func(tx *sqlx.Tx, s *storage.Subscription, now time.Time) (*storage.Subscription, error) {
		if subscriptionEnded[s.Status] {
			return nil, BadRequest("This subscription is already canceled.")
		}
		return r.endSubscription(ctx, tx, s, now, now, reason, comment)
	})
}

// endSubscription turns a live subscription canceled at `at`: ended_at and ends_at set,
// canceled_at kept when a cancellation came first, the open change dropped, dunning stopped
// and benefits revoked. It emits subscription.updated, subscription.canceled (unless the
// cancellation was already announced) and subscription.revoked.
func (r *Resolver) endSubscription(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription, at, now time.Time,
	reason *storage.CustomerCancellationReason, comment *string) (*storage.Subscription, error) {
	u := storage.SubscriptionUpdate{Status: storage.Set(storage.SubscriptionStatusCanceled), EndedAt: storage.Set(at), EndsAt: storage.Set(&at),
		PauseAtPeriodEnd: storage.Set(false)}
	if s.CanceledAt == nil {
		u.CanceledAt = storage.Set(&at)
	}
	if reason != nil {
		u.CustomerCancellationReason = storage.Set(reason)
	}
	if comment != nil {
		u.CustomerCancellationComment = storage.Set(comment)
	}
	out, err := r.stopSubscription(ctx, tx, s, now, u)
	if err != nil {
		return nil, err
	}
	// An ended subscription's seats end with it (their holders' grants were just revoked).
	seats, err := storage.RevokeSubscriptionSeats(ctx, tx, s.ID, at)
	if err != nil {
		return nil, err
	}
	for _, seat := range seats {
		if err := r.emit(ctx, tx, seat.OrganizationID, "customer_seat.revoked", seat.ID); err != nil {
			return nil, err
		}
	}
	events := []string{"subscription.updated", "subscription.canceled", "subscription.revoked"}
	if s.CancelAtPeriodEnd {
		events = []string{"subscription.updated", "subscription.revoked"}
	}
	return out, r.emitSubscription(ctx, tx, out, events...)
}

// stopSubscription applies a change that takes access away (ended, unpaid, paused): the open
// change is dropped, an unpaid order is no longer retried and the benefits are revoked.
func (r *Resolver) stopSubscription(ctx context.Context, tx *sqlx.Tx, s *storage.Subscription, now time.Time,
	u storage.SubscriptionUpdate) (*storage.Subscription, error) {
	if _, err := storage.CancelPendingUpdate(ctx, tx, s.ID, now); err != nil {
		return nil, err
	}
	if o, err := storage.LatestUnpaidOrder(ctx, tx, s.ID, now); err == nil && o.NextPaymentAttemptAt != nil {
		if err := r.scheduleOrderPayment(ctx, tx, o.ID, nil); err != nil {
			return nil, err
		}
	} else if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, err
	}
	out, err := storage.UpdateSubscription(ctx, tx, s.ID, now, u)
	if err != nil {
		return nil, err
	}
	return out, r.revokeBenefits(ctx, tx, subscriptionGrantScope(out, out.ProductID))
}

// pauseSubscription sets a trialing or active subscription to pause at the end of its period.
func (r *Resolver) pauseSubscription(ctx context.Context, id uuid.UUID) (*storage.Subscription, error) {
	return r.changeSubscription(ctx, id, func(tx *sqlx.Tx, s *storage.Subscription, now time.Time) (*storage.Subscription, error) {
		switch {
		case subscriptionEnded[s.Status] || s.CancelAtPeriodEnd:
			return nil, errSubscriptionEnded()
		case s.Status == storage.SubscriptionStatusPaused || s.PauseAtPeriodEnd:
			return nil, BadRequest("This subscription is already paused or will be at the end of the period.")
		case s.Status != storage.SubscriptionStatusActive && s.Status != storage.SubscriptionStatusTrialing:
			return nil, BadRequest("Only active or trialing subscriptions can be paused.")
		}
		out, err := storage.UpdateSubscription(ctx, tx, s.ID, now, storage.SubscriptionUpdate{PauseAtPeriodEnd: storage.Set(true)})
		if err != nil {
			return nil, err
		}
		return out, r.emitSubscription(ctx, tx, out, "subscription.updated")
	})
}

// resumeSubscription takes back a pause at period end, or resumes a paused subscription: it
// becomes active, its benefits are granted again and a new period starts now, charged at
// once like a renewal (a decline makes it past_due).
func (r *Resolver) resumeSubscription(ctx context.Context, id uuid.UUID) (*storage.Subscription, error) {
	return r.changeSubscription(ctx, id, func(tx *sqlx.Tx, s *storage.Subscription, now time.Time) (*storage.Subscription, error) {
		switch {
		case s.Status == storage.SubscriptionStatusPaused:
		case s.PauseAtPeriodEnd && !subscriptionEnded[s.Status]:
			out, err := storage.UpdateSubscription(ctx, tx, s.ID, now, storage.SubscriptionUpdate{PauseAtPeriodEnd: storage.Set(false)})
			if err != nil {
				return nil, err
			}
			return out, r.emitSubscription(ctx, tx, out, "subscription.updated")
		default:
			return nil, BadRequest("This subscription is not paused.")
		}
		resumed, err := storage.UpdateSubscription(ctx, tx, s.ID, now, storage.SubscriptionUpdate{Status: storage.Set(storage.SubscriptionStatusActive),
			PausedAt: storage.Set[*time.Time](nil), ResumesAt: storage.Set[*time.Time](nil)})
		if err != nil {
			return nil, err
		}
		if err := r.grantBenefits(ctx, tx, subscriptionGrantScope(resumed, resumed.ProductID)); err != nil {
			return nil, err
		}
		out, err := r.cycleSubscription(ctx, tx, resumed, now, now)
		if err != nil {
			return nil, err
		}
		return out, r.emitSubscription(ctx, tx, out, "subscription.resumed")
	})
}
