-- +goose Up
-- Usage-based billing: event types, usage events (range-partitioned by time), their dedupe
-- table, customer meter balances and billing entries that wait for the next cycle order.

-- event_types give each (organization, event name) a row, created on first ingest, carrying
-- a display label (optionally read from a metadata property).
CREATE TABLE event_types (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name text NOT NULL CHECK (length(name) <= 128),
    label text NOT NULL,
    label_property_selector text,
    CONSTRAINT event_types_organization_name_key UNIQUE (organization_id, name)
);

-- events are usage events (ingested with source 'user', or emitted by Till with source
-- 'system'). The table is RANGE-PARTITIONED by "timestamp" (monthly partitions named
-- events_pYYYYMM, plus events_default for anything outside them), so every unique index must
-- contain "timestamp": the primary key is (id, "timestamp") and external_id cannot be unique
-- here. Deduplication lives in event_external_ids below.
-- created_at is the ingestion time (upstream `ingested_at`); "timestamp" is when the event
-- happened. customer_id is set for events sent with a customer id; events sent with
-- external_customer_id keep only that and are linked to customers by
-- (organization_id, external_id) at read time, because that customer may not exist yet.
-- parent_reference is the raw ingest `parent_id` (an event UUID or an external_id); the
-- asynchronous resolver fills parent_id and root_id from it. No FK can point at this table's
-- id alone, so parent_id/root_id and references from other tables are plain uuids.
CREATE TABLE events (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    "timestamp" timestamptz NOT NULL DEFAULT now(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name text NOT NULL CHECK (length(name) <= 128),
    source text NOT NULL DEFAULT 'user' CHECK (source IN ('system', 'user')),
    customer_id uuid REFERENCES customers (id),
    external_customer_id text,
    member_id uuid REFERENCES members (id) ON DELETE SET NULL,
    external_member_id text,
    external_id text,
    parent_reference text,
    parent_id uuid,
    root_id uuid,
    event_type_id uuid REFERENCES event_types (id) ON DELETE SET NULL,
    metadata jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (id, "timestamp")
) PARTITION BY RANGE ("timestamp");
-- Meter aggregation: events of one name in an organization over a time window.
CREATE INDEX events_organization_name_timestamp_idx ON events (organization_id, name, "timestamp");
-- Customer usage, by customer id or by external customer id.
CREATE INDEX events_customer_timestamp_idx ON events (customer_id, "timestamp") WHERE customer_id IS NOT NULL;
CREATE INDEX events_external_customer_timestamp_idx ON events (organization_id, external_customer_id, "timestamp")
    WHERE external_customer_id IS NOT NULL;
CREATE INDEX events_member_timestamp_idx ON events (member_id, "timestamp") WHERE member_id IS NOT NULL;
-- Event lists, newest first.
CREATE INDEX events_organization_timestamp_idx ON events (organization_id, "timestamp" DESC);
CREATE INDEX events_parent_id_idx ON events (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX events_root_id_idx ON events (root_id) WHERE root_id IS NOT NULL;

-- events_default catches events outside every monthly partition (e.g. old backfills); it
-- should stay small, see ensure_event_partitions.
CREATE TABLE events_default PARTITION OF events DEFAULT;

-- ensure_event_partitions creates the monthly partitions of events (UTC months) for the month
-- containing p_from and the p_months - 1 following ones, skipping those that exist, and
-- returns how many it created. Run it ahead of time (a periodic job) so new events never land
-- in events_default. If events_default already holds rows of a month being created (e.g. a
-- backfill of old events), they are moved into the new partition in the same transaction.
-- Concurrent callers are serialized with a transaction-level advisory lock.
-- +goose StatementBegin
CREATE FUNCTION ensure_event_partitions(p_from timestamptz, p_months integer) RETURNS integer
    LANGUAGE plpgsql
AS $$
DECLARE
    v_schema text;
    v_first timestamp;
    v_lo timestamp;
    v_hi timestamp;
    v_name text;
    v_has_rows boolean;
    v_created integer := 0;
BEGIN
    IF p_from IS NULL OR p_months IS NULL OR p_months < 1 THEN
        RAISE EXCEPTION 'ensure_event_partitions: need a start time and months >= 1, got (%, %)',
            p_from, p_months;
    END IF;
    SELECT n.nspname INTO STRICT v_schema
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.oid = 'events'::regclass;
    PERFORM pg_advisory_xact_lock(hashtext('till.ensure_event_partitions'));

    -- Month arithmetic on timestamp (without time zone) in UTC, so the session TimeZone and
    -- daylight-saving changes cannot shift partition bounds.
    v_first := date_trunc('month', p_from AT TIME ZONE 'UTC');
    FOR i IN 0 .. p_months - 1 LOOP
        v_lo := v_first + make_interval(months => i);
        v_hi := v_first + make_interval(months => i + 1);
        v_name := 'events_p' || to_char(v_lo, 'YYYYMM');
        CONTINUE WHEN to_regclass(format('%I.%I', v_schema, v_name)) IS NOT NULL;

        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.events_default WHERE "timestamp" >= $1 AND "timestamp" < $2)',
            v_schema) INTO v_has_rows USING v_lo AT TIME ZONE 'UTC', v_hi AT TIME ZONE 'UTC';
        IF v_has_rows THEN
            EXECUTE format('CREATE TABLE %I.%I (LIKE %I.events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)',
                v_schema, v_name, v_schema);
            EXECUTE format('WITH moved AS (DELETE FROM %I.events_default WHERE "timestamp" >= $1 AND "timestamp" < $2 RETURNING *) '
                'INSERT INTO %I.%I SELECT * FROM moved', v_schema, v_schema, v_name)
                USING v_lo AT TIME ZONE 'UTC', v_hi AT TIME ZONE 'UTC';
            EXECUTE format('ALTER TABLE %I.events ATTACH PARTITION %I.%I FOR VALUES FROM (%L) TO (%L)',
                v_schema, v_schema, v_name,
                to_char(v_lo, 'YYYY-MM-DD HH24:MI:SS') || '+00', to_char(v_hi, 'YYYY-MM-DD HH24:MI:SS') || '+00');
        ELSE
            EXECUTE format('CREATE TABLE %I.%I PARTITION OF %I.events FOR VALUES FROM (%L) TO (%L)',
                v_schema, v_name, v_schema,
                to_char(v_lo, 'YYYY-MM-DD HH24:MI:SS') || '+00', to_char(v_hi, 'YYYY-MM-DD HH24:MI:SS') || '+00');
        END IF;
        v_created := v_created + 1;
    END LOOP;
    RETURN v_created;
