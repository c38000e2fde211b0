-- +goose Up
-- A delivery attempt belongs to its webhook event, which already belongs to the endpoint and
-- the organization (and is deleted with them). The two direct foreign keys repeated that
-- and cost two lookups on every attempt logged.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_organization_id_fkey,
    DROP CONSTRAINT webhook_deliveries_webhook_endpoint_id_fkey;

-- +goose Down
ALTER TABLE webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_organization_id_fkey FOREIGN KEY (organization_id)
        REFERENCES organizations (id) ON DELETE CASCADE,
    ADD CONSTRAINT webhook_deliveries_webhook_endpoint_id_fkey FOREIGN KEY (webhook_endpoint_id)
        REFERENCES webhook_endpoints (id) ON DELETE CASCADE;
