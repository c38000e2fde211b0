-- +goose Up
-- Subscriptions, orders and what hangs off them: prices, meters, pending updates, line items,
-- discount redemptions, payments, refunds, customer balance and seats.

-- Sort keys that are not plain columns live in SQL functions so the list queries and the
-- indexes below use one definition (an index is only used when the query repeats its expression).

-- order_status_rank is the `status` sort of GET /v1/orders/:
-- draft < pending < paid < partially_refunded < refunded < void.
-- +goose StatementBegin
CREATE FUNCTION order_status_rank(status text) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE status
        WHEN 'draft' THEN 1 WHEN 'pending' THEN 2 WHEN 'paid' THEN 3
        WHEN 'partially_refunded' THEN 4 WHEN 'refunded' THEN 5 WHEN 'void' THEN 6
    END;
-- +goose StatementEnd

-- subscription_status_rank is the `status` sort of GET /v1/subscriptions/.
-- +goose StatementBegin
CREATE FUNCTION subscription_status_rank(status text, cancel_at_period_end boolean) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE
        WHEN status = 'incomplete' THEN 1
        WHEN status = 'incomplete_expired' THEN 2
        WHEN status = 'trialing' THEN 3
        WHEN status = 'active' AND NOT cancel_at_period_end THEN 4
        WHEN status = 'active' THEN 5
        WHEN status = 'paused' THEN 6
        WHEN status = 'past_due' THEN 7
        WHEN status = 'canceled' THEN 8
        WHEN status = 'unpaid' THEN 9
    END;
-- +goose StatementEnd

-- subscription_monthly_amount is the `amount` sort of GET /v1/subscriptions/: the amount per
-- month, ignoring recurring_interval_count as upstream does.
-- +goose StatementBegin
CREATE FUNCTION subscription_monthly_amount(amount bigint, recurring_interval text) RETURNS numeric
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE recurring_interval
        WHEN 'year' THEN amount::numeric / 12
        WHEN 'month' THEN amount::numeric
        WHEN 'week' THEN amount::numeric * 4
        WHEN 'day' THEN amount::numeric * 30
    END;
-- +goose StatementEnd

-- subscriptions (Subscription schema). Only rows with started_at set are ever listed; an
-- `incomplete` subscription that never started stays invisible. Subscriptions are soft-deleted
-- and keep their customer/product (no cascade) because orders point at them.
CREATE TABLE subscriptions (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    customer_id uuid NOT NULL REFERENCES customers (id),
    product_id uuid NOT NULL REFERENCES products (id),
    discount_id uuid REFERENCES discounts (id) ON DELETE SET NULL,
    checkout_id uuid REFERENCES checkouts (id) ON DELETE SET NULL,
    payment_method_id uuid REFERENCES payment_methods (id) ON DELETE SET NULL,
    status text NOT NULL DEFAULT 'incomplete' CHECK (status IN ('incomplete', 'incomplete_expired',
        'trialing', 'active', 'past_due', 'canceled', 'unpaid', 'paused')),
    amount bigint NOT NULL CHECK (amount >= 0),
    currency text NOT NULL,
    recurring_interval text NOT NULL CHECK (recurring_interval IN ('day', 'week', 'month', 'year')),
    recurring_interval_count integer NOT NULL DEFAULT 1 CHECK (recurring_interval_count > 0),
    current_period_start timestamptz NOT NULL,
    current_period_end timestamptz NOT NULL,
    -- The meter period runs on products.meter_interval when the product sets one.
    current_meter_period_start timestamptz,
    current_meter_period_end timestamptz,
    trial_start timestamptz,
    trial_end timestamptz,
    cancel_at_period_end boolean NOT NULL DEFAULT false,
    canceled_at timestamptz,
    started_at timestamptz,
    ends_at timestamptz,
    ended_at timestamptz,
    past_due_at timestamptz,
    pause_at_period_end boolean NOT NULL DEFAULT false,
    paused_at timestamptz,
    resumes_at timestamptz,
    seats integer CHECK (seats > 0),
    customer_cancellation_reason text CHECK (customer_cancellation_reason IN ('customer_service',
        'low_quality', 'missing_features', 'switched_service', 'too_complex', 'too_expensive',
        'unused', 'other')),
    customer_cancellation_comment text,
    custom_field_data jsonb NOT NULL DEFAULT '{}',
    metadata jsonb NOT NULL DEFAULT '{}',
    CONSTRAINT subscriptions_period CHECK (current_period_start <= current_period_end),
    CONSTRAINT subscriptions_meter_period_pair CHECK (
        (current_meter_period_start IS NULL) = (current_meter_period_end IS NULL))
);
CREATE INDEX subscriptions_organization_started_at_idx ON subscriptions (organization_id, started_at DESC)
    WHERE started_at IS NOT NULL;
