-- +goose Up
-- Claiming a webhook event changes only columns no index holds (claimed_until, attempts), so
-- with room left on its page PostgreSQL updates it in place (a HOT update) instead of adding
-- an entry to each of the table's six indexes.
ALTER TABLE webhook_events SET (fillfactor = 70);

-- +goose Down
ALTER TABLE webhook_events RESET (fillfactor);
