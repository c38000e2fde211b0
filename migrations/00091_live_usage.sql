-- +goose Up
-- A meter's usage events are followed live (the meterEvents subscription) in the order of the
-- transactions that ingested them, without numbering them at commit as domain events are:
-- ingestion is the busiest write and must not take a per-organization lock. Instead each
-- event records its transaction's id (xid), and a reader takes only the events of
-- transactions older than every transaction still running (the snapshot's xmin): those are
-- final, committed or rolled back, so a cursor (xid, id) below that horizon never misses an
-- event that commits later. Rows written before this migration have no xid and are not
-- followed.
ALTER TABLE events ADD COLUMN xid xid8;
ALTER TABLE events ALTER COLUMN xid SET DEFAULT pg_current_xact_id();
CREATE INDEX events_organization_xid_idx ON events (organization_id, xid);

-- events_live wakes the subscriptions of the organizations a statement ingested events for,
-- when its transaction commits (the payload names the organization).
-- +goose StatementBegin
CREATE FUNCTION events_live() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('till_usage', o::text) FROM (SELECT DISTINCT organization_id AS o FROM new_events) n;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER events_live AFTER INSERT ON events REFERENCING NEW TABLE AS new_events
    FOR EACH STATEMENT EXECUTE FUNCTION events_live();

-- +goose Down
DROP TRIGGER events_live ON events;
DROP FUNCTION events_live();
DROP INDEX events_organization_xid_idx;
ALTER TABLE events DROP COLUMN xid;
