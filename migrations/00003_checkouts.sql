-- +goose Up
-- Checkout sessions and the reusable checkout links that open them.

-- checkout_links are shareable URLs that open a fresh checkout for one of their products.
-- client_secret is the public identifier in the link URL, so it is stored as is (not a credential).
CREATE TABLE checkout_links (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    client_secret text NOT NULL,
    payment_processor text NOT NULL DEFAULT 'stripe' CHECK (payment_processor IN ('stripe')),
    label text,
    allow_discount_codes boolean NOT NULL DEFAULT true,
    require_billing_address boolean NOT NULL DEFAULT false,
    discount_id uuid REFERENCES discounts (id) ON DELETE SET NULL,
    success_url text,
    trial_interval text CHECK (trial_interval IN ('day', 'week', 'month', 'year')),
    trial_interval_count integer CHECK (trial_interval_count > 0),
    metadata jsonb NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX checkout_links_client_secret_key ON checkout_links (client_secret);
CREATE INDEX checkout_links_organization_created_at_idx ON checkout_links (organization_id, created_at DESC)
    WHERE deleted_at IS NULL;

-- checkout_link_products are the products a checkout link offers, in display order.
CREATE TABLE checkout_link_products (
    checkout_link_id uuid NOT NULL REFERENCES checkout_links (id) ON DELETE CASCADE,
    product_id uuid NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    "order" integer NOT NULL DEFAULT 0,
    PRIMARY KEY (checkout_link_id, product_id)
);
CREATE INDEX checkout_link_products_product_id_idx ON checkout_link_products (product_id);

-- checkouts are checkout sessions (Checkout schema). client_secret is stored in plaintext
-- because every Checkout response returns it and the public `url` embeds it; it is random and
-- globally unique. Derived wire fields are computed, not stored: url, is_discount_applicable,
-- is_free_product_price, is_payment_required, is_payment_setup_required,
-- is_payment_form_required, billing_address_fields, active_trial_interval(_count), prices.
-- subscription_id (an existing subscription being upgraded) gets its FK in 00004.
-- customer_billing_address follows Address, like customers.billing_address.
CREATE TABLE checkouts (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    payment_processor text NOT NULL DEFAULT 'stripe' CHECK (payment_processor IN ('stripe')),
    status text NOT NULL DEFAULT 'open'
        CHECK (status IN ('open', 'expired', 'confirmed', 'succeeded', 'failed')),
    client_secret text NOT NULL,
    expires_at timestamptz NOT NULL,
    success_url text NOT NULL,
    return_url text,
    embed_origin text,
    currency text NOT NULL DEFAULT 'usd',
    amount bigint NOT NULL DEFAULT 0 CHECK (amount >= 0),
    discount_amount bigint NOT NULL DEFAULT 0 CHECK (discount_amount >= 0),
    net_amount bigint NOT NULL DEFAULT 0 CHECK (net_amount >= 0),
    -- tax_amount and tax_behavior are null until tax can be calculated.
    tax_amount bigint CHECK (tax_amount >= 0),
    tax_behavior text CHECK (tax_behavior IN ('inclusive', 'exclusive')),
    total_amount bigint NOT NULL DEFAULT 0 CHECK (total_amount >= 0),
    seats integer CHECK (seats > 0),
    min_seats integer CHECK (min_seats > 0),
    max_seats integer CHECK (max_seats > 0),
    allow_trial boolean,
    trial_interval text CHECK (trial_interval IN ('day', 'week', 'month', 'year')),
    trial_interval_count integer CHECK (trial_interval_count > 0),
    trial_end timestamptz,
    product_id uuid REFERENCES products (id),
    product_price_id uuid REFERENCES product_prices (id),
    discount_id uuid REFERENCES discounts (id) ON DELETE SET NULL,
    checkout_link_id uuid REFERENCES checkout_links (id) ON DELETE SET NULL,
    subscription_id uuid,
    allow_discount_codes boolean NOT NULL DEFAULT true,
    require_billing_address boolean NOT NULL DEFAULT false,
    is_business_customer boolean NOT NULL DEFAULT false,
    customer_id uuid REFERENCES customers (id) ON DELETE SET NULL,
    external_customer_id text,
    customer_name text,
    customer_email text,
    customer_ip_address inet,
    customer_billing_name text,
    customer_billing_address jsonb,
    customer_tax_id text,
    locale text,
    payment_method_type text,
    -- payment_processor_metadata is what the client needs to drive the processor's form
    -- (e.g. a publishable key or intent client secret); it is returned as is.
    payment_processor_metadata jsonb NOT NULL DEFAULT '{}',
    customer_metadata jsonb NOT NULL DEFAULT '{}',
    custom_field_data jsonb NOT NULL DEFAULT '{}',
    metadata jsonb NOT NULL DEFAULT '{}',
    CONSTRAINT checkouts_seat_range CHECK (min_seats IS NULL OR max_seats IS NULL OR min_seats <= max_seats)
);
CREATE UNIQUE INDEX checkouts_client_secret_key ON checkouts (client_secret);
CREATE INDEX checkouts_organization_created_at_idx ON checkouts (organization_id, created_at DESC);
CREATE INDEX checkouts_organization_expires_at_idx ON checkouts (organization_id, expires_at);
CREATE INDEX checkouts_organization_status_idx ON checkouts (organization_id, status, created_at DESC);
CREATE INDEX checkouts_product_id_idx ON checkouts (product_id, created_at DESC) WHERE product_id IS NOT NULL;
CREATE INDEX checkouts_customer_id_idx ON checkouts (customer_id, created_at DESC) WHERE customer_id IS NOT NULL;
CREATE INDEX checkouts_discount_id_idx ON checkouts (discount_id) WHERE discount_id IS NOT NULL;
CREATE INDEX checkouts_checkout_link_id_idx ON checkouts (checkout_link_id) WHERE checkout_link_id IS NOT NULL;
CREATE INDEX checkouts_product_price_id_idx ON checkouts (product_price_id) WHERE product_price_id IS NOT NULL;
-- The `query` filter is an unescaped ILIKE '%…%' on customer_email.
CREATE INDEX checkouts_customer_email_trgm_idx ON checkouts USING gin (customer_email gin_trgm_ops);
-- The expiry job scans open sessions past expires_at.
CREATE INDEX checkouts_open_expires_at_idx ON checkouts (expires_at) WHERE status = 'open';

-- checkout_products are the products a checkout lets the customer choose from (Checkout.products).
CREATE TABLE checkout_products (
    checkout_id uuid NOT NULL REFERENCES checkouts (id) ON DELETE CASCADE,
    product_id uuid NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    "order" integer NOT NULL DEFAULT 0,
    PRIMARY KEY (checkout_id, product_id)
);
CREATE INDEX checkout_products_product_id_idx ON checkout_products (product_id);

-- +goose Down
DROP TABLE checkout_products, checkouts, checkout_link_products, checkout_links;
