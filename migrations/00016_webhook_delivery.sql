-- +goose Up
-- Webhook delivery. webhook_events (00007) are their own queue, delivered in order per
-- endpoint: a dispatcher claims the oldest pending event of each endpoint (the head) for a
-- lease, sends it, and records the attempt; the next event of that endpoint waits until the
-- head succeeds or fails for good. A generic job queue cannot express "only the head of each
-- endpoint", and polling jobs that find an earlier event pending would spin.

-- domain_event_id links a webhook event to the domain event it announces, so fanning an event
-- out twice (a crash between render and commit, two renderers) queues it once per endpoint.
-- attempts counts claims; next_attempt_at holds a failed event back until its backoff ends;
-- claimed_until is the lease of the dispatcher sending it: a dispatcher that dies mid-send
-- leaves the event to be claimed again once the lease ends, and it is sent again with the same
-- webhook-id (at least once, never lost).
ALTER TABLE webhook_events
    ADD COLUMN domain_event_id uuid REFERENCES domain_events (id) ON DELETE CASCADE,
    ADD COLUMN attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    ADD COLUMN next_attempt_at timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN claimed_until timestamptz,
    ADD COLUMN delivered_at timestamptz;
CREATE UNIQUE INDEX webhook_events_domain_event_endpoint_key ON webhook_events (domain_event_id, webhook_endpoint_id)
    WHERE domain_event_id IS NOT NULL;
-- The dispatcher walks the endpoints that have pending events in endpoint order (a loose
-- index scan), then takes each one's head in creation order.
CREATE INDEX webhook_events_pending_head_idx ON webhook_events (webhook_endpoint_id, created_at, id)
    WHERE succeeded IS NULL AND NOT skipped;
DROP INDEX webhook_events_pending_idx;

-- consecutive_failures counts failed attempts since the endpoint last answered 2xx; at the
-- threshold the endpoint is disabled (enabled = false, disabled_at and disabled_reason say
-- when and why) and its pending events are skipped, so a dead receiver stops being called.
ALTER TABLE webhook_endpoints
    ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0,
    ADD COLUMN disabled_at timestamptz,
    ADD COLUMN disabled_reason text;

-- +goose Down
ALTER TABLE webhook_endpoints DROP COLUMN consecutive_failures, DROP COLUMN disabled_at, DROP COLUMN disabled_reason;
CREATE INDEX webhook_events_pending_idx ON webhook_events (webhook_endpoint_id, created_at)
    WHERE succeeded IS NULL AND NOT skipped;
DROP INDEX webhook_events_pending_head_idx;
DROP INDEX webhook_events_domain_event_endpoint_key;
ALTER TABLE webhook_events DROP COLUMN domain_event_id, DROP COLUMN attempts, DROP COLUMN next_attempt_at,
    DROP COLUMN claimed_until, DROP COLUMN delivered_at;
