-- +goose Up
-- Metrics in a zone whose offset is not whole hours (storage.metricsFlowsSplit) read, at each
-- cut of its days inside a UTC hour, the base tables' rows of the part of that hour before the
-- cut: a range of 30 or 45 minutes of each time a flow or a stock change is put at, 366 of
-- them for a year of days. Each range must be a short index scan, not a scan of the
-- organization's rows:
--   - orders and checkouts by created_at: orders_organization_created_at_idx and
--     checkouts_organization_created_at_idx (00003, 00004) serve;
--   - subscriptions by started_at, canceled_at, ended_at and ends_at: their
--     subscriptions_organization_*_idx (00004) serve;
--   - subscriptions by trial_end, where a trial ends and the subscription starts paying
--     (metric_subscription_delta), had no index: this one. Partial, as only subscriptions
--     with a trial have the time.
CREATE INDEX subscriptions_organization_trial_end_idx ON subscriptions (organization_id, trial_end)
    WHERE trial_end IS NOT NULL;

-- +goose Down
DROP INDEX subscriptions_organization_trial_end_idx;
