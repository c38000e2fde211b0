-- +goose Up
-- Writers append metric changes instead of adding them to the rollups, so that concurrent
-- orders of one product no longer wait for each other: with the hourly rollups, every order of
-- a product in an hour updated one row and held its lock until commit; with the daily ones
-- (00095_metric_days), 24 rows shared by every order of the product within a day.
--
-- metric_hour_changes and metric_subscription_delta_changes have the columns of metric_hours
-- and metric_subscription_deltas and no key: each statement on orders, checkouts or
-- subscriptions inserts its contributions there, summed per organization, hour and product,
-- without touching a row another transaction may hold. metric_fold moves an organization's
-- changes into the rollups, hourly and daily, in one transaction (storage.FoldMetrics runs it
-- every few seconds). Readers sum the rollups and the changes not folded yet in one
-- statement, so that they see every committed change exactly once, before or after a fold.
CREATE TABLE metric_hour_changes (LIKE metric_hours);
CREATE INDEX metric_hour_changes_organization_hour_idx ON metric_hour_changes (organization_id, hour);
CREATE TABLE metric_subscription_delta_changes (LIKE metric_subscription_deltas);
CREATE INDEX metric_subscription_delta_changes_organization_hour_idx
    ON metric_subscription_delta_changes (organization_id, hour);

-- +goose StatementBegin
-- metric_changes_add appends contributions, as metric_hours_add and
-- metric_subscription_deltas_add take them, summed per key, none for keys that cancel out.
CREATE FUNCTION metric_changes_add(d metric_hours[], s metric_subscription_deltas[]) RETURNS void
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

-- metric_fold moves the changes of org into the rollups and returns how many change rows it
-- folded. Concurrent folds of one organization wait for each other on the change rows (the
-- later one folds what the earlier did not delete); storage.FoldMetrics also takes an
-- advisory lock so that they skip instead.
CREATE FUNCTION metric_fold(org uuid) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    d metric_hours[];
    s metric_subscription_deltas[];
BEGIN
    WITH x AS (DELETE FROM metric_hour_changes WHERE organization_id = org RETURNING *)
    SELECT coalesce(array_agg(ROW(x.*)::metric_hours), '{}') INTO d FROM x;
    WITH x AS (DELETE FROM metric_subscription_delta_changes WHERE organization_id = org RETURNING *)
    SELECT coalesce(array_agg(ROW(x.*)::metric_subscription_deltas), '{}') INTO s FROM x;
    PERFORM metric_hours_add(d);
    PERFORM metric_subscription_deltas_add(s);
    PERFORM metric_days_add(d);
    PERFORM metric_subscription_days_add(s);
    RETURN cardinality(d) + cardinality(s);
END $$;

CREATE OR REPLACE FUNCTION metric_orders_track() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE d metric_hours[] := '{}';
BEGIN
    IF TG_OP <> 'INSERT' THEN
        d := d || array(SELECT c FROM old_rows r, metric_order_contribution(r::orders, -1) c);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        d := d || array(SELECT c FROM new_rows r, metric_order_contribution(r::orders, 1) c);
    END IF;
    PERFORM metric_changes_add(d, '{}');
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION metric_checkouts_track() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE d metric_hours[] := '{}';
BEGIN
    IF TG_OP <> 'INSERT' THEN
        d := d || array(SELECT c FROM old_rows r, metric_checkout_contribution(r::checkouts, -1) c);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        d := d || array(SELECT c FROM new_rows r, metric_checkout_contribution(r::checkouts, 1) c);
    END IF;
    PERFORM metric_changes_add(d, '{}');
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION metric_subscriptions_track() RETURNS trigger LANGUAGE plpgsql AS $$
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
    PERFORM metric_changes_add(d, s);
    RETURN NULL;
END $$;

-- metric_rebuild recomputes an organization's rollups from the base tables; the changes not
-- folded yet are part of what it recomputes, so it drops them.
CREATE OR REPLACE FUNCTION metric_rebuild(org uuid) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    d metric_hours[];
    s metric_subscription_deltas[];
