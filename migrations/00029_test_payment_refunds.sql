-- +goose Up
-- The built-in test processor's refunds: each idempotency key's outcome, so a retried refund
-- answers what the first did, and what each charge has given back, so no process refunds a
-- test charge beyond its amount.
CREATE UNIQUE INDEX test_payment_charges_charge_id ON test_payment_charges (charge_id);
CREATE TABLE test_payment_refunds (
    idempotency_key text PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now(),
    charge_id text NOT NULL,
    refund_id text,
    amount bigint NOT NULL DEFAULT 0,
    refusal text,
    CONSTRAINT test_payment_refunds_outcome CHECK ((refund_id IS NULL) <> (refusal IS NULL))
);
CREATE INDEX test_payment_refunds_charge ON test_payment_refunds (charge_id);

-- +goose Down
DROP TABLE test_payment_refunds;
DROP INDEX test_payment_charges_charge_id;
