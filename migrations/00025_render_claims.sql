-- +goose Up
-- Every process rendered every new domain event (the work was repeated, not divided) and two
-- processes publishing one event could deadlock. A renderer now claims the events it renders
-- until render_claimed_until, with FOR UPDATE SKIP LOCKED, so each event is rendered by one
-- process at a time; a claim that its process dies holding lapses at that time.
ALTER TABLE domain_events ADD COLUMN render_claimed_until timestamptz;

-- +goose Down
ALTER TABLE domain_events DROP COLUMN render_claimed_until;
