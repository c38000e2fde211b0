-- +goose Up
-- Revenue metrics read hourly rollups instead of the orders, subscriptions and checkouts they
-- summarise, so a year of daily points costs a scan of at most 8,784 rows per product.
--
-- metric_hours holds flows: what happened during an hour (UTC) to one product of one
-- organization. Orders count in the hour they were created in, with their refunds: a refund
-- lowers the net revenue of the order's hour, so a late refund corrects the past point, and an
-- order a test clock creates in the past lands in its past hour. Orders without a product
-- count under the nil UUID.
--
-- metric_subscription_deltas holds stocks as changes: +1 active subscription (and its monthly
-- amount) in the hour it started, -1 in the hour it ended. The stock at the end of a period
-- is the sum of the changes before the period's end.
--
-- Statement-level triggers keep both exact in the transaction of the change: each statement
-- folds the contributions its rows had before (subtracted) and have after (added) into one
-- upsert per key, in key order, skipping keys whose changes cancel out (an update that does
-- not touch what metrics read writes nothing). The contribution of a row is written once, in
-- the metric_*_contribution functions, which metric_rebuild also sums from the base tables.
CREATE TABLE metric_hours (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    hour timestamptz NOT NULL,
    product_id uuid NOT NULL,
    orders bigint NOT NULL DEFAULT 0,
    revenue bigint NOT NULL DEFAULT 0,
    net_revenue bigint NOT NULL DEFAULT 0,
    one_time_orders bigint NOT NULL DEFAULT 0,
    one_time_revenue bigint NOT NULL DEFAULT 0,
    one_time_net_revenue bigint NOT NULL DEFAULT 0,
    new_orders bigint NOT NULL DEFAULT 0,
    new_revenue bigint NOT NULL DEFAULT 0,
    new_net_revenue bigint NOT NULL DEFAULT 0,
    renewal_orders bigint NOT NULL DEFAULT 0,
    renewal_revenue bigint NOT NULL DEFAULT 0,
    renewal_net_revenue bigint NOT NULL DEFAULT 0,
    checkouts bigint NOT NULL DEFAULT 0,
    succeeded_checkouts bigint NOT NULL DEFAULT 0,
    canceled bigint NOT NULL DEFAULT 0,
    canceled_customer_service bigint NOT NULL DEFAULT 0,
    canceled_low_quality bigint NOT NULL DEFAULT 0,
    canceled_missing_features bigint NOT NULL DEFAULT 0,
    canceled_switched_service bigint NOT NULL DEFAULT 0,
    canceled_too_complex bigint NOT NULL DEFAULT 0,
    canceled_too_expensive bigint NOT NULL DEFAULT 0,
    canceled_unused bigint NOT NULL DEFAULT 0,
    canceled_other bigint NOT NULL DEFAULT 0,
    churned bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (organization_id, hour, product_id)
);

CREATE TABLE metric_subscription_deltas (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    hour timestamptz NOT NULL,
    product_id uuid NOT NULL,
    active bigint NOT NULL DEFAULT 0,
    monthly_amount numeric NOT NULL DEFAULT 0,
    PRIMARY KEY (organization_id, hour, product_id)
);

-- The contribution functions give each row's part at its exact time (in the column named
-- hour): the add functions truncate it to the hour, and queries over the base tables (per
-- customer, or in a time zone whose offset is not whole hours) bucket it exactly.
-- Paid orders (refunded ones included) count; drafts, pending and void ones do not.
-- +goose StatementBegin
CREATE FUNCTION metric_order_contribution(o orders, s bigint) RETURNS SETOF metric_hours
LANGUAGE sql STABLE AS $$
    SELECT o.organization_id, o.created_at,
        coalesce(o.product_id, '00000000-0000-0000-0000-000000000000'),
        s, s * o.net_amount, s * (o.net_amount - o.refunded_amount),
        s * k.one_time, s * k.one_time * o.net_amount, s * k.one_time * (o.net_amount - o.refunded_amount),
        s * k.new, s * k.new * o.net_amount, s * k.new * (o.net_amount - o.refunded_amount),
        s * k.renewal, s * k.renewal * o.net_amount, s * k.renewal * (o.net_amount - o.refunded_amount),
        0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint,
        0::bigint, 0::bigint, 0::bigint
    FROM (SELECT (o.billing_reason = 'purchase')::int AS one_time,
        (o.billing_reason = 'subscription_create')::int AS new,
        (o.billing_reason = 'subscription_cycle')::int AS renewal) k
    WHERE o.deleted_at IS NULL AND o.status IN ('paid', 'refunded', 'partially_refunded')
