-- +goose Up
-- Core tenancy, identity and catalog tables. Every organization-owned table carries
-- organization_id so that every query can filter by tenant and the schema can be
-- distributed by that column later.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE organizations (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    name text NOT NULL,
    slug text NOT NULL,
    avatar_url text,
    email text,
    website text,
    default_presentment_currency text NOT NULL DEFAULT 'usd',
    proration_behavior text NOT NULL DEFAULT 'prorate'
        CHECK (proration_behavior IN ('invoice', 'prorate', 'next_period', 'reset')),
    allow_customer_updates boolean NOT NULL DEFAULT true,
    -- customer_portal_settings follows OrganizationCustomerPortalSettings:
    -- {"usage": {"show": bool}, "subscription": {"update_seats": bool, "update_plan": bool},
    --  "customer": {"allow_email_change": bool}}
    customer_portal_settings jsonb NOT NULL DEFAULT
        '{"usage": {"show": true}, "subscription": {"update_seats": true, "update_plan": true}, "customer": {"allow_email_change": true}}',
    -- feature_settings holds feature flags such as member_model_enabled.
    feature_settings jsonb NOT NULL DEFAULT '{}',
    -- processor_mode says whether payments run against the test processor or a live one.
    processor_mode text NOT NULL DEFAULT 'test' CHECK (processor_mode IN ('test', 'live')),
    invoice_next_number bigint NOT NULL DEFAULT 1,
    CONSTRAINT organizations_slug_format CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,61}$')
);
CREATE UNIQUE INDEX organizations_slug_key ON organizations (slug) WHERE deleted_at IS NULL;

CREATE TABLE users (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    email text NOT NULL,
    email_verified boolean NOT NULL DEFAULT false,
    avatar_url text
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email)) WHERE deleted_at IS NULL;

-- user_organizations is a user's membership of an organization; its role decides the
-- permissions user tokens get in that organization.
CREATE TABLE user_organizations (
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    role text NOT NULL DEFAULT 'owner' CHECK (role IN ('owner', 'admin', 'member')),
    PRIMARY KEY (user_id, organization_id)
);
CREATE INDEX user_organizations_organization_id_idx ON user_organizations (organization_id);

-- Tokens are stored only as lowercase hex HMAC-SHA256 of the token, keyed by the server secret.
CREATE TABLE organization_access_tokens (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    comment text NOT NULL DEFAULT '',
    token char(64) NOT NULL,
    scope text NOT NULL,
    expires_at timestamptz,
    last_used_at timestamptz
);
CREATE UNIQUE INDEX organization_access_tokens_token_key ON organization_access_tokens (token);
CREATE INDEX organization_access_tokens_organization_id_idx ON organization_access_tokens (organization_id);

CREATE TABLE personal_access_tokens (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    comment text NOT NULL DEFAULT '',
    token char(64) NOT NULL,
    scope text NOT NULL,
    expires_at timestamptz,
    last_used_at timestamptz
);
CREATE UNIQUE INDEX personal_access_tokens_token_key ON personal_access_tokens (token);
CREATE INDEX personal_access_tokens_user_id_idx ON personal_access_tokens (user_id);

CREATE TABLE customers (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    type text NOT NULL DEFAULT 'individual' CHECK (type IN ('individual', 'team')),
    external_id text,
    email text,
    email_verified boolean NOT NULL DEFAULT false,
    name text,
    billing_name text,
    -- billing_address follows Address: {line1, line2, postal_code, city, state, country}.
    billing_address jsonb,
    tax_id text,
    tax_id_format text,
    locale text,
    metadata jsonb NOT NULL DEFAULT '{}',
    avatar_url text,
    first_user_event_at timestamptz,
    default_payment_method_id uuid,
    CONSTRAINT customers_email_for_individuals CHECK (type = 'team' OR email IS NOT NULL),
    CONSTRAINT customers_tax_id_pair CHECK ((tax_id IS NULL) = (tax_id_format IS NULL))
);
CREATE UNIQUE INDEX customers_organization_email_key ON customers (organization_id, lower(email))
    WHERE deleted_at IS NULL AND email IS NOT NULL;
CREATE UNIQUE INDEX customers_organization_external_id_key ON customers (organization_id, external_id)
    WHERE deleted_at IS NULL AND external_id IS NOT NULL;
CREATE INDEX customers_organization_created_at_idx ON customers (organization_id, created_at DESC);
CREATE INDEX customers_metadata_idx ON customers USING gin (metadata jsonb_path_ops);
CREATE INDEX customers_search_idx ON customers USING gin
    ((coalesce(email, '') || ' ' || coalesce(name, '') || ' ' || coalesce(external_id, '')) gin_trgm_ops);

-- members are the people of a customer (the member model); an individual customer has one owner.
CREATE TABLE members (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    external_id text,
    email text NOT NULL,
    name text,
    role text NOT NULL DEFAULT 'member' CHECK (role IN ('owner', 'billing_manager', 'member'))
);
CREATE UNIQUE INDEX members_customer_email_key ON members (customer_id, lower(email)) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX members_customer_external_id_key ON members (customer_id, external_id)
    WHERE deleted_at IS NULL AND external_id IS NOT NULL;
CREATE UNIQUE INDEX members_customer_owner_key ON members (customer_id) WHERE deleted_at IS NULL AND role = 'owner';
CREATE INDEX members_organization_id_idx ON members (organization_id);

CREATE TABLE customer_sessions (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    token char(64) NOT NULL,
    expires_at timestamptz NOT NULL,
    return_url text
);
CREATE UNIQUE INDEX customer_sessions_token_key ON customer_sessions (token);
CREATE INDEX customer_sessions_expires_at_idx ON customer_sessions (expires_at);

