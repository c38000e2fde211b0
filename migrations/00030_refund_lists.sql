-- +goose Up
-- GET /v1/refunds/ and the Order.refunds relation: every filter of the list reads an index
-- led by its column, and each relation window (refunds of one order, customer or
-- subscription, newest first) is read in index order. Sorting by amount stays within the
-- organization.
DROP INDEX refunds_order_id_idx;
DROP INDEX refunds_customer_id_idx;
CREATE INDEX refunds_order_id_idx ON refunds (order_id, created_at DESC);
CREATE INDEX refunds_customer_id_idx ON refunds (customer_id, created_at DESC);
CREATE INDEX refunds_subscription_id_idx ON refunds (subscription_id, created_at DESC)
    WHERE subscription_id IS NOT NULL;
CREATE INDEX refunds_organization_amount_idx ON refunds (organization_id, amount);

-- +goose Down
DROP INDEX refunds_organization_amount_idx;
DROP INDEX refunds_subscription_id_idx;
DROP INDEX refunds_customer_id_idx;
DROP INDEX refunds_order_id_idx;
CREATE INDEX refunds_order_id_idx ON refunds (order_id);
CREATE INDEX refunds_customer_id_idx ON refunds (customer_id);