CREATE INDEX subscriptions_organization_status_idx ON subscriptions (organization_id, status, started_at DESC);
CREATE INDEX subscriptions_organization_status_rank_idx ON subscriptions
    (organization_id, subscription_status_rank(status, cancel_at_period_end));
CREATE INDEX subscriptions_organization_monthly_amount_idx ON subscriptions
    (organization_id, subscription_monthly_amount(amount, recurring_interval));
CREATE INDEX subscriptions_organization_current_period_end_idx ON subscriptions (organization_id, current_period_end);
CREATE INDEX subscriptions_organization_ends_at_idx ON subscriptions (organization_id, ends_at);
CREATE INDEX subscriptions_organization_ended_at_idx ON subscriptions (organization_id, ended_at);
CREATE INDEX subscriptions_organization_canceled_at_idx ON subscriptions (organization_id, canceled_at)
    WHERE canceled_at IS NOT NULL;
CREATE INDEX subscriptions_organization_cancellation_reason_idx ON subscriptions
    (organization_id, customer_cancellation_reason) WHERE customer_cancellation_reason IS NOT NULL;
CREATE INDEX subscriptions_customer_started_at_idx ON subscriptions (customer_id, started_at DESC);
CREATE INDEX subscriptions_product_started_at_idx ON subscriptions (product_id, started_at DESC);
CREATE INDEX subscriptions_discount_id_idx ON subscriptions (discount_id) WHERE discount_id IS NOT NULL;
CREATE INDEX subscriptions_checkout_id_idx ON subscriptions (checkout_id) WHERE checkout_id IS NOT NULL;
CREATE INDEX subscriptions_payment_method_id_idx ON subscriptions (payment_method_id)
    WHERE payment_method_id IS NOT NULL;
CREATE INDEX subscriptions_metadata_idx ON subscriptions USING gin (metadata jsonb_path_ops);
-- Scheduler scans: renewals and period-end cancellations, meter cycles, scheduled resumes.
CREATE INDEX subscriptions_renewal_due_idx ON subscriptions (current_period_end)
    WHERE deleted_at IS NULL AND status IN ('trialing', 'active', 'past_due');
CREATE INDEX subscriptions_meter_period_due_idx ON subscriptions (current_meter_period_end)
    WHERE deleted_at IS NULL AND current_meter_period_end IS NOT NULL AND status IN ('trialing', 'active', 'past_due');
CREATE INDEX subscriptions_resume_due_idx ON subscriptions (resumes_at)
    WHERE deleted_at IS NULL AND status = 'paused' AND resumes_at IS NOT NULL;

-- checkouts.subscription_id (00003) could not reference subscriptions before they existed.
ALTER TABLE checkouts ADD CONSTRAINT checkouts_subscription_fk
    FOREIGN KEY (subscription_id) REFERENCES subscriptions (id) ON DELETE SET NULL;
CREATE INDEX checkouts_subscription_id_idx ON checkouts (subscription_id) WHERE subscription_id IS NOT NULL;

-- subscription_prices are the prices a subscription bills (Subscription.prices).
CREATE TABLE subscription_prices (
    subscription_id uuid NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    product_price_id uuid NOT NULL REFERENCES product_prices (id),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (subscription_id, product_price_id)
);
CREATE INDEX subscription_prices_product_price_id_idx ON subscription_prices (product_price_id);

