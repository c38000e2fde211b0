-- +goose Up
-- Outgoing webhooks: endpoints, the events queued for them (outbox) and delivery attempts.

-- webhook_event_types lists the WebhookEventType wire values; endpoint subscriptions and queued
-- events are checked against it. Add a type with CREATE OR REPLACE FUNCTION.
-- +goose StatementBegin
CREATE FUNCTION webhook_event_types() RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ARRAY[
        'checkout.created', 'checkout.updated', 'checkout.expired',
        'customer.created', 'customer.updated', 'customer.deleted', 'customer.state_changed',
        'customer_seat.assigned', 'customer_seat.claimed', 'customer_seat.revoked',
        'member.created', 'member.updated', 'member.deleted',
        'order.created', 'order.updated', 'order.paid', 'order.refunded',
        'subscription.created', 'subscription.updated', 'subscription.active',
        'subscription.canceled', 'subscription.uncanceled', 'subscription.cycled',
        'subscription.revoked', 'subscription.past_due', 'subscription.paused',
        'subscription.resumed',
        'refund.created', 'refund.updated',
        'product.created', 'product.updated',
        'discount.created', 'discount.updated', 'discount.deleted',
        'benefit.created', 'benefit.updated',
        'benefit_grant.created', 'benefit_grant.cycled', 'benefit_grant.updated', 'benefit_grant.revoked',
        'organization.updated']::text[];
-- +goose StatementEnd

-- webhook_endpoints receive signed events of the types listed in `events`. secret is stored in
-- plaintext ("whsec_…") because it signs every delivery and every WebhookEndpoint response
-- returns it. Deletion is a soft delete; a deleted or disabled endpoint gets no new events.
-- enabled turns false automatically after repeated permanent failures.
CREATE TABLE webhook_endpoints (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    url text NOT NULL CHECK (length(url) BETWEEN 1 AND 2083),
    name text,
    format text NOT NULL DEFAULT 'raw' CHECK (format IN ('raw', 'discord', 'slack')),
    secret text NOT NULL,
    events text[] NOT NULL DEFAULT '{}',
    enabled boolean NOT NULL DEFAULT true,
    CONSTRAINT webhook_endpoints_event_types CHECK (events <@ webhook_event_types())
);
-- GET /v1/webhooks/endpoints: by organization, created_at desc, live endpoints only; also the
-- target selection (organization, enabled, type = ANY(events)) of a new event.
CREATE INDEX webhook_endpoints_organization_created_at_idx ON webhook_endpoints (organization_id, created_at DESC)
    WHERE deleted_at IS NULL;

-- webhook_events are the outbox: one row per (event, endpoint), inserted in the same
-- transaction as the change it reports, then delivered by a job. payload is the exact JSON
-- envelope {"type", "timestamp", "data"} as text, not jsonb: jsonb would reorder keys and
-- drop formatting, and every attempt must send (and sign) the same bytes. succeeded is null
-- while pending. skipped marks events dropped when their endpoint was auto-disabled.
-- Archiving (after 90 days) nulls payload and sets is_archived.
CREATE TABLE webhook_events (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    webhook_endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    type text NOT NULL CHECK (type = ANY (webhook_event_types())),
    payload text,
    succeeded boolean,
    skipped boolean NOT NULL DEFAULT false,
    last_http_code integer,
    is_archived boolean NOT NULL DEFAULT false,
    CONSTRAINT webhook_events_payload_kept CHECK (is_archived OR payload IS NOT NULL)
);
-- Per-endpoint history, newest first: the FIFO guard, the "last 10 all failed" auto-disable
-- rule and endpoint event lists.
CREATE INDEX webhook_events_endpoint_created_at_idx ON webhook_events (webhook_endpoint_id, created_at DESC);
CREATE INDEX webhook_events_pending_idx ON webhook_events (webhook_endpoint_id, created_at)
    WHERE succeeded IS NULL AND NOT skipped;
CREATE INDEX webhook_events_organization_created_at_idx ON webhook_events (organization_id, created_at DESC);
CREATE INDEX webhook_events_archivable_idx ON webhook_events (created_at) WHERE NOT is_archived;

-- webhook_deliveries are individual HTTP attempts of a webhook event.
CREATE TABLE webhook_deliveries (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    webhook_endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    webhook_event_id uuid NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    attempt integer NOT NULL CHECK (attempt >= 1),
    http_code integer,
    -- response is the (truncated) response body or the network error, for debugging.
    response text,
    succeeded boolean NOT NULL
);
CREATE INDEX webhook_deliveries_event_created_at_idx ON webhook_deliveries (webhook_event_id, created_at);
CREATE INDEX webhook_deliveries_endpoint_created_at_idx ON webhook_deliveries (webhook_endpoint_id, created_at DESC);

-- +goose Down
DROP TABLE webhook_deliveries, webhook_events, webhook_endpoints;
DROP FUNCTION webhook_event_types();
