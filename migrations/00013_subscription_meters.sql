-- +goose Up
-- subscription_meters (00004) are recomputed by a sweep and reset by each cycle order.
-- refreshed_at is the wall-clock time a row's figures were last computed; NULL means they are
-- due now (a new period, or never computed). It is apart from modified_at, which says when
-- the figures last changed, in the organization's clock (a test clock may run ahead).
ALTER TABLE subscription_meters ADD COLUMN refreshed_at timestamptz;
-- The sweep looks for rows computed longest ago, those never computed first.
CREATE INDEX subscription_meters_refreshed_at_idx ON subscription_meters (refreshed_at NULLS FIRST);

-- +goose Down
DROP INDEX subscription_meters_refreshed_at_idx;
ALTER TABLE subscription_meters DROP COLUMN refreshed_at;