CREATE TABLE member_sessions (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    member_id uuid NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    token char(64) NOT NULL,
    expires_at timestamptz NOT NULL,
    return_url text
);
CREATE UNIQUE INDEX member_sessions_token_key ON member_sessions (token);
CREATE INDEX member_sessions_expires_at_idx ON member_sessions (expires_at);

-- payment_methods are saved instruments of a customer at the payment processor.
CREATE TABLE payment_methods (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    processor text NOT NULL DEFAULT 'stripe',
    processor_id text NOT NULL,
    type text NOT NULL DEFAULT 'card',
    brand text,
    last4 text,
    exp_month integer,
    exp_year integer,
    wallet text,
    CONSTRAINT payment_methods_card_details CHECK (
        type <> 'card' OR (brand IS NOT NULL AND last4 IS NOT NULL AND exp_month IS NOT NULL AND exp_year IS NOT NULL))
);
CREATE UNIQUE INDEX payment_methods_processor_id_key ON payment_methods (organization_id, processor, processor_id);
CREATE INDEX payment_methods_customer_created_at_idx ON payment_methods (customer_id, created_at DESC)
    WHERE deleted_at IS NULL;

ALTER TABLE customers ADD CONSTRAINT customers_default_payment_method_fk
    FOREIGN KEY (default_payment_method_id) REFERENCES payment_methods (id) ON DELETE SET NULL
    DEFERRABLE INITIALLY DEFERRED;

CREATE TABLE products (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name text NOT NULL CHECK (length(name) >= 3),
    description text,
    visibility text NOT NULL DEFAULT 'public' CHECK (visibility IN ('draft', 'private', 'public')),
    recurring_interval text CHECK (recurring_interval IN ('day', 'week', 'month', 'year')),
    recurring_interval_count integer CHECK (recurring_interval_count > 0),
    meter_interval text CHECK (meter_interval IN ('day', 'week', 'month', 'year')),
    meter_interval_count integer CHECK (meter_interval_count > 0),
    trial_interval text CHECK (trial_interval IN ('day', 'week', 'month', 'year')),
    trial_interval_count integer CHECK (trial_interval_count > 0),
    is_archived boolean NOT NULL DEFAULT false,
    metadata jsonb NOT NULL DEFAULT '{}',
    CONSTRAINT products_recurring_pair CHECK ((recurring_interval IS NULL) = (recurring_interval_count IS NULL))
);
CREATE INDEX products_organization_created_at_idx ON products (organization_id, created_at DESC);
CREATE INDEX products_organization_name_idx ON products (organization_id, name);
CREATE INDEX products_metadata_idx ON products USING gin (metadata jsonb_path_ops);

-- product_prices holds every price kind; the columns used depend on amount_type.
CREATE TABLE product_prices (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    product_id uuid NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    source text NOT NULL DEFAULT 'catalog' CHECK (source IN ('catalog', 'ad_hoc')),
    amount_type text NOT NULL CHECK (amount_type IN ('fixed', 'custom', 'free', 'seat_based', 'metered_unit')),
    price_currency text NOT NULL DEFAULT 'usd',
    tax_behavior text CHECK (tax_behavior IN ('inclusive', 'exclusive')),
    is_archived boolean NOT NULL DEFAULT false,
    price_amount bigint CHECK (price_amount >= 0),
    minimum_amount bigint CHECK (minimum_amount >= 0),
    maximum_amount bigint,
    preset_amount bigint,
    -- seat_tiers follows ProductPriceSeatTiers: {"tiers": [{"min_seats", "max_seats", "price_per_seat"}], ...}.
    seat_tiers jsonb,
    unit_amount numeric(17, 12),
    cap_amount bigint,
    meter_id uuid,
    CONSTRAINT product_prices_fixed CHECK (amount_type <> 'fixed' OR price_amount IS NOT NULL),
    CONSTRAINT product_prices_custom CHECK (amount_type <> 'custom' OR minimum_amount IS NOT NULL),
    CONSTRAINT product_prices_seat_based CHECK (amount_type <> 'seat_based' OR seat_tiers IS NOT NULL),
    CONSTRAINT product_prices_metered CHECK (amount_type <> 'metered_unit' OR (unit_amount IS NOT NULL AND meter_id IS NOT NULL))
);
CREATE INDEX product_prices_product_id_idx ON product_prices (product_id, created_at);

CREATE TABLE benefits (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    type text NOT NULL CHECK (type IN ('custom', 'discord', 'github_repository', 'downloadables',
        'license_keys', 'meter_credit', 'feature_flag', 'slack_shared_channel')),
    description text NOT NULL CHECK (length(description) BETWEEN 3 AND 42),
    visibility text NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'private')),
    selectable boolean NOT NULL DEFAULT true,
    deletable boolean NOT NULL DEFAULT true,
    -- properties holds the type's Benefit*Properties object as the contract spells it.
    properties jsonb NOT NULL DEFAULT '{}',
    metadata jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX benefits_organization_created_at_idx ON benefits (organization_id, created_at DESC);
CREATE INDEX benefits_organization_type_idx ON benefits (organization_id, type);

CREATE TABLE product_benefits (
    product_id uuid NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    benefit_id uuid NOT NULL REFERENCES benefits (id) ON DELETE CASCADE,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    "order" integer NOT NULL DEFAULT 0,
    PRIMARY KEY (product_id, benefit_id)
);
CREATE INDEX product_benefits_benefit_id_idx ON product_benefits (benefit_id);

-- +goose Down
DROP TABLE product_benefits, benefits, product_prices, products;
ALTER TABLE customers DROP CONSTRAINT customers_default_payment_method_fk;
DROP TABLE payment_methods, member_sessions, customer_sessions, members, customers,
    personal_access_tokens, organization_access_tokens, user_organizations, users, organizations;