$$;

CREATE FUNCTION metric_checkout_contribution(c checkouts, s bigint) RETURNS SETOF metric_hours
LANGUAGE sql STABLE AS $$
    SELECT c.organization_id, c.created_at,
        coalesce(c.product_id, '00000000-0000-0000-0000-000000000000'),
        0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint,
        0::bigint, 0::bigint, 0::bigint,
        s, s * (c.status = 'succeeded')::int,
        0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint
$$;

-- A cancellation counts in the hour it was asked for, under its reason; a churn in the hour
-- the subscription ended.
CREATE FUNCTION metric_subscription_contribution(x subscriptions, s bigint) RETURNS SETOF metric_hours
LANGUAGE sql STABLE AS $$
    SELECT x.organization_id, e.at, x.product_id,
        0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint,
        0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint,
        s * e.canceled,
        s * e.canceled * (x.customer_cancellation_reason IS NOT DISTINCT FROM 'customer_service')::int,
        s * e.canceled * (x.customer_cancellation_reason IS NOT DISTINCT FROM 'low_quality')::int,
        s * e.canceled * (x.customer_cancellation_reason IS NOT DISTINCT FROM 'missing_features')::int,
        s * e.canceled * (x.customer_cancellation_reason IS NOT DISTINCT FROM 'switched_service')::int,
        s * e.canceled * (x.customer_cancellation_reason IS NOT DISTINCT FROM 'too_complex')::int,
        s * e.canceled * (x.customer_cancellation_reason IS NOT DISTINCT FROM 'too_expensive')::int,
        s * e.canceled * (x.customer_cancellation_reason IS NOT DISTINCT FROM 'unused')::int,
        s * e.canceled * (x.customer_cancellation_reason IS NOT DISTINCT FROM 'other')::int,
        s * (1 - e.canceled)
    FROM (VALUES (x.canceled_at, 1), (x.ended_at, 0)) AS e (at, canceled)
    WHERE x.deleted_at IS NULL AND e.at IS NOT NULL
$$;

CREATE FUNCTION metric_subscription_delta(x subscriptions, s bigint) RETURNS SETOF metric_subscription_deltas
LANGUAGE sql STABLE AS $$
    SELECT x.organization_id, e.at, x.product_id, s * e.sign,
        s * e.sign * subscription_monthly_amount(x.amount, x.recurring_interval)
    FROM (VALUES (x.started_at, 1), (x.ended_at, -1)) AS e (at, sign)
    WHERE x.deleted_at IS NULL AND x.started_at IS NOT NULL AND e.at IS NOT NULL
$$;

