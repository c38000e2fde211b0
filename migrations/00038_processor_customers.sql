-- +goose Up
-- The payment processor keeps a customer record of its own, which holds the customer's
-- saved methods and which every charge of them names. A Till customer gets one such record,
-- the first one recorded, so that all of its methods are saved to it; each saved method keeps
-- the record it was saved to, which is what charging it names (methods saved before have
-- none, and the processor looks it up). The column names are the processor's: Till speaks
-- of processors, not of one of them, as payment_methods.processor_id does.
ALTER TABLE customers ADD COLUMN processor_customer_id text;
ALTER TABLE payment_methods ADD COLUMN processor_customer_id text;
-- The built-in test processor remembers the customer each test method was saved to, so it
-- refuses a charge that names another one, as the processor does.
ALTER TABLE test_payment_methods ADD COLUMN customer_id text;

-- +goose Down
ALTER TABLE test_payment_methods DROP COLUMN customer_id;
ALTER TABLE payment_methods DROP COLUMN processor_customer_id;
ALTER TABLE customers DROP COLUMN processor_customer_id;
