-- +goose Up
-- Catalog extensions: meters, custom fields, discounts, files and product medias. These are
-- organization-level definitions that checkouts, orders and subscriptions (00003) point at.

-- meters define how usage events (00004) aggregate into billable units. filter follows the
-- Filter schema {"conjunction": "and"|"or", "clauses": [FilterClause | Filter, ...]} and
-- aggregation one of {"func": "count"}, {"func": "sum"|"max"|"min"|"avg", "property": ...},
-- {"func": "unique", "property": ...}. Meters are archived, never deleted, because prices and
-- subscription meters keep referring to them.
CREATE TABLE meters (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name text NOT NULL,
    unit text NOT NULL DEFAULT 'scalar' CHECK (unit IN ('scalar', 'token', 'custom')),
    custom_label text,
    custom_multiplier integer CHECK (custom_multiplier > 0),
    filter jsonb NOT NULL,
    aggregation jsonb NOT NULL,
    archived_at timestamptz,
    metadata jsonb NOT NULL DEFAULT '{}',
    CONSTRAINT meters_filter_shape CHECK (jsonb_typeof(filter) = 'object'),
    CONSTRAINT meters_aggregation_func CHECK (
        aggregation ->> 'func' IN ('count', 'sum', 'max', 'min', 'avg', 'unique')),
    CONSTRAINT meters_aggregation_property CHECK (
        aggregation ->> 'func' = 'count' OR aggregation ? 'property')
);
CREATE INDEX meters_organization_created_at_idx ON meters (organization_id, created_at DESC);
CREATE INDEX meters_organization_name_idx ON meters (organization_id, name);
CREATE INDEX meters_metadata_idx ON meters USING gin (metadata jsonb_path_ops);

-- product_prices.meter_id (00001) could not reference meters before they existed.
ALTER TABLE product_prices ADD CONSTRAINT product_prices_meter_fk
    FOREIGN KEY (meter_id) REFERENCES meters (id);
CREATE INDEX product_prices_meter_id_idx ON product_prices (meter_id) WHERE meter_id IS NOT NULL;

