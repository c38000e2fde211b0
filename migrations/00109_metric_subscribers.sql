-- +goose Up
-- The subscription stocks gain subscribers: the number of distinct customers holding an active
-- subscription (trials included) at the end of a period, which average revenue per user
-- divides the monthly recurring revenue by. Per product it counts the product's subscribers;
-- under the all-products id ffffffff-ffff-ffff-ffff-ffffffffffff (00105_metric_all_products)
-- the organization's, which is not the sum of its products' (a customer of two products is
-- one subscriber of all products).
--
-- A distinct count cannot be summed subscription by subscription, so the statement triggers
-- cannot write it as they write active. Its changes come per customer "island": the union of
-- the active intervals [started_at, ended_at) of a customer's subscriptions (of one product,
-- or of all products) is a set of disjoint islands, each adding +1 subscriber at its start and
-- -1 at its end. Touching intervals merge (the count at their meeting point is the same
-- either way, and one island is fewer rows).
--
--   - metric_subscriber_queue: the subscription triggers append (organization, customer) for
--     each customer whose islands a statement may have changed (a subscription inserted,
--     deleted, or changed in customer, product, started_at, ended_at or deleted_at; both the
--     old and the new customer). An append is the only write: no row another writer holds
--     is touched, as with the change tables of 00096_metric_changes.
--   - metric_subscriber_islands: the islands folded into the rollups, per (customer, product)
--     and per (customer, all products).
--   - metric_fold takes the queue rows it sees (deleting them first, so that a writer whose
--     row it took committed before it reads the subscriptions), recomputes those customers'
--     islands from subscriptions, adds the islands that changed (new ones +, gone ones -) as
--     subscriber changes to the hourly and daily rollups, and stores the new islands, in its
--     transaction. It now takes the organization's fold lock itself: two folds recomputing
--     one customer at once would both subtract the same old islands. The queue has no key:
--     a customer queued twice is recomputed once.
--   - Readers stay exact without a fold: for the customers still queued they add (fresh
--     islands from subscriptions) - (stored islands) as stock changes, in their statement
--     (storage.metricsSubscribersQueued). A customer not queued has stored islands equal to
--     fresh ones, in every snapshot: its writers' queue rows commit with their changes, and a
--     fold deletes only rows committed before it reads subscriptions.
--
-- The hourly rollups now hold rows under the all-products id too, with subscribers only (its
-- other columns stay 0, so sums over every hourly row are unchanged); readers of all products
-- take the subscribers of those rows alone. The daily all-products row's subscribers are
-- those of the all-products islands, not the sum of the products' rows; every other column
-- is still the products' sum.
ALTER TABLE metric_subscription_deltas ADD COLUMN subscribers bigint NOT NULL DEFAULT 0;
ALTER TABLE metric_subscription_delta_changes ADD COLUMN subscribers bigint NOT NULL DEFAULT 0;

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
    subscribers bigint NOT NULL DEFAULT 0,
    align smallint NOT NULL CHECK (align BETWEEN 0 AND 23),
    PRIMARY KEY (organization_id, align, day, product_id)
);

CREATE TABLE metric_subscriber_queue (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    customer_id uuid NOT NULL
);
CREATE INDEX metric_subscriber_queue_organization_idx ON metric_subscriber_queue (organization_id);

-- ended_at is NULL for an island still open.
CREATE TABLE metric_subscriber_islands (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    customer_id uuid NOT NULL,
    product_id uuid NOT NULL,
    started_at timestamptz NOT NULL,
    ended_at timestamptz,
    PRIMARY KEY (organization_id, customer_id, product_id, started_at)
);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION metric_subscription_delta(x subscriptions, s bigint) RETURNS SETOF metric_subscription_deltas
LANGUAGE sql STABLE AS $$
    SELECT x.organization_id, e.at, x.product_id, s * e.active, s * e.paying * b.amount,
        s * e.committed, s * e.committed_paying * b.amount, s * e.trial * b.amount, s * e.committed_trial * b.amount,
        0::bigint
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