END;
$$;
-- +goose StatementEnd

-- The current month and the next three; the partition job keeps extending ahead.
SELECT ensure_event_partitions(now(), 4);

-- event_external_ids is the deduplication index of events: UNIQUE(organization_id,
-- external_id) cannot exist on the partitioned events table (a unique index there must include
-- "timestamp", which would let the same external_id through at another timestamp). Ingest
-- inserts here first, in the same statement/transaction as the events:
--   WITH fresh AS (INSERT INTO event_external_ids (organization_id, external_id, event_id, event_timestamp)
--                  SELECT ... ON CONFLICT DO NOTHING RETURNING event_id)
--   INSERT INTO events ... WHERE external_id IS NULL OR id IN (SELECT event_id FROM fresh)
-- The primary key makes concurrent batches wait for each other and drop duplicates, including
-- repeats within one batch (the first wins). Rows are kept even if their event is later
-- dropped with an old partition, so an external_id is never accepted twice. The table also
-- resolves an ingest parent_id given as an external_id to (event_id, event_timestamp).
CREATE TABLE event_external_ids (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    external_id text NOT NULL,
    event_id uuid NOT NULL,
    event_timestamp timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (organization_id, external_id)
);

-- customer_meters keep each customer's running balance on a meter (consumption against
-- credits from meter_credit benefits). last_balanced_event_id is the last event folded in;
-- it is a plain uuid because events is partitioned.
CREATE TABLE customer_meters (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    meter_id uuid NOT NULL REFERENCES meters (id) ON DELETE CASCADE,
    consumed_units numeric NOT NULL DEFAULT 0,
    credited_units bigint NOT NULL DEFAULT 0,
    balance numeric NOT NULL DEFAULT 0,
    last_balanced_event_id uuid,
    CONSTRAINT customer_meters_customer_meter_key UNIQUE (customer_id, meter_id)
);
CREATE INDEX customer_meters_meter_id_idx ON customer_meters (meter_id);
CREATE INDEX customer_meters_organization_created_at_idx ON customer_meters (organization_id, created_at DESC);

-- billing_entries accumulate what a subscription owes or is owed between cycle orders:
-- prorations of mid-period changes, and metered usage (amount computed at cycle time). The
-- next cycle order turns the pending ones (order_item_id IS NULL) into order items.
CREATE TABLE billing_entries (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    type text NOT NULL CHECK (type IN ('cycle', 'proration', 'metered')),
    direction text NOT NULL CHECK (direction IN ('debit', 'credit')),
    start_timestamp timestamptz NOT NULL,
    end_timestamp timestamptz NOT NULL,
    amount bigint CHECK (amount >= 0),
    discount_amount bigint CHECK (discount_amount >= 0),
    currency text,
    customer_id uuid NOT NULL REFERENCES customers (id),
    subscription_id uuid REFERENCES subscriptions (id) ON DELETE CASCADE,
    product_price_id uuid NOT NULL REFERENCES product_prices (id),
    discount_id uuid REFERENCES discounts (id) ON DELETE SET NULL,
    event_id uuid,
    order_item_id uuid REFERENCES order_items (id) ON DELETE SET NULL,
    CONSTRAINT billing_entries_priced CHECK (type = 'metered' OR (amount IS NOT NULL AND currency IS NOT NULL)),
    CONSTRAINT billing_entries_window CHECK (start_timestamp <= end_timestamp)
);
CREATE INDEX billing_entries_pending_idx ON billing_entries (subscription_id, product_price_id)
    WHERE order_item_id IS NULL;
CREATE INDEX billing_entries_customer_id_idx ON billing_entries (customer_id);
CREATE INDEX billing_entries_order_item_id_idx ON billing_entries (order_item_id) WHERE order_item_id IS NOT NULL;

-- +goose Down
DROP TABLE billing_entries, customer_meters, event_external_ids;
DROP FUNCTION ensure_event_partitions(timestamptz, integer);
DROP TABLE events, event_types;
