package storage

import (
	"context"
	"database/sql"
	"time"

	"github.com/jmoiron/sqlx"
)

// Notification channels of the background loops. Triggers (migrations/00022) notify them
// from the transaction that gives a loop work, so a sleeping loop wakes when that work
// commits, in whichever process it runs.
const (
	// JobsChannel: a job became runnable (now or at its scheduled time).
	JobsChannel = "till_jobs"
	// DomainEventsChannel: a domain event waits for its payload to be rendered.
	DomainEventsChannel = "till_domain_events"
	// WebhookEventsChannel: a webhook event waits for delivery.
	WebhookEventsChannel = "till_webhook_events"
	// RenewalsChannel: when some subscription's renewal work falls due may have changed.
	RenewalsChannel = "till_renewals"
	// SessionsChannel: something a customer or member session lookup answers may have
	// changed (migrations/00024), so serving processes forget the sessions they hold.
	SessionsChannel = "till_sessions"
	// CredentialsChannel: what an organization or personal token's lookup answers may have
	// changed (migrations/00026), so serving processes forget the tokens they hold.
	CredentialsChannel = "till_credentials"
)

// The functions below tell a loop that found nothing to do how long it may sleep: until the
// earliest work that is not due yet. Between such times only a notification can bring work
// sooner. They answer ok=false when no work is waiting at all.

// NextJobIn is how long until the earliest runnable job of queue is due, by the database's
// clock (the one ClaimJobs compares with); zero when one is due already.
func NextJobIn(ctx context.Context, q sqlx.QueryerContext, queue string) (time.Duration, bool, error) {
	return secondsUntil(ctx, q, `SELECT extract(epoch FROM min(scheduled_at) - now()) FROM jobs
		WHERE queue = $1 AND state IN ('available', 'retryable')`, queue)
}

// NextWebhookIn is how long until some endpoint's next event may be claimed, by the database's
// clock: its retry time, or the end of the lease of a dispatcher that died while sending it.
func NextWebhookIn(ctx context.Context, q sqlx.QueryerContext) (time.Duration, bool, error) {
	return secondsUntil(ctx, q, pendingHeads+`
		SELECT extract(epoch FROM min(greatest(next_attempt_at, coalesce(claimed_until, next_attempt_at))) - now())
		FROM pending_heads`)
}

// NextRenewalAt is when the renewal loop (RenewDue without an organization) next has work:
// the earliest period end or dunning retry it would claim once due, as ClaimDueSubscription
// picks them.
func NextRenewalAt(ctx context.Context, q sqlx.QueryerContext) (time.Time, bool, error) {
	var at sql.NullTime
	err := sqlx.GetContext(ctx, q, &at, `SELECT least(
		(SELECT s.current_period_end FROM subscriptions s
			WHERE s.deleted_at IS NULL AND s.status IN ('trialing', 'active', 'past_due')
				AND (s.status <> 'past_due' OR s.cancel_at_period_end)
				AND NOT EXISTS (SELECT 1 FROM test_clocks t WHERE t.organization_id = s.organization_id)
			ORDER BY s.current_period_end LIMIT 1),
		(SELECT o.next_payment_attempt_at FROM orders o JOIN subscriptions s ON s.id = o.subscription_id
			WHERE o.next_payment_attempt_at IS NOT NULL AND o.status = 'pending'
				AND s.deleted_at IS NULL AND s.status = 'past_due'
				AND NOT EXISTS (SELECT 1 FROM test_clocks t WHERE t.organization_id = s.organization_id)
			ORDER BY o.next_payment_attempt_at LIMIT 1))`)
	return at.Time, at.Valid, mapErr(err)
}

// NextCheckoutChangeAt is when the checkout loop next has work: the earliest expiry of an open
// checkout, or the time a confirmed checkout has stayed confirmed for staleAfter.
func NextCheckoutChangeAt(ctx context.Context, q sqlx.QueryerContext, staleAfter time.Duration) (time.Time, bool, error) {
	var at sql.NullTime
	err := sqlx.GetContext(ctx, q, &at, `SELECT least(
		(SELECT min(expires_at) FROM checkouts WHERE status = 'open'),
		(SELECT min(modified_at) FROM checkouts WHERE status = 'confirmed' AND pending_payment IS NULL) + make_interval(secs => $1))`,
		staleAfter.Seconds())
	return at.Time, at.Valid, mapErr(err)
}

// NextRenderClaimLapseAt is when the earliest claim on an unrendered domain event lapses:
// its renderer died, and no notification will say that the event may be claimed again.
func NextRenderClaimLapseAt(ctx context.Context, q sqlx.QueryerContext) (time.Time, bool, error) {
	var at sql.NullTime
	err := sqlx.GetContext(ctx, q, &at, `SELECT min(render_claimed_until) FROM domain_events
		WHERE payload IS NULL AND render_attempts < $1 AND render_claimed_until > now()`, maxRenderAttempts)
	return at.Time, at.Valid, mapErr(err)
}

// secondsUntil runs a query answering a number of seconds, or NULL for none.
func secondsUntil(ctx context.Context, q sqlx.QueryerContext, query string, args ...any) (time.Duration, bool, error) {
	var s sql.NullFloat64
	if err := sqlx.GetContext(ctx, q, &s, query, args...); err != nil {
		return 0, false, mapErr(err)
	}
	return max(0, time.Duration(s.Float64*float64(time.Second))), s.Valid, nil
}
