-- +goose Up
-- Payments that finish later. The test processor keeps, with each charge, what it needs to
-- finish one: the intent waiting for its holder's 3-D Secure step, or a bank debit still
-- processing, and the token and currency it was made with. A checkout whose payment waits
-- stays confirmed and keeps the intent it waits for and the payment method it will pay with,
-- so that the processor's event settles it.
ALTER TABLE test_payment_charges
    ADD COLUMN currency text NOT NULL DEFAULT '',
    ADD COLUMN token text NOT NULL DEFAULT '',
    ADD COLUMN status text NOT NULL DEFAULT '',
    ADD COLUMN intent_id text,
    ADD COLUMN client_secret text,
    DROP CONSTRAINT test_payment_charges_outcome,
    ADD CONSTRAINT test_payment_charges_outcome CHECK (status IN ('', 'processing', 'requires_action')
        AND (status = 'requires_action' OR (charge_id IS NULL) <> (decline_code IS NULL)));
CREATE UNIQUE INDEX test_payment_charges_client_secret ON test_payment_charges (client_secret);

ALTER TABLE checkouts
    ADD COLUMN pending_intent_id text,
    ADD COLUMN pending_payment jsonb;
CREATE UNIQUE INDEX checkouts_pending_intent ON checkouts (pending_intent_id);

-- +goose Down
DROP INDEX checkouts_pending_intent;
ALTER TABLE checkouts DROP COLUMN pending_payment, DROP COLUMN pending_intent_id;
DROP INDEX test_payment_charges_client_secret;
DELETE FROM test_payment_charges WHERE status = 'requires_action';
ALTER TABLE test_payment_charges
    DROP CONSTRAINT test_payment_charges_outcome,
    ADD CONSTRAINT test_payment_charges_outcome CHECK ((charge_id IS NULL) <> (decline_code IS NULL)),
    DROP COLUMN client_secret, DROP COLUMN intent_id, DROP COLUMN status, DROP COLUMN token, DROP COLUMN currency;
