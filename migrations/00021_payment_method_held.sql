-- +goose Up
-- held_for_checkout_id marks a payment method brought to a checkout by a buyer who was not
-- bound to the customer the purchase is recorded for (a customer matched by the email the
-- buyer typed). The card paid for that checkout and keeps paying the subscription the
-- checkout created, but it is not the customer's: it is left out of the customer's lists and
-- lookups, never becomes a default and no other checkout or subscription can charge it.
ALTER TABLE payment_methods ADD COLUMN held_for_checkout_id uuid REFERENCES checkouts (id);
CREATE INDEX payment_methods_held_for_checkout_id_idx ON payment_methods (held_for_checkout_id)
    WHERE held_for_checkout_id IS NOT NULL;

-- +goose Down
ALTER TABLE payment_methods DROP COLUMN held_for_checkout_id;
