-- +goose Up
-- The subscription stocks gain upstream's committed and trialing splits (storage.MetricsPoint
-- names them). A subscription "ends" for them at ended_at, or at ends_at when it is set to
-- end (canceled at period end), as upstream's coalesce(ended_at, ends_at):
--   - committed: +1 from its start while it neither ended nor is set to end. Upstream counts
--     an active subscription not ended as of the bucket, which with active's own condition
--     leaves those with no end at all; so a cancellation takes it out of every past period
--     too, as upstream's does, and taking the cancellation back puts it back;
--   - committed_monthly_amount: its monthly amount from the end of its trial (as
--     monthly_amount), for the committed ones;
--   - trial_monthly_amount: its monthly amount from its start until its trial ends, or until
--     it ends if that is sooner;
--   - trial_committed_monthly_amount: its monthly amount from its start until its trial ends,
--     for the committed ones.
-- A period counts a change made before its end, so a trial ending within a period is no
-- longer a trial in it, as upstream's trial_end >= t + interval says.
--
-- metric_subscription_days is recreated so that its columns stay those of
-- metric_subscription_deltas, then align, which the readers union; every rollup is rebuilt.
ALTER TABLE metric_subscription_deltas
    ADD COLUMN committed bigint NOT NULL DEFAULT 0,
    ADD COLUMN committed_monthly_amount numeric NOT NULL DEFAULT 0,
    ADD COLUMN trial_monthly_amount numeric NOT NULL DEFAULT 0,
    ADD COLUMN trial_committed_monthly_amount numeric NOT NULL DEFAULT 0;
ALTER TABLE metric_subscription_delta_changes
    ADD COLUMN committed bigint NOT NULL DEFAULT 0,
    ADD COLUMN committed_monthly_amount numeric NOT NULL DEFAULT 0,
    ADD COLUMN trial_monthly_amount numeric NOT NULL DEFAULT 0,
    ADD COLUMN trial_committed_monthly_amount numeric NOT NULL DEFAULT 0;

DROP TABLE metric_subscription_days;
CREATE TABLE metric_subscription_days (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    day timestamptz NOT NULL,
    product_id uuid NOT NULL,
    active bigint NOT NULL DEFAULT 0,
    monthly_amount numeric NOT NULL DEFAULT 0,
    committed bigint NOT NULL DEFAULT 0,
    committed_monthly_amount numeric NOT NULL DEFAULT 0,
    trial_monthly_amount numeric NOT NULL DEFAULT 0,
    trial_committed_monthly_amount numeric NOT NULL DEFAULT 0,
    align smallint NOT NULL CHECK (align BETWEEN 0 AND 23),
    PRIMARY KEY (organization_id, align, day, product_id)
);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION metric_subscription_delta(x subscriptions, s bigint) RETURNS SETOF metric_subscription_deltas
LANGUAGE sql STABLE AS $$
    SELECT x.organization_id, e.at, x.product_id, s * e.active, s * e.paying * b.amount,
        s * e.committed, s * e.committed_paying * b.amount, s * e.trial * b.amount, s * e.committed_trial * b.amount
    FROM (SELECT CASE WHEN x.trial_end > x.started_at THEN x.trial_end ELSE x.started_at END AS billed_from,
            coalesce(x.ended_at, x.ends_at) AS ends,
            (coalesce(x.ended_at, x.ends_at) IS NULL)::int AS committed,
            coalesce(x.trial_end > x.started_at, false)::int AS has_trial,
            subscription_monthly_amount(x.amount, x.recurring_interval) AS amount) b,
        LATERAL (SELECT coalesce(b.has_trial = 1 AND (b.ends IS NULL OR b.ends > x.started_at), false)::int AS trial) t,
        LATERAL (VALUES (x.started_at, 1, 0, b.committed, 0, t.trial, b.committed * b.has_trial),
            (b.billed_from, 0, CASE WHEN x.ended_at IS NULL OR b.billed_from < x.ended_at THEN 1 ELSE 0 END, 0, b.committed, 0, 0),
            (x.ended_at, -1, CASE WHEN b.billed_from < x.ended_at THEN -1 ELSE 0 END, 0, 0, 0, 0),
            (least(x.trial_end, b.ends), 0, 0, 0, 0, -t.trial, -b.committed * b.has_trial))
            AS e (at, active, paying, committed, committed_paying, trial, committed_trial)
    WHERE x.deleted_at IS NULL AND x.started_at IS NOT NULL AND e.at IS NOT NULL
        AND (e.active <> 0 OR e.paying <> 0 OR e.committed <> 0 OR e.committed_paying <> 0 OR e.trial <> 0
            OR e.committed_trial <> 0)
