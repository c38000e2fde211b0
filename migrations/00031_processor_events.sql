-- +goose Up
-- Events the payment processor sent to Till's webhook endpoint, each kept once whatever
-- number of times it is delivered. object_id and created let an event that arrives after
-- a newer one about the same object be recognised and left unapplied; outcome says what
-- applying it did.
CREATE TABLE processor_events (
    processor text NOT NULL,
    id text NOT NULL,
    type text NOT NULL,
    object_id text NOT NULL,
    created timestamptz NOT NULL,
    payload jsonb NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    applied_at timestamptz,
    outcome text,
    PRIMARY KEY (processor, id)
);
CREATE INDEX processor_events_object ON processor_events (processor, object_id, created);
-- An event names the processor's object, not the organization: the rows it changes are
-- found by the processor's id alone.
CREATE INDEX payment_methods_processor_object ON payment_methods (processor, processor_id);
CREATE INDEX refunds_processor_object ON refunds (processor, processor_id) WHERE processor_id IS NOT NULL;

-- +goose Down
DROP INDEX refunds_processor_object;
DROP INDEX payment_methods_processor_object;
DROP TABLE processor_events;