-- subscription_meters hold the running consumption of the current meter period
-- (SubscriptionMeter). consumed_units is fractional because sum/avg aggregations are.
CREATE TABLE subscription_meters (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    subscription_id uuid NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    meter_id uuid NOT NULL REFERENCES meters (id),
    consumed_units numeric NOT NULL DEFAULT 0,
    credited_units bigint NOT NULL DEFAULT 0,
    amount bigint NOT NULL DEFAULT 0,
    CONSTRAINT subscription_meters_subscription_meter_key UNIQUE (subscription_id, meter_id)
);
CREATE INDEX subscription_meters_meter_id_idx ON subscription_meters (meter_id);

-- pending_subscription_updates are plan or seat changes scheduled for the next period
-- (PendingSubscriptionUpdate). At most one is open per subscription; applying or canceling it
-- sets applied_at / canceled_at so history is kept.
CREATE TABLE pending_subscription_updates (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    subscription_id uuid NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    product_id uuid REFERENCES products (id),
    seats integer CHECK (seats > 0),
    proration_behavior text CHECK (proration_behavior IN ('invoice', 'prorate', 'next_period', 'reset')),
    applies_at timestamptz NOT NULL,
    applied_at timestamptz,
    canceled_at timestamptz,
    CONSTRAINT pending_subscription_updates_change CHECK (product_id IS NOT NULL OR seats IS NOT NULL)
);
CREATE UNIQUE INDEX pending_subscription_updates_open_key ON pending_subscription_updates (subscription_id)
    WHERE applied_at IS NULL AND canceled_at IS NULL;
CREATE INDEX pending_subscription_updates_due_idx ON pending_subscription_updates (applies_at)
    WHERE applied_at IS NULL AND canceled_at IS NULL;

-- Receipt numbers are allocated per organization when an order is paid, like invoice numbers.
ALTER TABLE organizations ADD COLUMN receipt_next_number bigint NOT NULL DEFAULT 1;

-- orders (Order schema). Stored amounts: subtotal, discount, net, tax, total, applied balance,
-- refunded, refunded tax, platform fee. due_amount is generated (never negative). Derived on
-- read, not stored: paid (status in paid/partially_refunded/refunded), is_invoice_generated
-- (invoice_path IS NOT NULL), refundable_amount, refundable_tax_amount.
-- invoice_number is null while draft and allocated from organizations.invoice_next_number at
-- finalize; receipt_number from organizations.receipt_next_number when paid. invoice_checksum
-- fingerprints what the rendered invoice shows so an unchanged re-request schedules nothing.
CREATE TABLE orders (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    customer_id uuid NOT NULL REFERENCES customers (id),
    product_id uuid REFERENCES products (id),
    discount_id uuid REFERENCES discounts (id) ON DELETE SET NULL,
    subscription_id uuid REFERENCES subscriptions (id),
    checkout_id uuid REFERENCES checkouts (id) ON DELETE SET NULL,
    status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('draft', 'pending', 'paid', 'refunded', 'partially_refunded', 'void')),
    billing_reason text NOT NULL CHECK (billing_reason IN ('purchase', 'subscription_create',
        'subscription_cycle', 'subscription_update', 'subscription_meter_cycle')),
    currency text NOT NULL,
    subtotal_amount bigint NOT NULL CHECK (subtotal_amount >= 0),
    discount_amount bigint NOT NULL DEFAULT 0 CHECK (discount_amount >= 0),
    net_amount bigint NOT NULL CHECK (net_amount >= 0),
    tax_amount bigint NOT NULL DEFAULT 0 CHECK (tax_amount >= 0),
    total_amount bigint NOT NULL CHECK (total_amount >= 0),
    -- Negative when customer balance (credit) paid part of the order, positive when a debt was added.
    applied_balance_amount bigint NOT NULL DEFAULT 0,
    due_amount bigint GENERATED ALWAYS AS (GREATEST(0, total_amount + applied_balance_amount)) STORED,
    refunded_amount bigint NOT NULL DEFAULT 0 CHECK (refunded_amount >= 0),
    refunded_tax_amount bigint NOT NULL DEFAULT 0 CHECK (refunded_tax_amount >= 0),
    platform_fee_amount bigint NOT NULL DEFAULT 0 CHECK (platform_fee_amount >= 0),
    platform_fee_currency text,
    tax_behavior text CHECK (tax_behavior IN ('inclusive', 'exclusive')),
    -- tax_rate is the rate applied, as computed by the tax calculation; null when untaxed.
    tax_rate jsonb,
    billing_name text,
    -- billing_address follows Address; country and state are immutable once set (a use-case rule).
    billing_address jsonb,
    tax_id text,
    tax_id_format text,
    description text NOT NULL DEFAULT '',
    seats integer CHECK (seats > 0),
    invoice_number text,
    invoice_path text,
    invoice_checksum text,
    receipt_number text,
    receipt_path text,
    next_payment_attempt_at timestamptz,
    -- payment_lock_acquired_at guards against charging the same order twice concurrently.
    payment_lock_acquired_at timestamptz,
    custom_field_data jsonb NOT NULL DEFAULT '{}',
    metadata jsonb NOT NULL DEFAULT '{}',
    CONSTRAINT orders_refunds_within_paid CHECK (refunded_amount <= net_amount AND refunded_tax_amount <= tax_amount),
    CONSTRAINT orders_tax_id_pair CHECK ((tax_id IS NULL) = (tax_id_format IS NULL))
);
CREATE UNIQUE INDEX orders_organization_invoice_number_key ON orders (organization_id, invoice_number)
    WHERE invoice_number IS NOT NULL;
