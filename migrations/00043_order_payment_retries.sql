-- +goose Up
-- trigger is what started a payment, in upstream's vocabulary: manual retries from the
-- customer portal (retry_customer) are counted against their own per-order ceiling and
-- never against dunning's. Null where the recorder names none (purchases, renewals and
-- their dunning retries): those count as dunning's, as upstream counts a payment without one.
ALTER TABLE payments ADD COLUMN trigger text CHECK (trigger IN ('purchase', 'subscription_cycle',
    'retry_dunning', 'retry_customer', 'retry_payment_method_update', 'retry_admin'));
-- intent_id is the processor's payment intent (pi_...) of a payment that waits for the
-- customer (3-D Secure): the processor reports its final outcome later, by that id.
ALTER TABLE payments ADD COLUMN intent_id text;
CREATE INDEX payments_processor_intent ON payments (processor, intent_id) WHERE intent_id IS NOT NULL;

-- +goose Down
DROP INDEX payments_processor_intent;
ALTER TABLE payments DROP COLUMN intent_id;
ALTER TABLE payments DROP COLUMN trigger;
