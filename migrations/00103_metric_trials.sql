-- +goose Up
-- Monthly recurring revenue leaves out subscriptions still in their trial, as upstream's
-- does: a subscription counts as active from its start, and its monthly amount from the end
-- of its trial (its start when it has none), until it ends. A subscription ended during its
-- trial never adds to it. The statement triggers of 00085_revenue_metrics subtract a row's
-- old contribution and add its new one through this function, so the rollups are rebuilt
-- with it once, here.
-- +goose StatementBegin
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

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION metric_subscription_delta(x subscriptions, s bigint) RETURNS SETOF metric_subscription_deltas
LANGUAGE sql STABLE AS $$
    SELECT x.organization_id, e.at, x.product_id, s * e.sign,
        s * e.sign * subscription_monthly_amount(x.amount, x.recurring_interval)
    FROM (VALUES (x.started_at, 1), (x.ended_at, -1)) AS e (at, sign)
    WHERE x.deleted_at IS NULL AND x.started_at IS NOT NULL AND e.at IS NOT NULL
$$;
-- +goose StatementEnd
SELECT metric_rebuild(id) FROM organizations;