CREATE UNIQUE INDEX orders_organization_receipt_number_key ON orders (organization_id, receipt_number)
    WHERE receipt_number IS NOT NULL;
CREATE INDEX orders_organization_created_at_idx ON orders (organization_id, created_at DESC);
CREATE INDEX orders_organization_status_idx ON orders (organization_id, status, created_at DESC);
CREATE INDEX orders_organization_status_rank_idx ON orders (organization_id, order_status_rank(status));
CREATE INDEX orders_organization_net_amount_idx ON orders (organization_id, net_amount);
CREATE INDEX orders_organization_subscription_idx ON orders (organization_id, subscription_id);
CREATE INDEX orders_customer_created_at_idx ON orders (customer_id, created_at DESC);
CREATE INDEX orders_product_created_at_idx ON orders (product_id, created_at DESC) WHERE product_id IS NOT NULL;
CREATE INDEX orders_subscription_created_at_idx ON orders (subscription_id, created_at DESC)
    WHERE subscription_id IS NOT NULL;
CREATE INDEX orders_checkout_id_idx ON orders (checkout_id) WHERE checkout_id IS NOT NULL;
CREATE INDEX orders_discount_id_idx ON orders (discount_id) WHERE discount_id IS NOT NULL;
CREATE INDEX orders_metadata_idx ON orders USING gin (metadata jsonb_path_ops);
-- Dunning: orders whose next automatic payment retry is due.
CREATE INDEX orders_next_payment_attempt_at_idx ON orders (next_payment_attempt_at)
    WHERE next_payment_attempt_at IS NOT NULL;

-- order_items are the line items of an order (OrderItemSchema).
CREATE TABLE order_items (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    order_id uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    label text NOT NULL,
    amount bigint NOT NULL,
    tax_amount bigint NOT NULL DEFAULT 0,
    proration boolean NOT NULL DEFAULT false,
    product_price_id uuid REFERENCES product_prices (id) ON DELETE SET NULL
);
CREATE INDEX order_items_order_id_idx ON order_items (order_id, created_at);
CREATE INDEX order_items_product_price_id_idx ON order_items (product_price_id) WHERE product_price_id IS NOT NULL;