BEGIN
    DELETE FROM metric_hours WHERE organization_id = org;
    DELETE FROM metric_subscription_deltas WHERE organization_id = org;
    DELETE FROM metric_days WHERE organization_id = org;
    DELETE FROM metric_subscription_days WHERE organization_id = org;
    DELETE FROM metric_hour_changes WHERE organization_id = org;
    DELETE FROM metric_subscription_delta_changes WHERE organization_id = org;
    d := array(
        SELECT c FROM orders r, metric_order_contribution(r, 1) c WHERE r.organization_id = org
        UNION ALL SELECT c FROM checkouts r, metric_checkout_contribution(r, 1) c WHERE r.organization_id = org
        UNION ALL SELECT c FROM subscriptions r, metric_subscription_contribution(r, 1) c
            WHERE r.organization_id = org);
    s := array(SELECT c FROM subscriptions r, metric_subscription_delta(r, 1) c WHERE r.organization_id = org);
    PERFORM metric_hours_add(d);
    PERFORM metric_subscription_deltas_add(s);
    PERFORM metric_days_add(d);
    PERFORM metric_subscription_days_add(s);
END $$;
-- +goose StatementEnd

-- +goose Down
SELECT metric_fold(id) FROM organizations;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION metric_orders_track() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE d metric_hours[] := '{}';
BEGIN
    IF TG_OP <> 'INSERT' THEN
        d := d || array(SELECT c FROM old_rows r, metric_order_contribution(r::orders, -1) c);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        d := d || array(SELECT c FROM new_rows r, metric_order_contribution(r::orders, 1) c);
    END IF;
    PERFORM metric_hours_add(d);
    PERFORM metric_days_add(d);
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION metric_checkouts_track() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE d metric_hours[] := '{}';
BEGIN
    IF TG_OP <> 'INSERT' THEN
        d := d || array(SELECT c FROM old_rows r, metric_checkout_contribution(r::checkouts, -1) c);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        d := d || array(SELECT c FROM new_rows r, metric_checkout_contribution(r::checkouts, 1) c);
    END IF;
    PERFORM metric_hours_add(d);
    PERFORM metric_days_add(d);
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION metric_subscriptions_track() RETURNS trigger LANGUAGE plpgsql AS $$
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
    PERFORM metric_days_add(d);
    PERFORM metric_subscription_days_add(s);
    RETURN NULL;
END $$;

-- metric_rebuild recomputes an organization's rollups, hourly and daily, from the base tables.
CREATE OR REPLACE FUNCTION metric_rebuild(org uuid) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    d metric_hours[];
    s metric_subscription_deltas[];
BEGIN
    DELETE FROM metric_hours WHERE organization_id = org;
    DELETE FROM metric_subscription_deltas WHERE organization_id = org;
    DELETE FROM metric_days WHERE organization_id = org;
    DELETE FROM metric_subscription_days WHERE organization_id = org;
    d := array(
        SELECT c FROM orders r, metric_order_contribution(r, 1) c WHERE r.organization_id = org
        UNION ALL SELECT c FROM checkouts r, metric_checkout_contribution(r, 1) c WHERE r.organization_id = org
        UNION ALL SELECT c FROM subscriptions r, metric_subscription_contribution(r, 1) c
            WHERE r.organization_id = org);
    s := array(SELECT c FROM subscriptions r, metric_subscription_delta(r, 1) c WHERE r.organization_id = org);
    PERFORM metric_hours_add(d);
    PERFORM metric_subscription_deltas_add(s);
    PERFORM metric_days_add(d);
    PERFORM metric_subscription_days_add(s);
END $$;
-- +goose StatementEnd
DROP FUNCTION metric_fold(uuid);
DROP FUNCTION metric_changes_add(metric_hours[], metric_subscription_deltas[]);
DROP TABLE metric_subscription_delta_changes;
DROP TABLE metric_hour_changes;