-- custom_fields are seller-defined checkout questions. Their answers are stored in the
-- custom_field_data jsonb of checkouts, orders and subscriptions, keyed by slug.
-- properties holds the type's CustomField*Properties object as the contract spells it.
CREATE TABLE custom_fields (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    type text NOT NULL CHECK (type IN ('text', 'number', 'date', 'checkbox', 'select')),
    slug text NOT NULL CHECK (length(slug) >= 1),
    name text NOT NULL,
    properties jsonb NOT NULL DEFAULT '{}',
    metadata jsonb NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX custom_fields_organization_slug_key ON custom_fields (organization_id, slug)
    WHERE deleted_at IS NULL;
CREATE INDEX custom_fields_organization_created_at_idx ON custom_fields (organization_id, created_at DESC);
CREATE INDEX custom_fields_metadata_idx ON custom_fields USING gin (metadata jsonb_path_ops);

-- product_custom_fields attaches custom fields to a product (AttachedCustomField: order, required).
CREATE TABLE product_custom_fields (
    product_id uuid NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    custom_field_id uuid NOT NULL REFERENCES custom_fields (id) ON DELETE CASCADE,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    "order" integer NOT NULL DEFAULT 0,
    required boolean NOT NULL DEFAULT false,
    PRIMARY KEY (product_id, custom_field_id)
);
CREATE INDEX product_custom_fields_custom_field_id_idx ON product_custom_fields (custom_field_id);

-- discounts are percentage (basis_points) or fixed (amount in currency; amounts maps further
-- currencies to amounts, e.g. {"eur": 900}, and the wire `amounts` is {currency: amount} plus
-- that map). redemptions_count is bumped atomically with
--   UPDATE ... SET redemptions_count = redemptions_count + 1
--   WHERE max_redemptions IS NULL OR redemptions_count < max_redemptions
-- so the cap holds under concurrency; discount_redemptions (00003) keeps the per-use rows.
CREATE TABLE discounts (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name text NOT NULL CHECK (length(name) >= 1),
    type text NOT NULL CHECK (type IN ('fixed', 'percentage')),
    basis_points integer CHECK (basis_points BETWEEN 1 AND 10000),
    amount bigint CHECK (amount >= 0),
    currency text,
    amounts jsonb,
    duration text NOT NULL CHECK (duration IN ('once', 'forever', 'repeating')),
    duration_in_months integer CHECK (duration_in_months > 0),
    code text CHECK (length(code) >= 1),
    starts_at timestamptz,
    ends_at timestamptz,
    max_redemptions integer CHECK (max_redemptions > 0),
    max_redemptions_per_customer integer CHECK (max_redemptions_per_customer > 0),
    redemptions_count integer NOT NULL DEFAULT 0 CHECK (redemptions_count >= 0),
    metadata jsonb NOT NULL DEFAULT '{}',
    CONSTRAINT discounts_percentage CHECK (type <> 'percentage' OR (basis_points IS NOT NULL AND amount IS NULL)),
    CONSTRAINT discounts_fixed CHECK (type <> 'fixed' OR (amount IS NOT NULL AND currency IS NOT NULL AND basis_points IS NULL)),
    CONSTRAINT discounts_repeating CHECK ((duration = 'repeating') = (duration_in_months IS NOT NULL)),
    CONSTRAINT discounts_window CHECK (starts_at IS NULL OR ends_at IS NULL OR starts_at < ends_at),
    CONSTRAINT discounts_amounts_shape CHECK (amounts IS NULL OR jsonb_typeof(amounts) = 'object')
);
-- Codes are matched case-insensitively at checkout, so they are unique that way too.
CREATE UNIQUE INDEX discounts_organization_code_key ON discounts (organization_id, lower(code))
    WHERE deleted_at IS NULL AND code IS NOT NULL;
CREATE INDEX discounts_organization_created_at_idx ON discounts (organization_id, created_at DESC);
CREATE INDEX discounts_organization_name_idx ON discounts (organization_id, name);
CREATE INDEX discounts_metadata_idx ON discounts USING gin (metadata jsonb_path_ops);

-- discount_products restricts a discount to some products; no rows means every product.
CREATE TABLE discount_products (
    discount_id uuid NOT NULL REFERENCES discounts (id) ON DELETE CASCADE,
    product_id uuid NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (discount_id, product_id)
);
CREATE INDEX discount_products_product_id_idx ON discount_products (product_id);

-- files are objects in blob storage (FileRead and its service variants). path is the object
-- key "<service>/<organization_id>/<file id>/<name>", unique across the installation.
-- upload_id is the multipart upload id handed out by POST /v1/files/ and echoed back as `id`
-- on completion. is_uploaded turns true once the upload is completed on storage; is_enabled
-- lets an operator withdraw a file without deleting it. size_readable is derived, not stored.
CREATE TABLE files (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    service text NOT NULL CHECK (service IN ('downloadable', 'product_media', 'organization_avatar',
        'support_case_attachment')),
    name text NOT NULL,
    version text,
    path text NOT NULL,
    mime_type text NOT NULL,
    size bigint NOT NULL CHECK (size >= 0),
    storage_version text,
    checksum_etag text,
    checksum_sha256_base64 text,
    checksum_sha256_hex text,
    last_modified_at timestamptz,
    upload_id text,
    is_uploaded boolean NOT NULL DEFAULT false,
    is_enabled boolean NOT NULL DEFAULT true,
    flagged_malicious_at timestamptz
);
CREATE UNIQUE INDEX files_path_key ON files (path);
CREATE UNIQUE INDEX files_upload_id_key ON files (upload_id) WHERE upload_id IS NOT NULL;
CREATE INDEX files_organization_created_at_idx ON files (organization_id, created_at DESC)
    WHERE deleted_at IS NULL;

-- product_medias are the ordered images of a product (files with service product_media).
CREATE TABLE product_medias (
    product_id uuid NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    file_id uuid NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    "order" integer NOT NULL DEFAULT 0,
    PRIMARY KEY (product_id, file_id)
);
CREATE INDEX product_medias_file_id_idx ON product_medias (file_id);

-- +goose Down
DROP TABLE product_medias, files, discount_products, discounts, product_custom_fields, custom_fields;
DROP INDEX product_prices_meter_id_idx;
ALTER TABLE product_prices DROP CONSTRAINT product_prices_meter_fk;
DROP TABLE meters;