-- discount_redemptions record each use of a discount, so max_redemptions_per_customer can be
-- counted and a redemption reserved by a checkout can be released if the checkout fails.
CREATE TABLE discount_redemptions (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    discount_id uuid NOT NULL REFERENCES discounts (id) ON DELETE CASCADE,
    customer_id uuid REFERENCES customers (id) ON DELETE SET NULL,
    checkout_id uuid REFERENCES checkouts (id) ON DELETE SET NULL,
    subscription_id uuid REFERENCES subscriptions (id) ON DELETE SET NULL,
    order_id uuid REFERENCES orders (id) ON DELETE SET NULL
);
CREATE INDEX discount_redemptions_discount_customer_idx ON discount_redemptions (discount_id, customer_id);
CREATE INDEX discount_redemptions_checkout_id_idx ON discount_redemptions (checkout_id) WHERE checkout_id IS NOT NULL;
CREATE INDEX discount_redemptions_subscription_id_idx ON discount_redemptions (subscription_id)
    WHERE subscription_id IS NOT NULL;
CREATE INDEX discount_redemptions_order_id_idx ON discount_redemptions (order_id) WHERE order_id IS NOT NULL;

-- payments are charge attempts at the processor (built-in test processor or a real one), for a
-- checkout or an order; several attempts may exist per order (dunning retries).
CREATE TABLE payments (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    processor text NOT NULL DEFAULT 'stripe',
    processor_id text,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
    amount bigint NOT NULL CHECK (amount >= 0),
    currency text NOT NULL,
    method text NOT NULL DEFAULT 'card',
    method_metadata jsonb NOT NULL DEFAULT '{}',
    customer_email text,
    decline_reason text,
    decline_message text,
    risk_level text,
    risk_score integer,
    customer_id uuid REFERENCES customers (id) ON DELETE SET NULL,
    payment_method_id uuid REFERENCES payment_methods (id) ON DELETE SET NULL,
    checkout_id uuid REFERENCES checkouts (id) ON DELETE SET NULL,
    order_id uuid REFERENCES orders (id) ON DELETE SET NULL
);
CREATE UNIQUE INDEX payments_processor_id_key ON payments (organization_id, processor, processor_id)
    WHERE processor_id IS NOT NULL;
CREATE INDEX payments_organization_created_at_idx ON payments (organization_id, created_at DESC);
CREATE INDEX payments_order_id_idx ON payments (order_id, created_at DESC) WHERE order_id IS NOT NULL;
CREATE INDEX payments_checkout_id_idx ON payments (checkout_id) WHERE checkout_id IS NOT NULL;

