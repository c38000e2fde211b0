-- +goose Up
-- Event positions (00090) and order numbers (00028) were drawn as a transaction commits from
-- two rows of its organization, live_positions and order_numbers, each locked by a deferred
-- trigger in the order the transaction had written its rows. A new buyer's purchase writes
-- customer.created before its order; a returning buyer's writes the order first. Committing
-- together, each held one row and waited for the other, and PostgreSQL aborted one of them
-- as a deadlock: a paid purchase answered with an internal error.
--
-- Both counters now live on one row per organization, order_numbers, so a commit locks one
-- row whatever it wrote and in whichever order: the first counter drawn takes the lock, the
-- second finds it held by its own transaction. Commits that emit events and commits that
-- number orders queued behind each other already (they are mostly the same commits); now
-- they queue once.
ALTER TABLE order_numbers ADD COLUMN event_last bigint NOT NULL DEFAULT 0 CHECK (event_last >= 0);
INSERT INTO order_numbers AS n (organization_id, event_last)
SELECT organization_id, last FROM live_positions
ON CONFLICT (organization_id) DO UPDATE SET event_last = excluded.event_last;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION domain_event_position() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    next bigint;
BEGIN
    INSERT INTO order_numbers AS n (organization_id, event_last) VALUES (NEW.organization_id, 1)
    ON CONFLICT (organization_id) DO UPDATE SET event_last = n.event_last + 1
    RETURNING event_last INTO next;
    UPDATE domain_events SET position = next WHERE id = NEW.id;
    PERFORM pg_notify('till_live', NEW.organization_id::text);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

DROP TABLE live_positions;

-- +goose Down
CREATE TABLE live_positions (
    organization_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    last bigint NOT NULL
);
INSERT INTO live_positions (organization_id, last)
SELECT organization_id, event_last FROM order_numbers WHERE event_last > 0;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION domain_event_position() RETURNS trigger LANGUAGE plpgsql AS $$
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

ALTER TABLE order_numbers DROP COLUMN event_last;
