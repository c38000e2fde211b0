-- +goose Up
-- The daily rollups (00095_metric_days) also hold, under the product id
-- ffffffff-ffff-ffff-ffff-ffffffffffff (no product has it: product ids are random UUIDs, and
-- orders without a product count under the nil UUID), each day's sum over all the organization's products. A read of all products
-- takes one row a day instead of one per product and day: a year of daily points over ten
-- products read 3,650 flow rows and 7,300 stock rows, and over a thousand products would read
-- a thousand times as many. A read narrowed to some products takes their rows, picked in the
-- index lookup. The hourly rollups and the unfolded changes stay per product only: they
-- serve short windows, the days of daylight saving time changes and the last seconds.
--
-- metric_days_add and metric_subscription_days_add write both levels in one upsert per key, in
-- key order (the all-products key sorts after every product's of its day), so the fold, the
-- triggers and metric_rebuild keep them equal without another writer.
-- +goose StatementBegin
-- metric_days_add folds contributions, as metric_hours_add takes them, into metric_days: summed
-- per hour first (a bulk statement's rows are many per hour), then into each day covering the
-- hour, of the product and of all products; one upsert per key in key order, none for keys
-- whose changes cancel out.
CREATE OR REPLACE FUNCTION metric_days_add(d metric_hours[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO metric_days AS m
    SELECT organization_id, s.day, CASE WHEN grouping(product_id) = 1 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid ELSE product_id END,
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
    GROUP BY GROUPING SETS ((organization_id, s.day, product_id), (organization_id, s.day))
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

-- +goose StatementEnd

INSERT INTO metric_days
SELECT organization_id, day, 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid, sum(orders), sum(revenue), sum(net_revenue), sum(one_time_orders), sum(one_time_revenue), sum(one_time_net_revenue), sum(new_orders), sum(new_revenue), sum(new_net_revenue), sum(renewal_orders), sum(renewal_revenue), sum(renewal_net_revenue), sum(checkouts), sum(succeeded_checkouts), sum(canceled), sum(canceled_customer_service), sum(canceled_low_quality), sum(canceled_missing_features), sum(canceled_switched_service), sum(canceled_too_complex), sum(canceled_too_expensive), sum(canceled_unused), sum(canceled_other), sum(churned), align
FROM metric_days GROUP BY organization_id, align, day
HAVING NOT (sum(orders) = 0 AND sum(revenue) = 0 AND sum(net_revenue) = 0 AND sum(one_time_orders) = 0 AND sum(one_time_revenue) = 0 AND sum(one_time_net_revenue) = 0 AND sum(new_orders) = 0 AND sum(new_revenue) = 0 AND sum(new_net_revenue) = 0 AND sum(renewal_orders) = 0 AND sum(renewal_revenue) = 0 AND sum(renewal_net_revenue) = 0 AND sum(checkouts) = 0 AND sum(succeeded_checkouts) = 0 AND sum(canceled) = 0 AND sum(canceled_customer_service) = 0 AND sum(canceled_low_quality) = 0 AND sum(canceled_missing_features) = 0 AND sum(canceled_switched_service) = 0 AND sum(canceled_too_complex) = 0 AND sum(canceled_too_expensive) = 0 AND sum(canceled_unused) = 0 AND sum(canceled_other) = 0 AND sum(churned) = 0)
ORDER BY organization_id, align, day;

INSERT INTO metric_subscription_days
SELECT organization_id, day, 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid, sum(active), sum(monthly_amount), align
FROM metric_subscription_days GROUP BY organization_id, align, day
HAVING NOT (sum(active) = 0 AND sum(monthly_amount) = 0)
ORDER BY organization_id, align, day;

-- +goose Down
DELETE FROM metric_days WHERE product_id = 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid;
DELETE FROM metric_subscription_days WHERE product_id = 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid;
-- +goose StatementBegin
-- metric_days_add folds contributions, as metric_hours_add takes them, into metric_days: summed
-- per hour first (a bulk statement's rows are many per hour), then into each day covering the
-- hour; one upsert per key in key order, none for keys whose changes cancel out.
CREATE OR REPLACE FUNCTION metric_days_add(d metric_hours[]) RETURNS void LANGUAGE sql AS $$
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

CREATE OR REPLACE FUNCTION metric_subscription_days_add(d metric_subscription_deltas[]) RETURNS void LANGUAGE sql AS $$
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

-- +goose StatementEnd
