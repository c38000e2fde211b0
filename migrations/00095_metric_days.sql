-- +goose Up
-- Daily rollups, so that a year of daily points reads one row per product and day (a few
-- thousand) instead of one per product and hour (about a hundred thousand).
--
-- A day of a time zone whose offset is whole hours is 24 consecutive UTC hours that start at
-- one of the 24 hours of a UTC day, which one its offset says. metric_days therefore holds, for
-- every UTC hour a day can start at, the sum of metric_hours over the 24 hours from that hour
-- (day); align, 0 to 23, is day's hour in UTC. UTC days are align 0, New York's are align 5 in
-- winter and 4 in summer, Tokyo's align 15. A reader of one zone's days reads the rows of its
-- one or two alignments; its days that are not 24 hours long (daylight saving time changes)
-- read their hours from metric_hours, and zones whose offset is not whole hours read the base
-- tables (storage.MetricsFilter.Exact). metric_subscription_days does the same for
-- metric_subscription_deltas, so that the stock before a window is the sum of the rows of the
-- window's alignment before it. The columns are those of the hourly table (day for hour), then
-- align, so that a reader sums rows of either level alike.
--
-- The statement triggers that keep the hourly rollups add each hour's contribution to the 24
-- days covering it, after the hours, one upsert per key in key order: both levels stay exact in
-- the transaction of the change, and metric_rebuild recomputes both.
CREATE TABLE metric_days (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    day timestamptz NOT NULL,
    product_id uuid NOT NULL,
    orders bigint NOT NULL DEFAULT 0, revenue bigint NOT NULL DEFAULT 0,
    net_revenue bigint NOT NULL DEFAULT 0, one_time_orders bigint NOT NULL DEFAULT 0,
    one_time_revenue bigint NOT NULL DEFAULT 0, one_time_net_revenue bigint NOT NULL DEFAULT 0,
    new_orders bigint NOT NULL DEFAULT 0, new_revenue bigint NOT NULL DEFAULT 0,
    new_net_revenue bigint NOT NULL DEFAULT 0, renewal_orders bigint NOT NULL DEFAULT 0,
    renewal_revenue bigint NOT NULL DEFAULT 0, renewal_net_revenue bigint NOT NULL DEFAULT 0,
    checkouts bigint NOT NULL DEFAULT 0, succeeded_checkouts bigint NOT NULL DEFAULT 0,
    canceled bigint NOT NULL DEFAULT 0, canceled_customer_service bigint NOT NULL DEFAULT 0,
    canceled_low_quality bigint NOT NULL DEFAULT 0,
    canceled_missing_features bigint NOT NULL DEFAULT 0,
    canceled_switched_service bigint NOT NULL DEFAULT 0,
    canceled_too_complex bigint NOT NULL DEFAULT 0,
    canceled_too_expensive bigint NOT NULL DEFAULT 0, canceled_unused bigint NOT NULL DEFAULT 0,
    canceled_other bigint NOT NULL DEFAULT 0, churned bigint NOT NULL DEFAULT 0,
    align smallint NOT NULL CHECK (align BETWEEN 0 AND 23),
    PRIMARY KEY (organization_id, align, day, product_id)
);

CREATE TABLE metric_subscription_days (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    day timestamptz NOT NULL,
    product_id uuid NOT NULL,
    active bigint NOT NULL DEFAULT 0,
    monthly_amount numeric NOT NULL DEFAULT 0,
    align smallint NOT NULL CHECK (align BETWEEN 0 AND 23),
    PRIMARY KEY (organization_id, align, day, product_id)
);

-- +goose StatementBegin
-- metric_day_starts are the starts of the 24 days of 24 hours that cover the hour of at.
CREATE FUNCTION metric_day_starts(at timestamptz) RETURNS SETOF timestamptz LANGUAGE sql IMMUTABLE AS $$
    SELECT generate_series(date_trunc('hour', at, 'UTC') - interval '23 hours', date_trunc('hour', at, 'UTC'),
        interval '1 hour')
$$;