-- refunds of (part of) a paid order; orders.refunded_amount/refunded_tax_amount are updated in
-- the same transaction with `SET refunded_amount = refunded_amount + $1`.
CREATE TABLE refunds (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    order_id uuid NOT NULL REFERENCES orders (id),
    subscription_id uuid REFERENCES subscriptions (id) ON DELETE SET NULL,
    customer_id uuid NOT NULL REFERENCES customers (id),
    payment_id uuid REFERENCES payments (id) ON DELETE SET NULL,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled')),
    reason text NOT NULL CHECK (reason IN ('duplicate', 'fraudulent', 'customer_request',
        'service_disruption', 'satisfaction_guarantee', 'dispute_prevention', 'other')),
    amount bigint NOT NULL CHECK (amount > 0),
    tax_amount bigint NOT NULL DEFAULT 0 CHECK (tax_amount >= 0),
    currency text NOT NULL,
    comment text,
    revoke_benefits boolean NOT NULL DEFAULT false,
    processor text NOT NULL DEFAULT 'stripe',
    processor_id text,
    metadata jsonb NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX refunds_processor_id_key ON refunds (organization_id, processor, processor_id)
    WHERE processor_id IS NOT NULL;
CREATE INDEX refunds_organization_created_at_idx ON refunds (organization_id, created_at DESC);
CREATE INDEX refunds_order_id_idx ON refunds (order_id);
CREATE INDEX refunds_customer_id_idx ON refunds (customer_id);
CREATE INDEX refunds_metadata_idx ON refunds USING gin (metadata jsonb_path_ops);

-- customer_balance_transactions is the customer's balance ledger per currency: positive rows
-- add credit, negative rows consume it (orders.applied_balance_amount). The balance is the sum.
CREATE TABLE customer_balance_transactions (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    currency text NOT NULL,
    amount bigint NOT NULL CHECK (amount <> 0),
    description text,
    order_id uuid REFERENCES orders (id) ON DELETE SET NULL,
    refund_id uuid REFERENCES refunds (id) ON DELETE SET NULL
);
CREATE INDEX customer_balance_transactions_customer_idx ON customer_balance_transactions
    (customer_id, currency, created_at);
CREATE INDEX customer_balance_transactions_order_id_idx ON customer_balance_transactions (order_id)
    WHERE order_id IS NOT NULL;

-- customer_seats are the seats of a seat-based subscription (recurring) or order (one-time).
-- With the member model, customer_id is the purchasing customer and member_id the occupant;
-- without it, customer_id is the occupant. invitation_token is the HMAC-SHA256 hex of the
-- claim token (like other tokens, shown once). customer_email on the wire comes from customers.
CREATE TABLE customer_seats (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    subscription_id uuid REFERENCES subscriptions (id) ON DELETE CASCADE,
    order_id uuid REFERENCES orders (id) ON DELETE CASCADE,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'claimed', 'revoked')),
    customer_id uuid REFERENCES customers (id) ON DELETE SET NULL,
    member_id uuid REFERENCES members (id) ON DELETE SET NULL,
    email text,
    invitation_token char(64),
    invitation_token_expires_at timestamptz,
    claimed_at timestamptz,
    revoked_at timestamptz,
    seat_metadata jsonb,
    CONSTRAINT customer_seats_one_source CHECK (num_nonnulls(subscription_id, order_id) = 1),
    CONSTRAINT customer_seats_claimed CHECK (status <> 'claimed' OR claimed_at IS NOT NULL),
    CONSTRAINT customer_seats_revoked CHECK (status <> 'revoked' OR revoked_at IS NOT NULL)
);
CREATE UNIQUE INDEX customer_seats_invitation_token_key ON customer_seats (invitation_token)
    WHERE invitation_token IS NOT NULL;
-- A member holds at most one live seat of a given subscription or order.
CREATE UNIQUE INDEX customer_seats_subscription_member_key ON customer_seats (subscription_id, member_id)
    WHERE status <> 'revoked' AND subscription_id IS NOT NULL AND member_id IS NOT NULL;
CREATE UNIQUE INDEX customer_seats_order_member_key ON customer_seats (order_id, member_id)
    WHERE status <> 'revoked' AND order_id IS NOT NULL AND member_id IS NOT NULL;
CREATE INDEX customer_seats_subscription_id_idx ON customer_seats (subscription_id, created_at)
    WHERE subscription_id IS NOT NULL;
CREATE INDEX customer_seats_order_id_idx ON customer_seats (order_id, created_at) WHERE order_id IS NOT NULL;
-- Also serve the portal's "subscriptions where I hold a claimed seat", by customer or member.
CREATE INDEX customer_seats_customer_id_idx ON customer_seats (customer_id, status) WHERE customer_id IS NOT NULL;
CREATE INDEX customer_seats_member_id_idx ON customer_seats (member_id, status) WHERE member_id IS NOT NULL;

-- +goose Down
DROP TABLE customer_seats, customer_balance_transactions, refunds, payments, discount_redemptions,
    order_items, orders;
ALTER TABLE organizations DROP COLUMN receipt_next_number;
DROP TABLE pending_subscription_updates, subscription_meters, subscription_prices;
DROP INDEX checkouts_subscription_id_idx;
ALTER TABLE checkouts DROP CONSTRAINT checkouts_subscription_fk;
DROP TABLE subscriptions;
DROP FUNCTION subscription_monthly_amount(bigint, text), subscription_status_rank(text, boolean),
    order_status_rank(text);
