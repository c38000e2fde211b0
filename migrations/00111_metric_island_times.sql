-- +goose Up
-- A zone whose offset is not whole hours cuts the subscriber rollups with pieces of the folded
-- islands, each the islands starting or ending within half an hour (or three quarters) before
-- a local midnight: a year of days is 365 range reads of each index, where the primary key
-- (by customer) would scan every island for each.
CREATE INDEX metric_subscriber_islands_started_idx ON metric_subscriber_islands (organization_id, started_at);
CREATE INDEX metric_subscriber_islands_ended_idx ON metric_subscriber_islands (organization_id, ended_at)
    WHERE ended_at IS NOT NULL;

-- +goose Down
DROP INDEX metric_subscriber_islands_ended_idx;
DROP INDEX metric_subscriber_islands_started_idx;
