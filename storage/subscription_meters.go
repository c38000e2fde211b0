package storage

import (
	"context"
	"crypto/sha256"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// SubscriptionMeter is a subscription's usage of one meter in its current meter period (the
// contract's SubscriptionMeter): units consumed, units credited by meter_credit benefits, and
// the amount due for them so far. A subscription has one per meter of its metered prices.
type SubscriptionMeter struct {
	ID             uuid.UUID  `db:"id"`
	CreatedAt      time.Time  `db:"created_at"`
	ModifiedAt     *time.Time `db:"modified_at"`
	SubscriptionID uuid.UUID  `db:"subscription_id"`
	MeterID        uuid.UUID  `db:"meter_id"`
	ConsumedUnits  float64    `db:"consumed_units"`
	CreditedUnits  int64      `db:"credited_units"`
	Amount         int64      `db:"amount"`
	Meter          *Meter     `db:"meter"`
}

// SubscriptionMeterID is the id of a subscription's meter row. It is derived from the pair so
// a meter has its id before its row is first written (a new subscription shows its meters at
// zero at once) and keeps it after. Version 4 in form, as the contract's uuid4 fields expect.
func SubscriptionMeterID(subscriptionID, meterID uuid.UUID) uuid.UUID {
	return uuid.NewHash(sha256.New(), subscriptionID, meterID[:], 4)
}

// meterColumnsAs selects the meter's columns (of the join aliased m) under "meter.", where
// sqlx scans them into SubscriptionMeter.Meter.
var meterColumnsAs = func() string {
	parts := strings.Split(meterColumns, ",")
	for i, p := range parts {
		c := strings.TrimSpace(p)
		parts[i] = `m.` + c + ` AS "meter.` + c + `"`
	}
	return strings.Join(parts, ", ")
}()

// meteredMetersOf selects, per subscription of the uuid array expression ids, each meter of
// its metered prices and when the first such price was attached (the meter's created_at
// until its row exists).
func meteredMetersOf(ids string) string {
	return `SELECT sp.subscription_id, pp.meter_id, min(sp.created_at) AS created_at
	FROM subscription_prices sp JOIN product_prices pp ON pp.id = sp.product_price_id
	WHERE sp.subscription_id = ANY(` + ids + `) AND pp.amount_type = 'metered_unit' AND pp.meter_id IS NOT NULL
	GROUP BY sp.subscription_id, pp.meter_id`
}

// SubscriptionMetersBySubscriptions loads each subscription's meters with their meter, for a
// dataloader, in one statement: one per meter of the subscription's metered prices, oldest
// first, at zero where the sweep has not written the row yet. Rows of meters the subscription
// no longer bills are left out.
func SubscriptionMetersBySubscriptions(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([][]*SubscriptionMeter, error) {
	var rows []*SubscriptionMeter
	err := sqlx.SelectContext(ctx, q, &rows, `SELECT w.subscription_id, w.meter_id,
		coalesce(sm.id, '00000000-0000-0000-0000-000000000000') AS id,
		coalesce(sm.created_at, w.created_at) AS created_at, sm.modified_at,
		coalesce(sm.consumed_units, 0)::float8 AS consumed_units, coalesce(sm.credited_units, 0) AS credited_units,
		coalesce(sm.amount, 0) AS amount, `+meterColumnsAs+`
		FROM (`+meteredMetersOf("$1")+`) w
		JOIN meters m ON m.id = w.meter_id
		LEFT JOIN subscription_meters sm ON sm.subscription_id = w.subscription_id AND sm.meter_id = w.meter_id
		ORDER BY created_at, m.created_at, m.id`, pq.Array(ids))
	if err != nil {
		return nil, mapErr(err)
	}
	for _, r := range rows {
		if r.ID == uuid.Nil {
			r.ID = SubscriptionMeterID(r.SubscriptionID, r.MeterID)
		}
	}
	return groupBy(ids, rows, func(r *SubscriptionMeter) uuid.UUID { return r.SubscriptionID }), nil
}

// StaleMeteredSubscriptions returns up to limit live subscriptions (trialing, active,
// past_due) whose meters are due for a recount: a meter row computed more than staleAfter ago
// (by the database's clock, which refreshed_at is in) or never, or a metered price without
// its row yet. With orgID set, only that organization's.
func StaleMeteredSubscriptions(ctx context.Context, q sqlx.ExtContext, orgID *uuid.UUID, staleAfter time.Duration,
	limit int) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := sqlx.SelectContext(ctx, q, &ids, `SELECT s.id FROM subscriptions s
		WHERE s.id IN (
			SELECT sm.subscription_id FROM subscription_meters sm
			WHERE sm.refreshed_at IS NULL OR sm.refreshed_at < now() - make_interval(secs => $1)
			UNION
			SELECT sp.subscription_id FROM product_prices pp
			JOIN subscription_prices sp ON sp.product_price_id = pp.id
			WHERE pp.amount_type = 'metered_unit' AND NOT EXISTS (SELECT 1 FROM subscription_meters sm
				WHERE sm.subscription_id = sp.subscription_id AND sm.meter_id = pp.meter_id))
		AND s.deleted_at IS NULL AND s.status IN ('trialing', 'active', 'past_due')
		AND ($2::uuid IS NULL OR s.organization_id = $2)
		LIMIT $3`, staleAfter.Seconds(), orgID, limit)
	return ids, mapErr(err)
}

// ShareLiveSubscription reads a live subscription and takes a share lock on it, so a renewal
// (which locks it for update) cannot cycle it while its meters are being counted; ErrNotFound
// when it is not live or is locked by a renewal right now.
func ShareLiveSubscription(ctx context.Context, q sqlx.ExtContext, id uuid.UUID) (*Subscription, error) {
	var s Subscription
	err := sqlx.GetContext(ctx, q, &s, `SELECT `+subscriptionColumns+` FROM subscriptions
		WHERE id = $1 AND deleted_at IS NULL AND status IN ('trialing', 'active', 'past_due')
		FOR SHARE SKIP LOCKED`, id)
	return &s, mapErr(err)
}

// MeterCredits sums, per meter of meterIDs, the units that the customer's meter_credit
// benefit grants credit in the window [from, to). A grant held through a subscription credits
// its units every period (the benefit cycles with the subscription); any other grant credits
// them once, in the window where it was granted. Revoked grants credit nothing: revoking
// takes their units back. Grants of seat members are the members', not the customer's.
func MeterCredits(ctx context.Context, q sqlx.ExtContext, customerID uuid.UUID, meterIDs []uuid.UUID,
	from, to time.Time) (map[uuid.UUID]int64, error) {
	var rows []struct {
		MeterID uuid.UUID `db:"meter_id"`
		Units   int64     `db:"units"`
	}
	err := sqlx.SelectContext(ctx, q, &rows, `SELECT (b.properties ->> 'meter_id')::uuid AS meter_id,
		sum((b.properties ->> 'units')::bigint)::bigint AS units
		FROM benefit_grants g JOIN benefits b ON b.id = g.benefit_id
		WHERE g.customer_id = $1 AND g.member_id IS NULL AND g.deleted_at IS NULL
		AND b.type = 'meter_credit' AND (b.properties ->> 'meter_id')::uuid = ANY($2)
		AND g.granted_at IS NOT NULL AND g.granted_at < $4
		AND (g.subscription_id IS NOT NULL OR g.granted_at >= $3)
		GROUP BY 1`, customerID, pq.Array(meterIDs), from, to)
	if err != nil {
		return nil, mapErr(err)
	}
	out := make(map[uuid.UUID]int64, len(rows))
	for _, r := range rows {
		out[r.MeterID] = r.Units
	}
	return out, nil
}

// SubscriptionMeterValues are the counted figures of one meter of a subscription.
type SubscriptionMeterValues struct {
	MeterID       uuid.UUID
	ConsumedUnits float64
	CreditedUnits int64
	Amount        int64
}

// SaveSubscriptionMeters writes a subscription's counted meters and deletes the rows of
// meters it no longer bills, in one statement. modified_at becomes now only where a figure
// changed (a row not yet written stood at zero); refreshed_at is always the database's time,
// for the sweep.
func SaveSubscriptionMeters(ctx context.Context, q sqlx.ExtContext, orgID, subscriptionID uuid.UUID,
	values []SubscriptionMeterValues, now time.Time) error {
	ids, meters := make([]uuid.UUID, len(values)), make([]uuid.UUID, len(values))
	consumed, credited, amounts := make([]float64, len(values)), make([]int64, len(values)), make([]int64, len(values))
	for i, v := range values {
		ids[i], meters[i] = SubscriptionMeterID(subscriptionID, v.MeterID), v.MeterID
		consumed[i], credited[i], amounts[i] = v.ConsumedUnits, v.CreditedUnits, v.Amount
	}
	_, err := q.ExecContext(ctx, `WITH gone AS (DELETE FROM subscription_meters
			WHERE subscription_id = $2 AND NOT (meter_id = ANY($4)))
		INSERT INTO subscription_meters AS sm (id, created_at, organization_id, subscription_id, meter_id,
			consumed_units, credited_units, amount, refreshed_at, modified_at)
		SELECT v.id, coalesce(w.created_at, now()), $1, $2, v.meter_id, v.consumed, v.credited, v.amount, now(),
			CASE WHEN v.consumed <> 0 OR v.credited <> 0 OR v.amount <> 0 THEN $8::timestamptz END
		FROM unnest($3::uuid[], $4::uuid[], $5::float8[], $6::bigint[], $7::bigint[])
			AS v(id, meter_id, consumed, credited, amount)
		LEFT JOIN (`+meteredMetersOf("ARRAY[$2::uuid]")+`) w
			ON w.meter_id = v.meter_id
		ON CONFLICT (subscription_id, meter_id) DO UPDATE SET
			consumed_units = EXCLUDED.consumed_units, credited_units = EXCLUDED.credited_units,
			amount = EXCLUDED.amount, refreshed_at = now(),
			modified_at = CASE WHEN (sm.consumed_units, sm.credited_units, sm.amount) IS DISTINCT FROM
				(EXCLUDED.consumed_units, EXCLUDED.credited_units, EXCLUDED.amount) THEN $8 ELSE sm.modified_at END`,
		orgID, subscriptionID, pq.Array(ids), pq.Array(meters), pq.Array(consumed), pq.Array(credited),
		pq.Array(amounts), now)
	return mapErr(err)
}

// ResetSubscriptionMeters zeroes a subscription's meters when a new meter period starts at
// `at` and marks them due for the sweep, which counts the new period from its start.
func ResetSubscriptionMeters(ctx context.Context, q sqlx.ExtContext, subscriptionID uuid.UUID, at time.Time) error {
	_, err := q.ExecContext(ctx, `UPDATE subscription_meters SET consumed_units = 0, credited_units = 0,
		amount = 0, refreshed_at = NULL,
		modified_at = CASE WHEN consumed_units <> 0 OR credited_units <> 0 OR amount <> 0 THEN $2 ELSE modified_at END
		WHERE subscription_id = $1`, subscriptionID, at)
	return mapErr(err)
}
