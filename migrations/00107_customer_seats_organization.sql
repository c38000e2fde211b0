-- +goose Up
-- Seat metrics read an organization's seats (storage.metricsSeats); without this index they
-- scanned every organization's.
CREATE INDEX customer_seats_organization_id_idx ON customer_seats (organization_id, created_at);

-- +goose Down
DROP INDEX customer_seats_organization_id_idx;
