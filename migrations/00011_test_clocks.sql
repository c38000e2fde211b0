-- +goose Up
-- test_clocks freeze the time of a test-mode organization (organizations.processor_mode =
-- 'test') so a seller, and Till's own tests, can move it forward and watch renewals, trial
-- ends, dunning retries and period-end cancellations happen without waiting. While a row
-- exists, the organization's subscription use cases read their time from frozen_at and the
-- background renewal loop leaves the organization alone: only advancing the clock renews its
-- subscriptions. The clock only moves forward.
CREATE TABLE test_clocks (
    organization_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    frozen_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE test_clocks;
