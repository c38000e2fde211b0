-- +goose Up
-- What customers hold because of benefits: grants, license keys and their activations, and
-- the per-file state of downloadables benefits.

-- benefit_grants record a benefit granted to a customer (or one of its members) by a
-- subscription or an order. There is no status column: is_granted is granted_at IS NOT NULL
-- and is_revoked is revoked_at IS NOT NULL. Granting clears revoked_at and error, revoking
-- clears granted_at, a failed grant clears both and sets error {message, type, timestamp};
-- a failed revoke keeps granted_at and sets error. properties holds the type's
-- BenefitGrant*Properties (e.g. {"license_key_id": ..., "display_key": ...}).
-- revoke_requested_at marks a revoke that is queued but not yet done.
CREATE TABLE benefit_grants (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    benefit_id uuid NOT NULL REFERENCES benefits (id) ON DELETE CASCADE,
    customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    member_id uuid REFERENCES members (id) ON DELETE CASCADE,
    subscription_id uuid REFERENCES subscriptions (id) ON DELETE CASCADE,
    order_id uuid REFERENCES orders (id) ON DELETE CASCADE,
    granted_at timestamptz,
    revoked_at timestamptz,
    revoke_requested_at timestamptz,
    properties jsonb NOT NULL DEFAULT '{}',
    error jsonb,
    CONSTRAINT benefit_grants_granted_or_revoked CHECK (granted_at IS NULL OR revoked_at IS NULL),
    CONSTRAINT benefit_grants_one_scope CHECK (num_nonnulls(subscription_id, order_id) <= 1)
);
-- One live grant per (customer, benefit, member, scope); NULLs compare equal so a
-- customer-level grant (member_id NULL) is unique too.
CREATE UNIQUE INDEX benefit_grants_scope_key ON benefit_grants
    (customer_id, benefit_id, member_id, subscription_id, order_id) NULLS NOT DISTINCT
    WHERE deleted_at IS NULL;
-- GET /v1/benefits/{id}/grants: created_at desc, filters is_granted, customer_id, member_id.
CREATE INDEX benefit_grants_benefit_created_at_idx ON benefit_grants (benefit_id, created_at DESC)
    WHERE deleted_at IS NULL;
CREATE INDEX benefit_grants_customer_created_at_idx ON benefit_grants (customer_id, created_at DESC)
    WHERE deleted_at IS NULL;
CREATE INDEX benefit_grants_member_id_idx ON benefit_grants (member_id) WHERE member_id IS NOT NULL;
CREATE INDEX benefit_grants_subscription_id_idx ON benefit_grants (subscription_id) WHERE subscription_id IS NOT NULL;
CREATE INDEX benefit_grants_order_id_idx ON benefit_grants (order_id) WHERE order_id IS NOT NULL;
-- A license key status change looks up the grant that owns the key.
CREATE INDEX benefit_grants_license_key_id_idx ON benefit_grants ((properties ->> 'license_key_id'))
    WHERE properties ? 'license_key_id';

-- license_keys are issued by license_keys benefits. key is plaintext (it is not a credential:
-- customers read it back) and unique per organization; lookups are exact and case-sensitive.
-- display_key is "****-" plus the key's last 6 characters. usage may go negative or above
-- limit_usage through PATCH (contract §4.4), so it has no range check. Counters change only
-- with in-place arithmetic (SET usage = usage + $1, validations = validations + 1).
CREATE TABLE license_keys (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    benefit_id uuid NOT NULL REFERENCES benefits (id) ON DELETE CASCADE,
    customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    member_id uuid REFERENCES members (id) ON DELETE CASCADE,
    key text NOT NULL CHECK (length(key) >= 1),
    display_key text GENERATED ALWAYS AS ('****-' || right(key, 6)) STORED,
    status text NOT NULL DEFAULT 'granted' CHECK (status IN ('granted', 'revoked', 'disabled')),
    limit_activations integer CHECK (limit_activations > 0),
    usage integer NOT NULL DEFAULT 0,
    limit_usage integer CHECK (limit_usage > 0),
    validations integer NOT NULL DEFAULT 0 CHECK (validations >= 0),
    last_validated_at timestamptz,
    expires_at timestamptz,
    CONSTRAINT license_keys_organization_key_key UNIQUE (organization_id, key)
);
-- Lists are created_at ascending, filtered by organization, benefit, status; portal by
-- customer or member.
CREATE INDEX license_keys_organization_created_at_idx ON license_keys (organization_id, created_at)
    WHERE deleted_at IS NULL;
CREATE INDEX license_keys_organization_status_idx ON license_keys (organization_id, status, created_at)
    WHERE deleted_at IS NULL;
CREATE INDEX license_keys_benefit_created_at_idx ON license_keys (benefit_id, created_at)
    WHERE deleted_at IS NULL;
CREATE INDEX license_keys_customer_created_at_idx ON license_keys (customer_id, created_at)
    WHERE deleted_at IS NULL;
CREATE INDEX license_keys_member_created_at_idx ON license_keys (member_id, created_at)
    WHERE deleted_at IS NULL AND member_id IS NOT NULL;

-- license_key_activations are devices/instances a key is activated on. Deactivation is a soft
-- delete that frees a slot; the limit is enforced by locking the license_keys row
-- (SELECT ... FOR UPDATE) and counting live activations in the same transaction.
-- conditions must match exactly on validate and are never returned; meta is returned.
CREATE TABLE license_key_activations (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    license_key_id uuid NOT NULL REFERENCES license_keys (id) ON DELETE CASCADE,
    label text NOT NULL DEFAULT '',
    conditions jsonb NOT NULL DEFAULT '{}',
    meta jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX license_key_activations_live_idx ON license_key_activations (license_key_id, created_at)
    WHERE deleted_at IS NULL;

-- downloadables are the per-file state of a downloadables benefit for a customer (or member):
-- granted files can be downloaded; downloaded counts downloads.
CREATE TABLE downloadables (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    benefit_id uuid NOT NULL REFERENCES benefits (id) ON DELETE CASCADE,
    file_id uuid NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    member_id uuid REFERENCES members (id) ON DELETE CASCADE,
    status text NOT NULL DEFAULT 'granted' CHECK (status IN ('granted', 'revoked')),
    downloaded integer NOT NULL DEFAULT 0 CHECK (downloaded >= 0),
    last_downloaded_at timestamptz
);
CREATE UNIQUE INDEX downloadables_holder_file_key ON downloadables
    (customer_id, member_id, benefit_id, file_id) NULLS NOT DISTINCT WHERE deleted_at IS NULL;
CREATE INDEX downloadables_benefit_id_idx ON downloadables (benefit_id);
CREATE INDEX downloadables_file_id_idx ON downloadables (file_id);
CREATE INDEX downloadables_member_id_idx ON downloadables (member_id) WHERE member_id IS NOT NULL;

-- +goose Down
DROP TABLE downloadables, license_key_activations, license_keys, benefit_grants;
