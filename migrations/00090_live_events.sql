-- +goose Up
-- GraphQL subscriptions read domain_events in the order their transactions committed, per
-- organization, and resume from a position a client kept. created_at cannot give that order:
-- it is taken when the row is written, and a transaction that began earlier may commit later.
--
-- position is therefore numbered at commit: a deferred constraint trigger takes the next
-- number from the organization's live_positions row as its transaction commits. The row stays
-- locked until the commit is visible, so the next committing transaction of the organization
-- takes its number only afterwards: numbers are gapless and a reader that sees position n sees
-- every position before it. Only the end of a commit is serialized per organization, and only
-- for transactions that emit events (the data plane, usage ingestion and license validation,
-- emits none).
--
-- customer_id is the customer the changed object belongs to, so a portal session can follow
-- its own customer's changes; it is set when the event is written.
ALTER TABLE domain_events ADD COLUMN position bigint, ADD COLUMN customer_id uuid;

CREATE TABLE live_positions (
    organization_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    last bigint NOT NULL
);

-- Events written before positions existed are numbered in the order they were written.
UPDATE domain_events d SET position = n.position
FROM (SELECT id, row_number() OVER (PARTITION BY organization_id ORDER BY created_at, id) AS position
      FROM domain_events) n
WHERE d.id = n.id;
INSERT INTO live_positions (organization_id, last)
SELECT organization_id, max(position) FROM domain_events GROUP BY organization_id;

CREATE UNIQUE INDEX domain_events_position_key ON domain_events (organization_id, position);
CREATE INDEX domain_events_customer_position_idx ON domain_events (customer_id, position)
    WHERE customer_id IS NOT NULL;

-- +goose StatementBegin
CREATE FUNCTION domain_event_customer() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.customer_id := CASE split_part(NEW.type, '.', 1)
        WHEN 'customer' THEN NEW.object_id
        WHEN 'order' THEN (SELECT customer_id FROM orders WHERE id = NEW.object_id)
        WHEN 'subscription' THEN (SELECT customer_id FROM subscriptions WHERE id = NEW.object_id)
        WHEN 'checkout' THEN (SELECT customer_id FROM checkouts WHERE id = NEW.object_id)
        WHEN 'refund' THEN (SELECT customer_id FROM refunds WHERE id = NEW.object_id)
        WHEN 'benefit_grant' THEN (SELECT customer_id FROM benefit_grants WHERE id = NEW.object_id)
        WHEN 'member' THEN (SELECT customer_id FROM members WHERE id = NEW.object_id)
    END;
    RETURN NEW;
END
$$;

-- domain_event_position numbers one event as its transaction commits and wakes the
-- subscriptions of its organization (the payload names it; equal notifications of one
-- transaction are folded into one).
CREATE FUNCTION domain_event_position() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    next bigint;
BEGIN
    INSERT INTO live_positions AS l (organization_id, last) VALUES (NEW.organization_id, 1)
    ON CONFLICT (organization_id) DO UPDATE SET last = l.last + 1
    RETURNING last INTO next;
    UPDATE domain_events SET position = next WHERE id = NEW.id;
    PERFORM pg_notify('till_live', NEW.organization_id::text);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER domain_events_customer BEFORE INSERT ON domain_events
    FOR EACH ROW EXECUTE FUNCTION domain_event_customer();
CREATE CONSTRAINT TRIGGER domain_events_position AFTER INSERT ON domain_events
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION domain_event_position();

-- +goose Down
DROP TRIGGER domain_events_position ON domain_events;
DROP TRIGGER domain_events_customer ON domain_events;
DROP FUNCTION domain_event_position();
DROP FUNCTION domain_event_customer();
DROP TABLE live_positions;
ALTER TABLE domain_events DROP COLUMN customer_id, DROP COLUMN position;
