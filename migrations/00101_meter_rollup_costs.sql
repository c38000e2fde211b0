-- +goose Up
-- Meter rollups also hold what the meter's events cost (their _cost.amount, in cents), so
-- meterCosts reads whole UTC days from them as meterQuantities does.
--
-- costs sums the amounts of every event the meter's filter selects, whether or not the event
-- enters the aggregate (an event without the summed property still cost something);
-- cost_events counts the events that carry an amount. The quantity columns keep their
-- meaning: events, total, minimum and maximum cover only the events that enter the aggregate,
-- so a row whose events only cost has events = 0. costs is numeric because amounts are
-- decimals (up to 12 places): an exact sum is the same whichever days come from rollups and
-- which from events.
ALTER TABLE meter_rollups ADD COLUMN costs numeric, ADD COLUMN cost_events bigint NOT NULL DEFAULT 0;

-- Rollups made before this migration hold no costs. They derive from the events alone, so
-- they are dropped rather than backfilled here: a meter without a rollup state is read wholly
-- from its events, which is right if slower, until the next refresh (till serve runs one
-- every minute) rebuilds it from all its events, costs included. A definition-version column
-- would reach the same end at the price of a check in every read from now on.
TRUNCATE meter_rollups, meter_rollup_states;

-- +goose Down
-- Rows with events = 0 that remain count nothing in a quantity, so the old code reads the
-- rollups as they are.
ALTER TABLE meter_rollups DROP COLUMN costs, DROP COLUMN cost_events;