$$;

CREATE OR REPLACE FUNCTION metric_subscription_deltas_add(d metric_subscription_deltas[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO metric_subscription_deltas AS m
    SELECT organization_id, date_trunc('hour', hour, 'UTC'), product_id, sum(active), sum(monthly_amount),
        sum(committed), sum(committed_monthly_amount), sum(trial_monthly_amount), sum(trial_committed_monthly_amount)
    FROM unnest(d)
    GROUP BY 1, 2, 3
    HAVING NOT (sum(active) = 0 AND sum(monthly_amount) = 0 AND sum(committed) = 0
        AND sum(committed_monthly_amount) = 0 AND sum(trial_monthly_amount) = 0
        AND sum(trial_committed_monthly_amount) = 0)
    ORDER BY 1, 2, 3
    ON CONFLICT (organization_id, hour, product_id) DO UPDATE SET
        active = m.active + excluded.active, monthly_amount = m.monthly_amount + excluded.monthly_amount,
        committed = m.committed + excluded.committed,
        committed_monthly_amount = m.committed_monthly_amount + excluded.committed_monthly_amount,
        trial_monthly_amount = m.trial_monthly_amount + excluded.trial_monthly_amount,
        trial_committed_monthly_amount = m.trial_committed_monthly_amount + excluded.trial_committed_monthly_amount
$$;

CREATE OR REPLACE FUNCTION metric_subscription_days_add(d metric_subscription_deltas[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO metric_subscription_days AS m
    SELECT organization_id, s.day, CASE WHEN grouping(product_id) = 1 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid ELSE product_id END,
        sum(active), sum(monthly_amount), sum(committed), sum(committed_monthly_amount), sum(trial_monthly_amount),
        sum(trial_committed_monthly_amount), extract(hour FROM s.day AT TIME ZONE 'UTC')::smallint AS align
    FROM (SELECT organization_id, date_trunc('hour', hour, 'UTC') AS hour, product_id, sum(active) AS active,
            sum(monthly_amount) AS monthly_amount, sum(committed) AS committed,
            sum(committed_monthly_amount) AS committed_monthly_amount, sum(trial_monthly_amount) AS trial_monthly_amount,
            sum(trial_committed_monthly_amount) AS trial_committed_monthly_amount
        FROM unnest(d) GROUP BY 1, 2, 3) h, metric_day_starts(h.hour) s (day)
    GROUP BY GROUPING SETS ((organization_id, s.day, product_id), (organization_id, s.day))
    HAVING NOT (sum(active) = 0 AND sum(monthly_amount) = 0 AND sum(committed) = 0
        AND sum(committed_monthly_amount) = 0 AND sum(trial_monthly_amount) = 0
        AND sum(trial_committed_monthly_amount) = 0)
    ORDER BY 1, align, 2, 3
    ON CONFLICT (organization_id, align, day, product_id) DO UPDATE SET
        active = m.active + excluded.active, monthly_amount = m.monthly_amount + excluded.monthly_amount,
        committed = m.committed + excluded.committed,
        committed_monthly_amount = m.committed_monthly_amount + excluded.committed_monthly_amount,
        trial_monthly_amount = m.trial_monthly_amount + excluded.trial_monthly_amount,
        trial_committed_monthly_amount = m.trial_committed_monthly_amount + excluded.trial_committed_monthly_amount
$$;

CREATE OR REPLACE FUNCTION metric_changes_add(d metric_hours[], s metric_subscription_deltas[]) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO metric_hour_changes
    SELECT organization_id, date_trunc('hour', hour, 'UTC'), product_id,
        sum(orders), sum(revenue), sum(net_revenue), sum(one_time_orders), sum(one_time_revenue),
        sum(one_time_net_revenue), sum(new_orders), sum(new_revenue), sum(new_net_revenue),
        sum(renewal_orders), sum(renewal_revenue), sum(renewal_net_revenue), sum(checkouts),
        sum(succeeded_checkouts), sum(canceled), sum(canceled_customer_service),
        sum(canceled_low_quality), sum(canceled_missing_features), sum(canceled_switched_service),
        sum(canceled_too_complex), sum(canceled_too_expensive), sum(canceled_unused),
        sum(canceled_other), sum(churned)
    FROM unnest(d)
    GROUP BY 1, 2, 3
    HAVING NOT (
        sum(orders) = 0 AND sum(revenue) = 0 AND sum(net_revenue) = 0 AND
        sum(one_time_orders) = 0 AND sum(one_time_revenue) = 0 AND sum(one_time_net_revenue) = 0 AND
        sum(new_orders) = 0 AND sum(new_revenue) = 0 AND sum(new_net_revenue) = 0 AND
        sum(renewal_orders) = 0 AND sum(renewal_revenue) = 0 AND sum(renewal_net_revenue) = 0 AND
        sum(checkouts) = 0 AND sum(succeeded_checkouts) = 0 AND sum(canceled) = 0 AND
        sum(canceled_customer_service) = 0 AND sum(canceled_low_quality) = 0 AND
        sum(canceled_missing_features) = 0 AND sum(canceled_switched_service) = 0 AND
        sum(canceled_too_complex) = 0 AND sum(canceled_too_expensive) = 0 AND
        sum(canceled_unused) = 0 AND sum(canceled_other) = 0 AND sum(churned) = 0);
    INSERT INTO metric_subscription_delta_changes
    SELECT organization_id, date_trunc('hour', hour, 'UTC'), product_id, sum(active), sum(monthly_amount),
        sum(committed), sum(committed_monthly_amount), sum(trial_monthly_amount), sum(trial_committed_monthly_amount)
    FROM unnest(s)
    GROUP BY 1, 2, 3
    HAVING NOT (sum(active) = 0 AND sum(monthly_amount) = 0 AND sum(committed) = 0
        AND sum(committed_monthly_amount) = 0 AND sum(trial_monthly_amount) = 0
        AND sum(trial_committed_monthly_amount) = 0);
$$;
-- +goose StatementEnd

SELECT metric_rebuild(id) FROM organizations;

-- +goose Down
-- The dropped columns leave metric_subscription_days with its former columns, in order.
ALTER TABLE metric_subscription_days
    DROP COLUMN committed, DROP COLUMN committed_monthly_amount, DROP COLUMN trial_monthly_amount,
    DROP COLUMN trial_committed_monthly_amount;
ALTER TABLE metric_subscription_delta_changes
    DROP COLUMN committed, DROP COLUMN committed_monthly_amount, DROP COLUMN trial_monthly_amount,
    DROP COLUMN trial_committed_monthly_amount;
ALTER TABLE metric_subscription_deltas
    DROP COLUMN committed, DROP COLUMN committed_monthly_amount, DROP COLUMN trial_monthly_amount,
    DROP COLUMN trial_committed_monthly_amount;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION metric_changes_add(d metric_hours[], s metric_subscription_deltas[]) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO metric_hour_changes
    SELECT organization_id, date_trunc('hour', hour, 'UTC'), product_id,
        sum(orders), sum(revenue), sum(net_revenue), sum(one_time_orders), sum(one_time_revenue),
        sum(one_time_net_revenue), sum(new_orders), sum(new_revenue), sum(new_net_revenue),
        sum(renewal_orders), sum(renewal_revenue), sum(renewal_net_revenue), sum(checkouts),
        sum(succeeded_checkouts), sum(canceled), sum(canceled_customer_service),
        sum(canceled_low_quality), sum(canceled_missing_features), sum(canceled_switched_service),
        sum(canceled_too_complex), sum(canceled_too_expensive), sum(canceled_unused),
        sum(canceled_other), sum(churned)
    FROM unnest(d)
    GROUP BY 1, 2, 3
    HAVING NOT (
        sum(orders) = 0 AND sum(revenue) = 0 AND sum(net_revenue) = 0 AND
        sum(one_time_orders) = 0 AND sum(one_time_revenue) = 0 AND sum(one_time_net_revenue) = 0 AND
        sum(new_orders) = 0 AND sum(new_revenue) = 0 AND sum(new_net_revenue) = 0 AND
        sum(renewal_orders) = 0 AND sum(renewal_revenue) = 0 AND sum(renewal_net_revenue) = 0 AND
        sum(checkouts) = 0 AND sum(succeeded_checkouts) = 0 AND sum(canceled) = 0 AND
        sum(canceled_customer_service) = 0 AND sum(canceled_low_quality) = 0 AND
        sum(canceled_missing_features) = 0 AND sum(canceled_switched_service) = 0 AND
        sum(canceled_too_complex) = 0 AND sum(canceled_too_expensive) = 0 AND
        sum(canceled_unused) = 0 AND sum(canceled_other) = 0 AND sum(churned) = 0);
    INSERT INTO metric_subscription_delta_changes
    SELECT organization_id, date_trunc('hour', hour, 'UTC'), product_id, sum(active), sum(monthly_amount)
    FROM unnest(s)
    GROUP BY 1, 2, 3
    HAVING NOT (sum(active) = 0 AND sum(monthly_amount) = 0);
$$;

CREATE OR REPLACE FUNCTION metric_subscription_days_add(d metric_subscription_deltas[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO metric_subscription_days AS m
    SELECT organization_id, s.day, CASE WHEN grouping(product_id) = 1 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid ELSE product_id END,
        sum(active), sum(monthly_amount),
        extract(hour FROM s.day AT TIME ZONE 'UTC')::smallint AS align
    FROM (SELECT organization_id, date_trunc('hour', hour, 'UTC') AS hour, product_id, sum(active) AS active,
            sum(monthly_amount) AS monthly_amount
        FROM unnest(d) GROUP BY 1, 2, 3) h, metric_day_starts(h.hour) s (day)
    GROUP BY GROUPING SETS ((organization_id, s.day, product_id), (organization_id, s.day))
    HAVING NOT (sum(active) = 0 AND sum(monthly_amount) = 0)
    ORDER BY 1, align, 2, 3
    ON CONFLICT (organization_id, align, day, product_id) DO UPDATE SET
        active = m.active + excluded.active, monthly_amount = m.monthly_amount + excluded.monthly_amount
$$;

CREATE OR REPLACE FUNCTION metric_subscription_deltas_add(d metric_subscription_deltas[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO metric_subscription_deltas AS m
    SELECT organization_id, date_trunc('hour', hour, 'UTC'), product_id, sum(active), sum(monthly_amount)
    FROM unnest(d)
    GROUP BY 1, 2, 3
    HAVING NOT (sum(active) = 0 AND sum(monthly_amount) = 0)
    ORDER BY 1, 2, 3
    ON CONFLICT (organization_id, hour, product_id) DO UPDATE SET
        active = m.active + excluded.active, monthly_amount = m.monthly_amount + excluded.monthly_amount
$$;

CREATE OR REPLACE FUNCTION metric_subscription_delta(x subscriptions, s bigint) RETURNS SETOF metric_subscription_deltas
LANGUAGE sql STABLE AS $$
    SELECT x.organization_id, e.at, x.product_id, s * e.active,
        s * e.paying * subscription_monthly_amount(x.amount, x.recurring_interval)
    FROM (SELECT CASE WHEN x.trial_end > x.started_at THEN x.trial_end ELSE x.started_at END AS billed_from) b,
        LATERAL (VALUES (x.started_at, 1, 0),
            (b.billed_from, 0, CASE WHEN x.ended_at IS NULL OR b.billed_from < x.ended_at THEN 1 ELSE 0 END),
            (x.ended_at, -1, CASE WHEN b.billed_from < x.ended_at THEN -1 ELSE 0 END)) AS e (at, active, paying)
    WHERE x.deleted_at IS NULL AND x.started_at IS NOT NULL AND e.at IS NOT NULL AND (e.active <> 0 OR e.paying <> 0)
$$;
-- +goose StatementEnd
SELECT metric_rebuild(id) FROM organizations;
