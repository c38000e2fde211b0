-- +goose Up
-- Chargebacks of paid orders, as the payment processor reports them: Till never opens or
-- changes a dispute on its own, it keeps the processor's latest word on each. resolved
-- and closed follow from status and are not stored. A dispute belongs to the organization
-- of the order whose charge was disputed.
CREATE TABLE disputes (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    order_id uuid NOT NULL REFERENCES orders (id),
    payment_id uuid NOT NULL REFERENCES payments (id),
    customer_id uuid NOT NULL REFERENCES customers (id),
    status text NOT NULL CHECK (status IN ('prevented', 'early_warning', 'needs_response', 'under_review',
        'lost', 'won')),
    amount bigint NOT NULL CHECK (amount >= 0),
    tax_amount bigint NOT NULL DEFAULT 0 CHECK (tax_amount >= 0),
    currency text NOT NULL,
    reason text,
    evidence_due_by timestamptz,
    past_due boolean NOT NULL DEFAULT false,
    processor text NOT NULL,
    processor_id text NOT NULL,
    UNIQUE (processor, processor_id)
);
-- GET /v1/disputes/ and Order.disputes: each filter reads an index led by its column, and
-- the default sort (newest first) and the amount sort stay within the organization.
CREATE INDEX disputes_organization_created_at_idx ON disputes (organization_id, created_at DESC);
CREATE INDEX disputes_organization_amount_idx ON disputes (organization_id, amount);
CREATE INDEX disputes_organization_status_idx ON disputes (organization_id, status);
CREATE INDEX disputes_order_id_idx ON disputes (order_id, created_at DESC);
-- A dispute names the charge, not the order: the order is found through its payment.
CREATE INDEX payments_processor_object ON payments (processor, processor_id) WHERE processor_id IS NOT NULL;

-- +goose Down
DROP INDEX payments_processor_object;
DROP TABLE disputes;
