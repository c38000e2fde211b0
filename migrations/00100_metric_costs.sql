-- +goose Up
-- Usage costs and active users for metrics, from the events' _cost metadata and customers.
--
-- Ingestion is the busiest write and takes no lock, so these rollups are not written by it:
-- metric_events_fold reads each organization's events by the id of the transaction that
-- ingested them (events.xid, migration 00091_live_usage). Every transaction older than the
-- snapshot's xmin has ended, so the events below that horizon are final; the fold adds those
-- between the organization's last horizon (metric_event_folds.below) and the current one.
-- Readers sum the rollups and the events at or above the organization's horizon in one
-- statement, so that every committed event counts once, folded or not.
--
-- Both rollups are cut in quarter hours (UTC), as upstream cuts them: every zone's offset
-- today is a whole number of quarter hours, so they cut into any zone's periods exactly.
--
-- metric_cost_quarters sums the costs of an organization per quarter hour: what the costs
-- series and the history before a window (cumulative costs) read.
CREATE TABLE metric_cost_quarters (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    quarter timestamptz NOT NULL,
    costs numeric NOT NULL,
    PRIMARY KEY (organization_id, quarter)
);

-- metric_user_quarters names who sent events in a quarter hour, as the events name them (a
-- customer id, an external customer id, or both), with what their events cost: active users
-- count them, and the costs of some customers read them.
CREATE TABLE metric_user_quarters (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    quarter timestamptz NOT NULL,
    customer_id uuid,
    external_customer_id text,
    costs numeric NOT NULL,
    events bigint NOT NULL
);
CREATE UNIQUE INDEX metric_user_quarters_key ON metric_user_quarters
    (organization_id, quarter, customer_id, external_customer_id) NULLS NOT DISTINCT;

-- metric_event_folds is each organization's horizon: its events of transactions below it are
-- in the rollups. An organization without a row has folded nothing.
CREATE TABLE metric_event_folds (
    organization_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    below xid8 NOT NULL
);

-- +goose StatementBegin
-- event_cost is the cost an event's metadata declares, in cents: _cost.amount when it is a
-- number or a decimal string (REST keeps the decimal as sent), else NULL, so that a word
-- counts as no cost rather than failing every read. Both ingestion paths bound the amount to
-- 17 digits and 12 places, but events stored before GraphQL checked it may hold anything:
-- the amount is rounded to 12 places and bounded as meters bound values, so that every sum
-- reads as a finite float8 (1e-400 would underflow it). One expression, so that PostgreSQL
-- inlines it.
CREATE FUNCTION event_cost(m jsonb) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE jsonb_typeof(m -> '_cost' -> 'amount')
        WHEN 'number' THEN least(greatest(round((m -> '_cost' ->> 'amount')::numeric, 12), -1e280), 1e280)
        WHEN 'string' THEN CASE WHEN m -> '_cost' ->> 'amount' ~ '^[-+]?([0-9]{1,30}(\.[0-9]{0,30})?|\.[0-9]{1,30})$'
            THEN round((m -> '_cost' ->> 'amount')::numeric, 12) END
    END
$$;

-- metric_event_quarter is the UTC quarter hour holding t.
CREATE FUNCTION metric_event_quarter(t timestamptz) RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT date_bin('15 minutes', t, timestamptz '2000-01-01 00:00:00+00')
$$;

-- metric_events_fold adds org's events below the current horizon that earlier folds did not
-- add, and returns how many. Concurrent folds of one organization wait for each other on its
-- horizon row; the later one then folds from the horizon the earlier one left.
CREATE FUNCTION metric_events_fold(org uuid) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    hi xid8 := pg_snapshot_xmin(pg_current_snapshot());
    lo xid8;
    n bigint;
BEGIN
    INSERT INTO metric_event_folds VALUES (org, '0') ON CONFLICT DO NOTHING;
    SELECT below INTO lo FROM metric_event_folds WHERE organization_id = org FOR UPDATE;
    IF lo >= hi THEN
        RETURN 0;
    END IF;
    WITH batch AS (
        SELECT metric_event_quarter("timestamp") AS quarter, customer_id, external_customer_id,
            coalesce(sum(event_cost(metadata)), 0) AS costs, count(*) AS events
        FROM events WHERE organization_id = org AND xid >= lo AND xid < hi
        GROUP BY 1, 2, 3
    ), users AS (
        INSERT INTO metric_user_quarters AS t
        SELECT org, quarter, customer_id, external_customer_id, costs, events FROM batch ORDER BY 2, 3, 4
        ON CONFLICT (organization_id, quarter, customer_id, external_customer_id)
            DO UPDATE SET costs = t.costs + EXCLUDED.costs, events = t.events + EXCLUDED.events
    ), costs AS (
        INSERT INTO metric_cost_quarters AS t
        SELECT org, quarter, sum(costs) FROM batch GROUP BY 2 HAVING sum(costs) <> 0 ORDER BY 2
        ON CONFLICT (organization_id, quarter) DO UPDATE SET costs = t.costs + EXCLUDED.costs
    )
    SELECT coalesce(sum(events), 0) INTO n FROM batch;
    UPDATE metric_event_folds SET below = hi WHERE organization_id = org;
    RETURN n;
END
$$;
-- +goose StatementEnd

-- The events before this migration (those ingested before 00091_live_usage have no xid) are
-- folded now; later ones from the horizon on.
INSERT INTO metric_user_quarters
SELECT organization_id, metric_event_quarter("timestamp"), customer_id, external_customer_id,
    coalesce(sum(event_cost(metadata)), 0), count(*)
FROM events WHERE xid IS NULL OR xid < pg_snapshot_xmin(pg_current_snapshot())
GROUP BY 1, 2, 3, 4;
INSERT INTO metric_cost_quarters
SELECT organization_id, quarter, sum(costs) FROM metric_user_quarters GROUP BY 1, 2 HAVING sum(costs) <> 0;
INSERT INTO metric_event_folds SELECT id, pg_snapshot_xmin(pg_current_snapshot()) FROM organizations;

-- +goose Down
DROP FUNCTION metric_events_fold(uuid);
DROP FUNCTION metric_event_quarter(timestamptz);
DROP FUNCTION event_cost(jsonb);
DROP TABLE metric_event_folds, metric_user_quarters, metric_cost_quarters;
