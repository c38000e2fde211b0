-- +goose Up
-- Daily meter rollups, so a month's quantity reads about thirty rows per customer instead of
-- every event of that month.

-- meter_rollups hold, per meter, UTC day and customer key, the partial aggregate of the
-- events that enter the meter: how many (events), and the sum, minimum and maximum of their
-- values. Count, sum, min, max and avg combine from these exactly; unique does not and is
-- never rolled up. The customer key is the pair an event was sent with (customer_id,
-- external_customer_id), either of which may be NULL, so a quantity can match both ways an
-- event names its customer, as the raw query does.
CREATE TABLE meter_rollups (
    meter_id uuid NOT NULL REFERENCES meters (id) ON DELETE CASCADE,
    day timestamptz NOT NULL,
    customer_id uuid,
    external_customer_id text,
    events bigint NOT NULL,
    total float8,
    minimum float8,
    maximum float8
);
CREATE INDEX meter_rollups_customer_idx ON meter_rollups (meter_id, customer_id, day) WHERE customer_id IS NOT NULL;
CREATE INDEX meter_rollups_external_customer_idx ON meter_rollups (meter_id, external_customer_id, day)
    WHERE external_customer_id IS NOT NULL;
CREATE INDEX meter_rollups_day_idx ON meter_rollups (meter_id, day);

-- meter_rollup_states say how far each meter's rollups reach: every UTC day before
-- rolled_to is in meter_rollups, except days named in event_day_changes (which readers take
-- from the events). filter and aggregation are the definition the rollups were computed
-- with; once the meter's differ, the rollups are ignored until they are rebuilt.
CREATE TABLE meter_rollup_states (
    meter_id uuid PRIMARY KEY REFERENCES meters (id) ON DELETE CASCADE,
    rolled_to timestamptz NOT NULL,
    filter jsonb NOT NULL,
    aggregation jsonb NOT NULL,
    refreshed_at timestamptz NOT NULL DEFAULT now()
);

-- event_day_changes name the UTC days that received events since the rollups were last
-- refreshed: ingestion (storage.IngestEvents, the only writer of events) adds one row per
-- (organization, day) of each batch, in the batch's transaction. It has no unique key, so
-- concurrent batches never wait for each other here. The refresh deletes the rows it has
-- seen and recomputes those days, in one snapshot, so a day changed by a batch committed
-- later stays marked until the next refresh.
CREATE TABLE event_day_changes (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    day timestamptz NOT NULL
);
CREATE INDEX event_day_changes_organization_day_idx ON event_day_changes (organization_id, day);

-- +goose Down
DROP TABLE event_day_changes, meter_rollup_states, meter_rollups;
