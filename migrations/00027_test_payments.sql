-- +goose Up
-- The built-in test processor's memory: which test token each saved method was made from,
-- how often it was charged, and each idempotency key's outcome. Kept here rather than in a
-- process, so that a card saved through one process declines (or pays) the same way when
-- another process, or the same one after a restart, charges it.
CREATE TABLE test_payment_methods (
    id text PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now(),
    token text NOT NULL,
    charged integer NOT NULL DEFAULT 0
);
CREATE TABLE test_payment_charges (
    idempotency_key text PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now(),
    charge_id text,
    amount bigint NOT NULL DEFAULT 0,
    decline_code text,
    CONSTRAINT test_payment_charges_outcome CHECK ((charge_id IS NULL) <> (decline_code IS NULL))
);

-- +goose Down
DROP TABLE test_payment_charges;
DROP TABLE test_payment_methods;
