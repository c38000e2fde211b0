-- +goose Up
-- A zone whose offset is not whole hours (Asia/Kolkata, Asia/Kathmandu, America/St_Johns,
-- Australia/Adelaide) cuts its days inside UTC hours, and its metrics add, at each cut, the
-- part of the hour before it (storage.metricsSplit). That part was read from the base tables:
-- for a year of days over a million orders, 21,000 orders and 365 lookups of subscriptions at
-- four times each, most of such a read. The offsets of every zone since 1972 are whole
-- quarter hours, so the rollups now keep quarters too, and a cut reads one to three quarter
-- rows a product:
--   - metric_quarters and metric_subscription_quarters have the columns of metric_hours and
--     metric_subscription_deltas, their hour column holding the quarter's start;
--   - writers append their changes per quarter instead of per hour (metric_changes_add), and
--     metric_fold adds them to the quarters as well as to the hours and days, which truncate
--     them to the hour as before; metric_rebuild rebuilds the quarters too.
-- The changes appended before this migration are per hour: it folds them first, holding off
-- writers meanwhile, and builds the quarters from the base tables.
CREATE TABLE metric_quarters (LIKE metric_hours INCLUDING DEFAULTS);
ALTER TABLE metric_quarters ADD PRIMARY KEY (organization_id, hour, product_id),
    ADD FOREIGN KEY (organization_id) REFERENCES organizations (id) ON DELETE CASCADE;
CREATE TABLE metric_subscription_quarters (LIKE metric_subscription_deltas INCLUDING DEFAULTS);
ALTER TABLE metric_subscription_quarters ADD PRIMARY KEY (organization_id, hour, product_id),
    ADD FOREIGN KEY (organization_id) REFERENCES organizations (id) ON DELETE CASCADE;

