-- +goose Up
-- domain_events is the organization's event log and the source of webhook deliveries: one
-- row per state change (order.created, subscription.canceled, …), inserted in the same
-- transaction as the change. payload is the /v1 object shape of the changed object as text,
-- rendered right after commit from the committed state (null until then; a sweeper renders
-- what a crash left behind). Webhook fan-out to endpoints (webhook_events) reads from here.
CREATE TABLE domain_events (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    type text NOT NULL CHECK (type = ANY (webhook_event_types())),
    object_id uuid NOT NULL,
    payload text,
    rendered_at timestamptz,
    -- render_attempts and render_error keep an object that cannot be read (deleted, say)
    -- from being retried forever and starving the events behind it.
    render_attempts integer NOT NULL DEFAULT 0,
    render_error text,
    CONSTRAINT domain_events_rendered CHECK ((payload IS NULL) = (rendered_at IS NULL))
);
CREATE INDEX domain_events_organization_created_at_idx ON domain_events (organization_id, created_at DESC);
CREATE INDEX domain_events_object_idx ON domain_events (object_id, created_at);
CREATE INDEX domain_events_unrendered_idx ON domain_events (created_at) WHERE payload IS NULL AND render_attempts < 5;

-- +goose Down
DROP TABLE domain_events;