-- metric_days_add folds contributions, as metric_hours_add takes them, into metric_days: summed
-- per hour first (a bulk statement's rows are many per hour), then into each day covering the
-- hour; one upsert per key in key order, none for keys whose changes cancel out.
CREATE FUNCTION metric_days_add(d metric_hours[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO metric_days AS m
    SELECT organization_id, s.day, product_id,
        sum(orders), sum(revenue), sum(net_revenue), sum(one_time_orders), sum(one_time_revenue),
        sum(one_time_net_revenue), sum(new_orders), sum(new_revenue), sum(new_net_revenue),
        sum(renewal_orders), sum(renewal_revenue), sum(renewal_net_revenue), sum(checkouts),
        sum(succeeded_checkouts), sum(canceled), sum(canceled_customer_service),
        sum(canceled_low_quality), sum(canceled_missing_features), sum(canceled_switched_service),
        sum(canceled_too_complex), sum(canceled_too_expensive), sum(canceled_unused),
        sum(canceled_other), sum(churned), extract(hour FROM s.day AT TIME ZONE 'UTC')::smallint AS align
    FROM (SELECT organization_id, date_trunc('hour', hour, 'UTC') AS hour, product_id,
            sum(orders) AS orders, sum(revenue) AS revenue, sum(net_revenue) AS net_revenue,
            sum(one_time_orders) AS one_time_orders, sum(one_time_revenue) AS one_time_revenue,
            sum(one_time_net_revenue) AS one_time_net_revenue, sum(new_orders) AS new_orders,
            sum(new_revenue) AS new_revenue, sum(new_net_revenue) AS new_net_revenue,
            sum(renewal_orders) AS renewal_orders, sum(renewal_revenue) AS renewal_revenue,
            sum(renewal_net_revenue) AS renewal_net_revenue, sum(checkouts) AS checkouts,
            sum(succeeded_checkouts) AS succeeded_checkouts, sum(canceled) AS canceled,
            sum(canceled_customer_service) AS canceled_customer_service,
            sum(canceled_low_quality) AS canceled_low_quality,
            sum(canceled_missing_features) AS canceled_missing_features,
            sum(canceled_switched_service) AS canceled_switched_service,
            sum(canceled_too_complex) AS canceled_too_complex,
            sum(canceled_too_expensive) AS canceled_too_expensive,
            sum(canceled_unused) AS canceled_unused, sum(canceled_other) AS canceled_other,
            sum(churned) AS churned
        FROM unnest(d) GROUP BY 1, 2, 3) h, metric_day_starts(h.hour) s (day)
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
        sum(canceled_unused) = 0 AND sum(canceled_other) = 0 AND sum(churned) = 0)
    ORDER BY 1, align, 2, 3
    ON CONFLICT (organization_id, align, day, product_id) DO UPDATE SET
        orders = m.orders + excluded.orders, revenue = m.revenue + excluded.revenue,
        net_revenue = m.net_revenue + excluded.net_revenue,
        one_time_orders = m.one_time_orders + excluded.one_time_orders,
        one_time_revenue = m.one_time_revenue + excluded.one_time_revenue,
        one_time_net_revenue = m.one_time_net_revenue + excluded.one_time_net_revenue,
        new_orders = m.new_orders + excluded.new_orders,
        new_revenue = m.new_revenue + excluded.new_revenue,
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

CREATE FUNCTION metric_subscription_days_add(d metric_subscription_deltas[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO metric_subscription_days AS m
    SELECT organization_id, s.day, product_id, sum(active), sum(monthly_amount),
        extract(hour FROM s.day AT TIME ZONE 'UTC')::smallint AS align
    FROM (SELECT organization_id, date_trunc('hour', hour, 'UTC') AS hour, product_id, sum(active) AS active,
            sum(monthly_amount) AS monthly_amount
        FROM unnest(d) GROUP BY 1, 2, 3) h, metric_day_starts(h.hour) s (day)
    GROUP BY 1, 2, 3
    HAVING NOT (sum(active) = 0 AND sum(monthly_amount) = 0)
    ORDER BY 1, align, 2, 3
    ON CONFLICT (organization_id, align, day, product_id) DO UPDATE SET
        active = m.active + excluded.active, monthly_amount = m.monthly_amount + excluded.monthly_amount
$$;

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

-- The daily rollups of the data already there come from the hourly ones, which are exact.
SELECT metric_days_add(array(SELECT m FROM metric_hours m WHERE m.organization_id = o.id)),
    metric_subscription_days_add(array(SELECT m FROM metric_subscription_deltas m WHERE m.organization_id = o.id))
FROM organizations o;

-- +goose Down
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
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION metric_rebuild(org uuid) RETURNS void LANGUAGE plpgsql AS $$
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
DROP FUNCTION metric_subscription_days_add(metric_subscription_deltas[]);
DROP FUNCTION metric_days_add(metric_hours[]);
DROP FUNCTION metric_day_starts(timestamptz);
DROP TABLE metric_subscription_days;
DROP TABLE metric_days;