-- +goose StatementBegin
-- metric_quarters_add folds contributions into metric_quarters as metric_hours_add does into
-- metric_hours, per UTC quarter hour (metric_event_quarter, 00100_metric_costs).
CREATE FUNCTION metric_quarters_add(d metric_hours[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO metric_quarters AS m
    SELECT organization_id, metric_event_quarter(hour), product_id, sum(orders), sum(revenue), sum(net_revenue),
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

-- metric_subscription_quarters_add folds stock changes into metric_subscription_quarters as
-- metric_subscription_deltas_add does into metric_subscription_deltas.
CREATE FUNCTION metric_subscription_quarters_add(d metric_subscription_deltas[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO metric_subscription_quarters AS m
    SELECT organization_id, metric_event_quarter(hour), product_id, sum(active), sum(monthly_amount),
        sum(committed), sum(committed_monthly_amount), sum(trial_monthly_amount), sum(trial_committed_monthly_amount),
        sum(subscribers)
    FROM unnest(d)
    GROUP BY 1, 2, 3
    HAVING NOT (sum(active) = 0 AND sum(monthly_amount) = 0 AND sum(committed) = 0
        AND sum(committed_monthly_amount) = 0 AND sum(trial_monthly_amount) = 0
        AND sum(trial_committed_monthly_amount) = 0 AND sum(subscribers) = 0)
    ORDER BY 1, 2, 3
    ON CONFLICT (organization_id, hour, product_id) DO UPDATE SET
        active = m.active + excluded.active, monthly_amount = m.monthly_amount + excluded.monthly_amount,
        committed = m.committed + excluded.committed,
        committed_monthly_amount = m.committed_monthly_amount + excluded.committed_monthly_amount,
        trial_monthly_amount = m.trial_monthly_amount + excluded.trial_monthly_amount,
        trial_committed_monthly_amount = m.trial_committed_monthly_amount + excluded.trial_committed_monthly_amount,
        subscribers = m.subscribers + excluded.subscribers
$$;

-- metric_changes_add appends contributions per quarter; everything that reads the changes per
-- hour truncates them, and a quarter lies within its hour.
CREATE OR REPLACE FUNCTION metric_changes_add(d metric_hours[], s metric_subscription_deltas[]) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO metric_hour_changes
    SELECT organization_id, metric_event_quarter(hour), product_id,
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
    SELECT organization_id, metric_event_quarter(hour), product_id, sum(active), sum(monthly_amount),
        sum(committed), sum(committed_monthly_amount), sum(trial_monthly_amount), sum(trial_committed_monthly_amount),
        sum(subscribers)
    FROM unnest(s)
    GROUP BY 1, 2, 3
    HAVING NOT (sum(active) = 0 AND sum(monthly_amount) = 0 AND sum(committed) = 0
        AND sum(committed_monthly_amount) = 0 AND sum(trial_monthly_amount) = 0
        AND sum(trial_committed_monthly_amount) = 0 AND sum(subscribers) = 0);
$$;

-- metric_fold moves the changes of org into the rollups, and the islands of its queued
-- customers, and returns how many change and queue rows it folded. It holds the
-- organization's fold lock (storage.FoldMetrics takes it first, to skip a busy organization).
CREATE OR REPLACE FUNCTION metric_fold(org uuid) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    d metric_hours[];
    s metric_subscription_deltas[];
    c uuid[];
    was metric_subscriber_islands[];
    now_ metric_subscriber_islands[];
    n bigint;
    queued bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('till.metric_fold.' || org, 0));
    WITH x AS (DELETE FROM metric_hour_changes WHERE organization_id = org RETURNING *)
    SELECT coalesce(array_agg(ROW(x.*)::metric_hours), '{}') INTO d FROM x;
    WITH x AS (DELETE FROM metric_subscription_delta_changes WHERE organization_id = org RETURNING *)
    SELECT coalesce(array_agg(ROW(x.*)::metric_subscription_deltas), '{}') INTO s FROM x;
    n := cardinality(d) + cardinality(s);
    WITH x AS (DELETE FROM metric_subscriber_queue WHERE organization_id = org RETURNING customer_id)
    SELECT coalesce(array_agg(DISTINCT customer_id), '{}'), count(*) INTO c, queued FROM x;
    IF queued > 0 THEN
        WITH x AS (DELETE FROM metric_subscriber_islands WHERE organization_id = org AND customer_id = ANY(c) RETURNING *)
        SELECT coalesce(array_agg(ROW(x.*)::metric_subscriber_islands), '{}') INTO was FROM x;
        WITH x AS (INSERT INTO metric_subscriber_islands
                SELECT * FROM metric_subscriber_islands_of(ARRAY[org], c, NULL, true) RETURNING *)
        SELECT coalesce(array_agg(ROW(x.*)::metric_subscriber_islands), '{}') INTO now_ FROM x;
        -- Only the islands that changed write changes: most of a queued customer's do not,
        -- and each change fans out to 24 days of two products.
        s := s || array(SELECT e FROM (SELECT * FROM unnest(was) EXCEPT ALL SELECT * FROM unnest(now_)) x,
                metric_island_delta(ROW(x.*)::metric_subscriber_islands, -1) e)
            || array(SELECT e FROM (SELECT * FROM unnest(now_) EXCEPT ALL SELECT * FROM unnest(was)) x,
                metric_island_delta(ROW(x.*)::metric_subscriber_islands, 1) e);
    END IF;
    PERFORM metric_hours_add(d);
    PERFORM metric_subscription_deltas_add(s);
    PERFORM metric_quarters_add(d);
    PERFORM metric_subscription_quarters_add(s);
    PERFORM metric_days_add(d);
    PERFORM metric_subscription_days_add(s);
    RETURN n + queued;
END $$;

-- metric_rebuild recomputes an organization's rollups and islands from the base tables; the
-- changes and queued customers not folded yet are part of what it recomputes, so it drops
-- them (the queue first, as metric_fold does).
CREATE OR REPLACE FUNCTION metric_rebuild(org uuid) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    d metric_hours[];
    s metric_subscription_deltas[];
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('till.metric_fold.' || org, 0));
    DELETE FROM metric_subscriber_queue WHERE organization_id = org;
    DELETE FROM metric_subscriber_islands WHERE organization_id = org;
    DELETE FROM metric_hours WHERE organization_id = org;
    DELETE FROM metric_subscription_deltas WHERE organization_id = org;
    DELETE FROM metric_quarters WHERE organization_id = org;
    DELETE FROM metric_subscription_quarters WHERE organization_id = org;
    DELETE FROM metric_days WHERE organization_id = org;
    DELETE FROM metric_subscription_days WHERE organization_id = org;
    DELETE FROM metric_hour_changes WHERE organization_id = org;
    DELETE FROM metric_subscription_delta_changes WHERE organization_id = org;
    INSERT INTO metric_subscriber_islands SELECT * FROM metric_subscriber_islands_of(ARRAY[org], NULL, NULL, true);
    d := array(
        SELECT c FROM orders r, metric_order_contribution(r, 1) c WHERE r.organization_id = org
        UNION ALL SELECT c FROM checkouts r, metric_checkout_contribution(r, 1) c WHERE r.organization_id = org
        UNION ALL SELECT c FROM subscriptions r, metric_subscription_contribution(r, 1) c
            WHERE r.organization_id = org);
    s := array(SELECT c FROM subscriptions r, metric_subscription_delta(r, 1) c WHERE r.organization_id = org
        UNION ALL SELECT c FROM metric_subscriber_islands i, metric_island_delta(i, 1) c WHERE i.organization_id = org);
    PERFORM metric_hours_add(d);
    PERFORM metric_subscription_deltas_add(s);
    PERFORM metric_quarters_add(d);
    PERFORM metric_subscription_quarters_add(s);
    PERFORM metric_days_add(d);
    PERFORM metric_subscription_days_add(s);
END $$;
-- +goose StatementEnd

-- Writers wait until the migration commits (their statements hold ROW EXCLUSIVE on the change
-- tables): what they appended per hour is folded now, and what they append after is per
-- quarter. Then the quarters are built from the base tables, which the rollups now equal.
LOCK TABLE metric_hour_changes, metric_subscription_delta_changes IN SHARE ROW EXCLUSIVE MODE;
SELECT metric_fold(id) FROM organizations;
SELECT metric_quarters_add(array(
        SELECT c FROM orders r, metric_order_contribution(r, 1) c WHERE r.organization_id = o.id
        UNION ALL SELECT c FROM checkouts r, metric_checkout_contribution(r, 1) c WHERE r.organization_id = o.id
        UNION ALL SELECT c FROM subscriptions r, metric_subscription_contribution(r, 1) c WHERE r.organization_id = o.id)),
    metric_subscription_quarters_add(array(
        SELECT c FROM subscriptions r, metric_subscription_delta(r, 1) c WHERE r.organization_id = o.id
        UNION ALL SELECT c FROM metric_subscriber_islands i, metric_island_delta(i, 1) c WHERE i.organization_id = o.id))
FROM organizations o;

-- +goose Down
LOCK TABLE metric_hour_changes, metric_subscription_delta_changes IN SHARE ROW EXCLUSIVE MODE;
SELECT metric_fold(id) FROM organizations;
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
    SELECT organization_id, date_trunc('hour', hour, 'UTC'), product_id, sum(active), sum(monthly_amount),
        sum(committed), sum(committed_monthly_amount), sum(trial_monthly_amount), sum(trial_committed_monthly_amount),
        sum(subscribers)
    FROM unnest(s)
    GROUP BY 1, 2, 3
    HAVING NOT (sum(active) = 0 AND sum(monthly_amount) = 0 AND sum(committed) = 0
        AND sum(committed_monthly_amount) = 0 AND sum(trial_monthly_amount) = 0
        AND sum(trial_committed_monthly_amount) = 0 AND sum(subscribers) = 0);
$$;

CREATE OR REPLACE FUNCTION metric_fold(org uuid) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    d metric_hours[];
    s metric_subscription_deltas[];
    c uuid[];
    was metric_subscriber_islands[];
    now_ metric_subscriber_islands[];
    n bigint;
    queued bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('till.metric_fold.' || org, 0));
    WITH x AS (DELETE FROM metric_hour_changes WHERE organization_id = org RETURNING *)
    SELECT coalesce(array_agg(ROW(x.*)::metric_hours), '{}') INTO d FROM x;
    WITH x AS (DELETE FROM metric_subscription_delta_changes WHERE organization_id = org RETURNING *)
    SELECT coalesce(array_agg(ROW(x.*)::metric_subscription_deltas), '{}') INTO s FROM x;
    n := cardinality(d) + cardinality(s);
    WITH x AS (DELETE FROM metric_subscriber_queue WHERE organization_id = org RETURNING customer_id)
    SELECT coalesce(array_agg(DISTINCT customer_id), '{}'), count(*) INTO c, queued FROM x;
    IF queued > 0 THEN
        WITH x AS (DELETE FROM metric_subscriber_islands WHERE organization_id = org AND customer_id = ANY(c) RETURNING *)
        SELECT coalesce(array_agg(ROW(x.*)::metric_subscriber_islands), '{}') INTO was FROM x;
        WITH x AS (INSERT INTO metric_subscriber_islands
                SELECT * FROM metric_subscriber_islands_of(ARRAY[org], c, NULL, true) RETURNING *)
        SELECT coalesce(array_agg(ROW(x.*)::metric_subscriber_islands), '{}') INTO now_ FROM x;
        s := s || array(SELECT e FROM (SELECT * FROM unnest(was) EXCEPT ALL SELECT * FROM unnest(now_)) x,
                metric_island_delta(ROW(x.*)::metric_subscriber_islands, -1) e)
            || array(SELECT e FROM (SELECT * FROM unnest(now_) EXCEPT ALL SELECT * FROM unnest(was)) x,
                metric_island_delta(ROW(x.*)::metric_subscriber_islands, 1) e);
    END IF;
    PERFORM metric_hours_add(d);
    PERFORM metric_subscription_deltas_add(s);
    PERFORM metric_days_add(d);
    PERFORM metric_subscription_days_add(s);
    RETURN n + queued;
END $$;

CREATE OR REPLACE FUNCTION metric_rebuild(org uuid) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    d metric_hours[];
    s metric_subscription_deltas[];
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('till.metric_fold.' || org, 0));
    DELETE FROM metric_subscriber_queue WHERE organization_id = org;
    DELETE FROM metric_subscriber_islands WHERE organization_id = org;
    DELETE FROM metric_hours WHERE organization_id = org;
    DELETE FROM metric_subscription_deltas WHERE organization_id = org;
    DELETE FROM metric_days WHERE organization_id = org;
    DELETE FROM metric_subscription_days WHERE organization_id = org;
    DELETE FROM metric_hour_changes WHERE organization_id = org;
    DELETE FROM metric_subscription_delta_changes WHERE organization_id = org;
    INSERT INTO metric_subscriber_islands SELECT * FROM metric_subscriber_islands_of(ARRAY[org], NULL, NULL, true);
    d := array(
        SELECT c FROM orders r, metric_order_contribution(r, 1) c WHERE r.organization_id = org
        UNION ALL SELECT c FROM checkouts r, metric_checkout_contribution(r, 1) c WHERE r.organization_id = org
        UNION ALL SELECT c FROM subscriptions r, metric_subscription_contribution(r, 1) c
            WHERE r.organization_id = org);
    s := array(SELECT c FROM subscriptions r, metric_subscription_delta(r, 1) c WHERE r.organization_id = org
        UNION ALL SELECT c FROM metric_subscriber_islands i, metric_island_delta(i, 1) c WHERE i.organization_id = org);
    PERFORM metric_hours_add(d);
    PERFORM metric_subscription_deltas_add(s);
    PERFORM metric_days_add(d);
    PERFORM metric_subscription_days_add(s);
END $$;
-- +goose StatementEnd
DROP FUNCTION metric_subscription_quarters_add(metric_subscription_deltas[]);
DROP FUNCTION metric_quarters_add(metric_hours[]);
DROP TABLE metric_subscription_quarters;
DROP TABLE metric_quarters;
