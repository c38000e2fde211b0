-- +goose Up
-- Several products' subscribers (storage.metricsSubscribersHeld) read the folded islands of
-- the products selected: by the primary key (organization_id, customer_id, product_id, ...)
-- that was a scan of every island of the organization, some 57,000 on the metrics
-- benchmark's seed to keep 8,000 of two products. This index reads the selected products'
-- islands alone.
CREATE INDEX metric_subscriber_islands_product_idx ON metric_subscriber_islands (organization_id, product_id, ended_at);

-- +goose Down
DROP INDEX metric_subscriber_islands_product_idx;