-- metric_hours_add folds contributions into metric_hours: one upsert per key, in key order
-- so concurrent statements lock rows in the same order, none for keys that cancel out.
CREATE FUNCTION metric_hours_add(d metric_hours[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO metric_hours AS m
    SELECT organization_id, date_trunc('hour', hour, 'UTC'), product_id, sum(orders), sum(revenue), sum(net_revenue),
        sum(one_time_orders), sum(one_time_revenue), sum(one_time_net_revenue),
        sum(new_orders), sum(new_revenue), sum(new_net_revenue),
        sum(renewal_orders), sum(renewal_revenue), sum(renewal_net_revenue),
        sum(checkouts), sum(succeeded_checkouts), sum(canceled), sum(canceled_customer_service),
        sum(canceled_low_quality), sum(canceled_missing_features), sum(canceled_switched_service),
        sum(canceled_too_complex), sum(canceled_too_expensive), sum(canceled_unused),
        sum(canceled_other), sum(churned)
    FROM unnest(d)
    GROUP BY 1, 2, 3
    HAVING NOT (sum(orders) = 0 AND sum(revenue) = 0 AND sum(net_revenue) = 0
        AND sum(one_time_net_revenue) = 0 AND sum(new_net_revenue) = 0 AND sum(renewal_net_revenue) = 0
        AND sum(one_time_orders) = 0 AND sum(new_orders) = 0 AND sum(renewal_orders) = 0
        AND sum(one_time_revenue) = 0 AND sum(new_revenue) = 0 AND sum(renewal_revenue) = 0
        AND sum(checkouts) = 0 AND sum(succeeded_checkouts) = 0 AND sum(canceled) = 0
        AND sum(canceled_customer_service) = 0 AND sum(canceled_low_quality) = 0
        AND sum(canceled_missing_features) = 0 AND sum(canceled_switched_service) = 0
        AND sum(canceled_too_complex) = 0 AND sum(canceled_too_expensive) = 0
        AND sum(canceled_unused) = 0 AND sum(canceled_other) = 0 AND sum(churned) = 0)
    ORDER BY 1, 2, 3
    ON CONFLICT (organization_id, hour, product_id) DO UPDATE SET
        orders = m.orders + excluded.orders, revenue = m.revenue + excluded.revenue,
        net_revenue = m.net_revenue + excluded.net_revenue,
        one_time_orders = m.one_time_orders + excluded.one_time_orders,
        one_time_revenue = m.one_time_revenue + excluded.one_time_revenue,
        one_time_net_revenue = m.one_time_net_revenue + excluded.one_time_net_revenue,
        new_orders = m.new_orders + excluded.new_orders, new_revenue = m.new_revenue + excluded.new_revenue,
        new_net_revenue = m.new_net_revenue + excluded.new_net_revenue,
        renewal_orders = m.renewal_orders + excluded.renewal_orders,
        renewal_revenue = m.renewal_revenue + excluded.renewal_revenue,
        renewal_net_revenue = m.renewal_net_revenue + excluded.renewal_net_revenue,
        checkouts = m.checkouts + excluded.checkouts,
        succeeded_checkouts = m.succeeded_checkouts + excluded.succeeded_checkouts,
        canceled = m.canceled + excluded.canceled,
        canceled_customer_service = m.canceled_customer_service + excluded.canceled_customer_service,
        canceled_low_quality = m.canceled_low_quality + excluded.canceled_low_quality,
        canceled_missing_features = m.canceled_missing_features + excluded.canceled_missing_features,
        canceled_switched_service = m.canceled_switched_service + excluded.canceled_switched_service,
        canceled_too_complex = m.canceled_too_complex + excluded.canceled_too_complex,
        canceled_too_expensive = m.canceled_too_expensive + excluded.canceled_too_expensive,
        canceled_unused = m.canceled_unused + excluded.canceled_unused,
        canceled_other = m.canceled_other + excluded.canceled_other,
        churned = m.churned + excluded.churned
$$;

CREATE FUNCTION metric_subscription_deltas_add(d metric_subscription_deltas[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO metric_subscription_deltas AS m
    SELECT organization_id, date_trunc('hour', hour, 'UTC'), product_id, sum(active), sum(monthly_amount)
    FROM unnest(d)
    GROUP BY 1, 2, 3
    HAVING NOT (sum(active) = 0 AND sum(monthly_amount) = 0)
    ORDER BY 1, 2, 3
    ON CONFLICT (organization_id, hour, product_id) DO UPDATE SET
        active = m.active + excluded.active, monthly_amount = m.monthly_amount + excluded.monthly_amount
$$;

CREATE FUNCTION metric_orders_track() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE d metric_hours[] := '{}';
BEGIN
    IF TG_OP <> 'INSERT' THEN
        d := d || array(SELECT c FROM old_rows r, metric_order_contribution(r::orders, -1) c);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        d := d || array(SELECT c FROM new_rows r, metric_order_contribution(r::orders, 1) c);
    END IF;
    PERFORM metric_hours_add(d);
    RETURN NULL;
END $$;

CREATE FUNCTION metric_checkouts_track() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE d metric_hours[] := '{}';
BEGIN
    IF TG_OP <> 'INSERT' THEN
        d := d || array(SELECT c FROM old_rows r, metric_checkout_contribution(r::checkouts, -1) c);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        d := d || array(SELECT c FROM new_rows r, metric_checkout_contribution(r::checkouts, 1) c);
    END IF;
    PERFORM metric_hours_add(d);
    RETURN NULL;
END $$;

CREATE FUNCTION metric_subscriptions_track() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    d metric_hours[] := '{}';
    s metric_subscription_deltas[] := '{}';
BEGIN
    IF TG_OP <> 'INSERT' THEN
        d := d || array(SELECT c FROM old_rows r, metric_subscription_contribution(r::subscriptions, -1) c);
        s := s || array(SELECT c FROM old_rows r, metric_subscription_delta(r::subscriptions, -1) c);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        d := d || array(SELECT c FROM new_rows r, metric_subscription_contribution(r::subscriptions, 1) c);
        s := s || array(SELECT c FROM new_rows r, metric_subscription_delta(r::subscriptions, 1) c);
    END IF;
    PERFORM metric_hours_add(d);
    PERFORM metric_subscription_deltas_add(s);
    RETURN NULL;
END $$;

-- metric_rebuild recomputes an organization's rollups from the base tables: the migration's
-- backfill, a repair after a manual data fix, and the reference the rollups are tested against.
CREATE FUNCTION metric_rebuild(org uuid) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM metric_hours WHERE organization_id = org;
    DELETE FROM metric_subscription_deltas WHERE organization_id = org;
    PERFORM metric_hours_add(array(
        SELECT c FROM orders r, metric_order_contribution(r, 1) c WHERE r.organization_id = org
        UNION ALL SELECT c FROM checkouts r, metric_checkout_contribution(r, 1) c WHERE r.organization_id = org
        UNION ALL SELECT c FROM subscriptions r, metric_subscription_contribution(r, 1) c
            WHERE r.organization_id = org));
    PERFORM metric_subscription_deltas_add(array(
        SELECT c FROM subscriptions r, metric_subscription_delta(r, 1) c WHERE r.organization_id = org));
END $$;
-- +goose StatementEnd

CREATE TRIGGER orders_metrics_insert AFTER INSERT ON orders REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION metric_orders_track();
CREATE TRIGGER orders_metrics_update AFTER UPDATE ON orders REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION metric_orders_track();
CREATE TRIGGER orders_metrics_delete AFTER DELETE ON orders REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION metric_orders_track();
CREATE TRIGGER checkouts_metrics_insert AFTER INSERT ON checkouts REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION metric_checkouts_track();
CREATE TRIGGER checkouts_metrics_update AFTER UPDATE ON checkouts REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION metric_checkouts_track();
CREATE TRIGGER checkouts_metrics_delete AFTER DELETE ON checkouts REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION metric_checkouts_track();
CREATE TRIGGER subscriptions_metrics_insert AFTER INSERT ON subscriptions REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION metric_subscriptions_track();
CREATE TRIGGER subscriptions_metrics_update AFTER UPDATE ON subscriptions
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION metric_subscriptions_track();
CREATE TRIGGER subscriptions_metrics_delete AFTER DELETE ON subscriptions REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION metric_subscriptions_track();

SELECT metric_rebuild(id) FROM organizations;

-- metric_dashboards are the named selections of metrics an organization's people keep.
CREATE TABLE metric_dashboards (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name text NOT NULL,
    metrics text[] NOT NULL DEFAULT '{}'
);
CREATE INDEX metric_dashboards_organization_created_at_idx ON metric_dashboards (organization_id, created_at);
SELECT audit_track('metric_dashboards', 'metric_dashboard');

-- +goose Down
DROP TABLE metric_dashboards;
DROP TRIGGER subscriptions_metrics_delete ON subscriptions;
DROP TRIGGER subscriptions_metrics_update ON subscriptions;
DROP TRIGGER subscriptions_metrics_insert ON subscriptions;
DROP TRIGGER checkouts_metrics_delete ON checkouts;
DROP TRIGGER checkouts_metrics_update ON checkouts;
DROP TRIGGER checkouts_metrics_insert ON checkouts;
DROP TRIGGER orders_metrics_delete ON orders;
DROP TRIGGER orders_metrics_update ON orders;
DROP TRIGGER orders_metrics_insert ON orders;
DROP FUNCTION metric_rebuild(uuid);
DROP FUNCTION metric_subscriptions_track();
DROP FUNCTION metric_checkouts_track();
DROP FUNCTION metric_orders_track();
DROP FUNCTION metric_subscription_deltas_add(metric_subscription_deltas[]);
DROP FUNCTION metric_hours_add(metric_hours[]);
DROP FUNCTION metric_subscription_delta(subscriptions, bigint);
DROP FUNCTION metric_subscription_contribution(subscriptions, bigint);
DROP FUNCTION metric_checkout_contribution(checkouts, bigint);
DROP FUNCTION metric_order_contribution(orders, bigint);
DROP TABLE metric_subscription_deltas;
DROP TABLE metric_hours;
