package storage

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// subscriptionColumns are the columns of the Subscription record; soft-deleted rows
// (deleted_at) are filtered in SQL and never read.
const subscriptionColumns = `id, created_at, modified_at, organization_id, customer_id, product_id,
	discount_id, checkout_id, payment_method_id, status, amount, currency, recurring_interval,
	recurring_interval_count, current_period_start, current_period_end, current_meter_period_start,
	current_meter_period_end, trial_start, trial_end, cancel_at_period_end, canceled_at, started_at,
	ends_at, ended_at, past_due_at, pause_at_period_end, paused_at, resumes_at, seats,
	customer_cancellation_reason, customer_cancellation_comment, custom_field_data, metadata`

// qualify prefixes every column of a column list with a table alias ("s." + "id, …").
func qualify(alias, columns string) string {
	parts := strings.Split(columns, ",")
	for i, p := range parts {
		parts[i] = alias + "." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// subscriptionColumnsS is subscriptionColumns for queries that join other tables as s.
var subscriptionColumnsS = qualify("s", subscriptionColumns)

// SubscriptionWrite holds the fields of a new subscription.
type SubscriptionWrite struct {
	CustomerID              uuid.UUID
	ProductID               uuid.UUID
	DiscountID              *uuid.UUID
	CheckoutID              *uuid.UUID
	PaymentMethodID         *uuid.UUID
	Status                  SubscriptionStatus
	Amount                  int64
	Currency                string
	RecurringInterval       Interval
	RecurringIntervalCount  int
	CurrentPeriodStart      time.Time
	CurrentPeriodEnd        time.Time
	CurrentMeterPeriodStart *time.Time
	CurrentMeterPeriodEnd   *time.Time
	TrialStart              *time.Time
	TrialEnd                *time.Time
	StartedAt               *time.Time
	Seats                   *int
	CustomFieldData         JSONMap
	Metadata                JSONMap
}

// CreateSubscription inserts a subscription of the organization; created_at is the use case's
// clock (a test clock may run ahead of the database's).
func CreateSubscription(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, now time.Time, w SubscriptionWrite) (*Subscription, error) {
	var s Subscription
	err := sqlx.GetContext(ctx, q, &s, `INSERT INTO subscriptions (organization_id, customer_id,
		product_id, discount_id, checkout_id, payment_method_id, status, amount, currency,
		recurring_interval, recurring_interval_count, current_period_start, current_period_end,
		current_meter_period_start, current_meter_period_end, trial_start, trial_end, started_at,
		seats, custom_field_data, metadata, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)
		RETURNING `+subscriptionColumns,
		orgID, w.CustomerID, w.ProductID, w.DiscountID, w.CheckoutID, w.PaymentMethodID, w.Status,
		w.Amount, w.Currency, w.RecurringInterval, w.RecurringIntervalCount, w.CurrentPeriodStart,
		w.CurrentPeriodEnd, w.CurrentMeterPeriodStart, w.CurrentMeterPeriodEnd, w.TrialStart, w.TrialEnd,
		w.StartedAt, w.Seats, w.CustomFieldData, w.Metadata, now)
	return &s, mapErr(err)
}

// SetSubscriptionPrices replaces the prices a subscription bills. Prices of another
// organization are ignored, so a caller cannot attach a foreign tenant's price.
func SetSubscriptionPrices(ctx context.Context, q sqlx.ExtContext, orgID, subscriptionID uuid.UUID, priceIDs []uuid.UUID) error {
	if _, err := q.ExecContext(ctx, `DELETE FROM subscription_prices WHERE subscription_id = $1 AND organization_id = $2`,
		subscriptionID, orgID); err != nil {
		return mapErr(err)
	}
	if len(priceIDs) == 0 {
		return nil
	}
	_, err := q.ExecContext(ctx, `INSERT INTO subscription_prices (subscription_id, product_price_id, organization_id)
		SELECT $1, p.id, $2 FROM product_prices p WHERE p.id = ANY($3) AND p.organization_id = $2`,
		subscriptionID, orgID, pq.Array(priceIDs))
	return mapErr(err)
}

// GetSubscription reads a live subscription of the given organizations.
func GetSubscription(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*Subscription, error) {
	var s Subscription
	err := sqlx.GetContext(ctx, q, &s, `SELECT `+subscriptionColumns+` FROM subscriptions
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL`, id, pq.Array(orgs))
	return &s, mapErr(err)
}

// LockSubscription reads a live subscription of the given organizations and locks its row
// until the transaction ends, so lifecycle changes and renewals of one subscription take
// turns. customerID, when set, also requires the subscription to be that customer's.
func LockSubscription(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, customerID *uuid.UUID, id uuid.UUID) (*Subscription, error) {
	var s Subscription
	err := sqlx.GetContext(ctx, q, &s, `SELECT `+subscriptionColumns+` FROM subscriptions
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL
		AND ($3::uuid IS NULL OR customer_id = $3) FOR UPDATE`, id, pq.Array(orgs), customerID)
	return &s, mapErr(err)
}

// SubscriptionUpdate is a change to a subscription: each set field writes its column, the
// others keep what they hold; a set nil pointer clears the column. The zero value only
// stamps modified_at.
type SubscriptionUpdate struct {
	ProductID                   Omittable[uuid.UUID]
	Status                      Omittable[SubscriptionStatus]
	Amount                      Omittable[int64]
	RecurringInterval           Omittable[Interval]
	RecurringIntervalCount      Omittable[int]
	CurrentPeriodStart          Omittable[time.Time]
	CurrentPeriodEnd            Omittable[time.Time]
	CurrentMeterPeriodStart     Omittable[time.Time]
	CurrentMeterPeriodEnd       Omittable[time.Time]
	CancelAtPeriodEnd           Omittable[bool]
	CanceledAt                  Omittable[*time.Time]
	EndsAt                      Omittable[*time.Time]
	EndedAt                     Omittable[time.Time]
	PastDueAt                   Omittable[*time.Time]
	PauseAtPeriodEnd            Omittable[bool]
	PausedAt                    Omittable[*time.Time]
	ResumesAt                   Omittable[*time.Time]
	Seats                       Omittable[*int]
	CustomerCancellationReason  Omittable[*CustomerCancellationReason]
	CustomerCancellationComment Omittable[*string]
	PaymentMethodID             Omittable[*uuid.UUID]
}

func (u SubscriptionUpdate) assignments() []assignment {
	return []assignment{u.ProductID.to("product_id"), u.Status.to("status"), u.Amount.to("amount"),
		u.RecurringInterval.to("recurring_interval"), u.RecurringIntervalCount.to("recurring_interval_count"),
		u.CurrentPeriodStart.to("current_period_start"), u.CurrentPeriodEnd.to("current_period_end"),
		u.CurrentMeterPeriodStart.to("current_meter_period_start"), u.CurrentMeterPeriodEnd.to("current_meter_period_end"),
		u.CancelAtPeriodEnd.to("cancel_at_period_end"), u.CanceledAt.to("canceled_at"), u.EndsAt.to("ends_at"),
		u.EndedAt.to("ended_at"), u.PastDueAt.to("past_due_at"), u.PauseAtPeriodEnd.to("pause_at_period_end"),
		u.PausedAt.to("paused_at"), u.ResumesAt.to("resumes_at"), u.Seats.to("seats"),
		u.CustomerCancellationReason.to("customer_cancellation_reason"),
		u.CustomerCancellationComment.to("customer_cancellation_comment"), u.PaymentMethodID.to("payment_method_id")}
}

// IsZero reports whether the update sets nothing.
func (u SubscriptionUpdate) IsZero() bool { return isZero(u) }

// UpdateSubscription writes the set fields of u to a subscription the caller has locked;
// modified_at is the use case's clock.
func UpdateSubscription(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, now time.Time, u SubscriptionUpdate) (*Subscription, error) {
	sets, args := setClause("modified_at = $2", u, []any{id, now})
	var s Subscription
	err := sqlx.GetContext(ctx, q, &s, `UPDATE subscriptions SET `+sets+`
		WHERE id = $1 RETURNING `+subscriptionColumns, args...)
	return &s, mapErr(err)
}

// SubscriptionsByIDs loads subscriptions for a dataloader, one per key in key order, nil
// where missing. Soft-deleted ones are included because orders still point at them.
func SubscriptionsByIDs(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([]*Subscription, error) {
	var rows []*Subscription
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+subscriptionColumns+` FROM subscriptions
		WHERE id = ANY($1)`, pq.Array(ids)); err != nil {
		return nil, mapErr(err)
	}
	return inKeyOrder(ids, rows, func(r *Subscription) uuid.UUID { return r.ID }), nil
}

// SubscriptionPricesBySubscriptions loads the prices each subscription bills, archived ones
// included (a subscription keeps the price it was sold at), oldest first, one slice per key.
func SubscriptionPricesBySubscriptions(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([][]*ProductPrice, error) {
	type row struct {
		SubscriptionID uuid.UUID `db:"subscription_id"`
		ProductPrice
	}
	var rows []*row
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT sp.subscription_id, pp.*
		FROM subscription_prices sp
		JOIN LATERAL (SELECT `+priceColumns+` FROM product_prices WHERE id = sp.product_price_id) pp ON true
		WHERE sp.subscription_id = ANY($1) ORDER BY pp.created_at, pp.id`, pq.Array(ids)); err != nil {
		return nil, mapErr(err)
	}
	return groupJoined(ids, rows, func(r *row) uuid.UUID { return r.SubscriptionID },
		func(r *row) ProductPrice { return r.ProductPrice }), nil
}

// PendingSubscriptionUpdate is a product or seat change waiting for the next period.
type PendingSubscriptionUpdate struct {
	ID                uuid.UUID  `db:"id"`
	CreatedAt         time.Time  `db:"created_at"`
	ModifiedAt        *time.Time `db:"modified_at"`
	OrganizationID    uuid.UUID  `db:"organization_id"`
	SubscriptionID    uuid.UUID  `db:"subscription_id"`
	ProductID         *uuid.UUID `db:"product_id"`
	Seats             *int       `db:"seats"`
	ProrationBehavior *string    `db:"proration_behavior"`
	AppliesAt         time.Time  `db:"applies_at"`
	AppliedAt         *time.Time `db:"applied_at"`
	CanceledAt        *time.Time `db:"canceled_at"`
}

const pendingUpdateColumns = `id, created_at, modified_at, organization_id, subscription_id, product_id,
	seats, proration_behavior, applies_at, applied_at, canceled_at`

// SchedulePendingUpdate stores the open change of a subscription, replacing (canceling) the
// one already open: at most one is open per subscription.
func SchedulePendingUpdate(ctx context.Context, q sqlx.ExtContext, now time.Time, u PendingSubscriptionUpdate) (*PendingSubscriptionUpdate, error) {
	if _, err := CancelPendingUpdate(ctx, q, u.SubscriptionID, now); err != nil {
		return nil, err
	}
	var out PendingSubscriptionUpdate
	err := sqlx.GetContext(ctx, q, &out, `INSERT INTO pending_subscription_updates (organization_id,
		subscription_id, product_id, seats, proration_behavior, applies_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING `+pendingUpdateColumns,
		u.OrganizationID, u.SubscriptionID, u.ProductID, u.Seats, u.ProrationBehavior, u.AppliesAt, now)
	return &out, mapErr(err)
}

// CancelPendingUpdate closes the open change of a subscription, if any, keeping it as history.
func CancelPendingUpdate(ctx context.Context, q sqlx.ExtContext, subscriptionID uuid.UUID, now time.Time) (bool, error) {
	res, err := q.ExecContext(ctx, `UPDATE pending_subscription_updates SET canceled_at = $2, modified_at = $2
		WHERE subscription_id = $1 AND applied_at IS NULL AND canceled_at IS NULL`, subscriptionID, now)
	if err != nil {
		return false, mapErr(err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// OpenPendingUpdate reads the open change of a subscription; ErrNotFound when there is none.
func OpenPendingUpdate(ctx context.Context, q sqlx.ExtContext, subscriptionID uuid.UUID) (*PendingSubscriptionUpdate, error) {
	var u PendingSubscriptionUpdate
	err := sqlx.GetContext(ctx, q, &u, `SELECT `+pendingUpdateColumns+` FROM pending_subscription_updates
		WHERE subscription_id = $1 AND applied_at IS NULL AND canceled_at IS NULL`, subscriptionID)
	return &u, mapErr(err)
}

// MarkPendingUpdateApplied records that a change took effect.
func MarkPendingUpdateApplied(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, now time.Time) error {
	_, err := q.ExecContext(ctx, `UPDATE pending_subscription_updates SET applied_at = $2, modified_at = $2
		WHERE id = $1`, id, now)
	return mapErr(err)
}

// PendingUpdatesBySubscriptions loads the open change of each subscription for a dataloader:
// one slice per key in key order, holding the open change or nothing.
func PendingUpdatesBySubscriptions(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([][]*PendingSubscriptionUpdate, error) {
	var rows []*PendingSubscriptionUpdate
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+pendingUpdateColumns+` FROM pending_subscription_updates
		WHERE subscription_id = ANY($1) AND applied_at IS NULL AND canceled_at IS NULL`, pq.Array(ids)); err != nil {
		return nil, mapErr(err)
	}
	return groupBy(ids, rows, func(r *PendingSubscriptionUpdate) uuid.UUID { return r.SubscriptionID }), nil
}

// SeatsInUse counts the seats of a subscription that are assigned (pending or claimed), the
// floor below which its seat count cannot go.
func SeatsInUse(ctx context.Context, q sqlx.ExtContext, subscriptionID uuid.UUID) (int, error) {
	var n int
	err := sqlx.GetContext(ctx, q, &n, `SELECT count(*) FROM customer_seats
		WHERE subscription_id = $1 AND status <> 'revoked'`, subscriptionID)
	return n, mapErr(err)
}