-- metric_subscriber_islands_of computes from subscriptions the islands of the customers of
-- orgs (of customers when not NULL), over the subscriptions of products (all when NULL). With
-- split, per product and per all products (under ffffffff-…); without, one set per customer
-- over the subscriptions selected, under a NULL product: a reader narrowed to some customers
-- counts their distinct subscribers so. An island's end is NULL while it is open. It is
-- written to be inlined into its callers' statements: the two branches over subscriptions let
-- the plan look customers up by their index, or scan the organization's subscriptions, the
-- other branch's condition on customers being checked once (a "customers IS NULL OR"
-- condition would be checked per row). Readers pass arguments holding no subquery (a column
-- of a row before the function in the FROM list), which would keep it from being inlined.
CREATE FUNCTION metric_subscriber_islands_of(orgs uuid[], customers uuid[], products uuid[], split boolean)
RETURNS SETOF metric_subscriber_islands LANGUAGE sql STABLE AS $$
    SELECT organization_id, customer_id, product_id, min(started_at), nullif(max(ended_at), 'infinity')
    FROM (SELECT *, count(*) FILTER (WHERE reach IS NULL OR started_at > reach) OVER (
                PARTITION BY organization_id, customer_id, product_id ORDER BY started_at, ended_at
                ROWS UNBOUNDED PRECEDING) AS island
        FROM (SELECT x.organization_id, x.customer_id, k.product_id, x.started_at,
                coalesce(x.ended_at, 'infinity') AS ended_at,
                max(coalesce(x.ended_at, 'infinity')) OVER (PARTITION BY x.organization_id, x.customer_id, k.product_id
                    ORDER BY x.started_at, coalesce(x.ended_at, 'infinity')
                    ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
            FROM (SELECT * FROM subscriptions WHERE customer_id = ANY(customers) AND organization_id = ANY(orgs)
                    UNION ALL SELECT * FROM subscriptions WHERE organization_id = ANY(orgs) AND customers IS NULL) x,
                LATERAL (SELECT x.product_id WHERE split
                    UNION ALL SELECT CASE WHEN split THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid END) k (product_id)
            WHERE (products IS NULL OR x.product_id = ANY(products))
                AND x.deleted_at IS NULL AND x.started_at IS NOT NULL
                AND (x.ended_at IS NULL OR x.ended_at > x.started_at)) s) g
    GROUP BY organization_id, customer_id, product_id, island
$$;

-- metric_island_delta is an island's subscriber changes, times s, at their exact times.
CREATE FUNCTION metric_island_delta(i metric_subscriber_islands, s bigint) RETURNS SETOF metric_subscription_deltas
LANGUAGE sql IMMUTABLE AS $$
    SELECT i.organization_id, e.at, i.product_id, 0::bigint, 0::numeric, 0::bigint, 0::numeric, 0::numeric, 0::numeric,
        s * e.sign
    FROM (VALUES (i.started_at, 1::bigint), (i.ended_at, -1::bigint)) e (at, sign)
    WHERE e.at IS NOT NULL
$$;

CREATE OR REPLACE FUNCTION metric_subscription_deltas_add(d metric_subscription_deltas[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO metric_subscription_deltas AS m
    SELECT organization_id, date_trunc('hour', hour, 'UTC'), product_id, sum(active), sum(monthly_amount),
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

-- metric_subscription_days_add writes each day of a product and of all products. The rows of
-- the all-products islands (product ffffffff-…, subscribers only) give the all-products row
-- its subscribers and no product row of their own.
CREATE OR REPLACE FUNCTION metric_subscription_days_add(d metric_subscription_deltas[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO metric_subscription_days AS m
    SELECT * FROM (
        SELECT organization_id, s.day,
            CASE WHEN grouping(product_id) = 1 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid ELSE product_id END,
            sum(active) AS active, sum(monthly_amount) AS monthly_amount, sum(committed) AS committed,
            sum(committed_monthly_amount) AS committed_monthly_amount, sum(trial_monthly_amount) AS trial_monthly_amount,
            sum(trial_committed_monthly_amount) AS trial_committed_monthly_amount,
            CASE WHEN grouping(product_id) = 1
                THEN coalesce(sum(subscribers) FILTER (WHERE product_id = 'ffffffff-ffff-ffff-ffff-ffffffffffff'), 0)
                ELSE sum(subscribers) END AS subscribers,
            extract(hour FROM s.day AT TIME ZONE 'UTC')::smallint AS align
        FROM (SELECT organization_id, date_trunc('hour', hour, 'UTC') AS hour, product_id, sum(active) AS active,
                sum(monthly_amount) AS monthly_amount, sum(committed) AS committed,
                sum(committed_monthly_amount) AS committed_monthly_amount, sum(trial_monthly_amount) AS trial_monthly_amount,
                sum(trial_committed_monthly_amount) AS trial_committed_monthly_amount, sum(subscribers) AS subscribers
            FROM unnest(d) GROUP BY 1, 2, 3) h, metric_day_starts(h.hour) s (day)
        GROUP BY GROUPING SETS ((organization_id, s.day, product_id), (organization_id, s.day))
        HAVING grouping(product_id) = 1 OR product_id <> 'ffffffff-ffff-ffff-ffff-ffffffffffff') r
    WHERE NOT (active = 0 AND monthly_amount = 0 AND committed = 0 AND committed_monthly_amount = 0
        AND trial_monthly_amount = 0 AND trial_committed_monthly_amount = 0 AND subscribers = 0)
    ORDER BY organization_id, align, day, product_id
    ON CONFLICT (organization_id, align, day, product_id) DO UPDATE SET
        active = m.active + excluded.active, monthly_amount = m.monthly_amount + excluded.monthly_amount,
        committed = m.committed + excluded.committed,
        committed_monthly_amount = m.committed_monthly_amount + excluded.committed_monthly_amount,
        trial_monthly_amount = m.trial_monthly_amount + excluded.trial_monthly_amount,
        trial_committed_monthly_amount = m.trial_committed_monthly_amount + excluded.trial_committed_monthly_amount,
        subscribers = m.subscribers + excluded.subscribers
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
        sum(committed), sum(committed_monthly_amount), sum(trial_monthly_amount), sum(trial_committed_monthly_amount),
        sum(subscribers)
    FROM unnest(s)
    GROUP BY 1, 2, 3
    HAVING NOT (sum(active) = 0 AND sum(monthly_amount) = 0 AND sum(committed) = 0
        AND sum(committed_monthly_amount) = 0 AND sum(trial_monthly_amount) = 0
        AND sum(trial_committed_monthly_amount) = 0 AND sum(subscribers) = 0);
$$;

-- The triggers queue the customers whose active intervals a statement changed: the rows (as
-- what islands read of them) that the statement removed and those it added, compared as
-- multisets, so that an update of other columns queues nothing.
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
    IF TG_OP = 'INSERT' THEN
        INSERT INTO metric_subscriber_queue
        SELECT DISTINCT organization_id, customer_id FROM new_rows
        WHERE started_at IS NOT NULL AND deleted_at IS NULL;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO metric_subscriber_queue
        SELECT DISTINCT organization_id, customer_id FROM old_rows
        WHERE started_at IS NOT NULL AND deleted_at IS NULL;
    ELSE
        INSERT INTO metric_subscriber_queue
        SELECT DISTINCT organization_id, customer_id FROM (
            (SELECT organization_id, customer_id, product_id, started_at, ended_at FROM old_rows
                WHERE started_at IS NOT NULL AND deleted_at IS NULL
            EXCEPT ALL SELECT organization_id, customer_id, product_id, started_at, ended_at FROM new_rows
                WHERE started_at IS NOT NULL AND deleted_at IS NULL)
            UNION ALL
            (SELECT organization_id, customer_id, product_id, started_at, ended_at FROM new_rows
                WHERE started_at IS NOT NULL AND deleted_at IS NULL
            EXCEPT ALL SELECT organization_id, customer_id, product_id, started_at, ended_at FROM old_rows
                WHERE started_at IS NOT NULL AND deleted_at IS NULL)) c;
    END IF;
    RETURN NULL;
END $$;

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

SELECT metric_rebuild(id) FROM organizations;

-- +goose Down
-- The dropped subscribers columns leave metric_subscription_days with its former columns, in
-- order.
DROP FUNCTION metric_island_delta(metric_subscriber_islands, bigint);
DROP FUNCTION metric_subscriber_islands_of(uuid[], uuid[], uuid[], boolean);
DROP TABLE metric_subscriber_islands;
DROP TABLE metric_subscriber_queue;
ALTER TABLE metric_subscription_days DROP COLUMN subscribers;
ALTER TABLE metric_subscription_delta_changes DROP COLUMN subscribers;
ALTER TABLE metric_subscription_deltas DROP COLUMN subscribers;
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
CREATE OR REPLACE FUNCTION metric_fold(org uuid) RETURNS bigint LANGUAGE plpgsql AS $$
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
SELECT metric_rebuild(id) FROM organizations;
