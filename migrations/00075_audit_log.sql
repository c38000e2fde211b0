-- +goose Up
-- The audit log: one row per change to an organization's configuration and commerce data,
-- written by a row trigger in the transaction of the change, so a change and its record
-- commit or roll back together whichever code path made it.
--
-- Who, how and from where come from the transaction-local setting till.audit, a JSON object
-- that storage.InTx sets from the request's context (storage.AuditActor): kind (organization,
-- user, customer_session, member_session, anonymous), user, token, client (OAuth2 client_id),
-- customer, member, op (GraphQL root field or /v1 route), api (graphql or v1), ip, ua
-- (user agent) and rid (request id). A change made without it, by a background job or a
-- statement outside a transaction, is recorded as system.
--
-- changes maps each changed column to [before, after] (before is null on create, after on
-- delete; columns null on both sides are left out), or to the string "redacted" for a
-- secret column: that it changed is recorded, never its value. created_at, modified_at and
-- the object's id and organization columns are never listed: the row says them.
--
-- The log references nothing, so it outlives what it describes and costs the change no
-- foreign-key check; organization_id is null for rows of tables without an organization
-- (personal access tokens, users).
CREATE TABLE audit_log (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    -- clock_timestamp, not now(): the changes of one transaction keep their order.
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    organization_id uuid,
    actor_kind text NOT NULL CHECK (actor_kind IN
        ('system', 'organization', 'user', 'customer_session', 'member_session', 'anonymous')),
    user_id uuid,
    token_id uuid,
    oauth_client_id text,
    customer_id uuid,
    member_id uuid,
    operation text,
    api text,
    object_type text NOT NULL,
    object_id uuid NOT NULL,
    action text NOT NULL CHECK (action IN ('create', 'update', 'delete')),
    changes jsonb NOT NULL,
    ip inet,
    user_agent text,
    request_id text
);
-- The organization's log newest first, and one object's history.
CREATE INDEX audit_log_organization ON audit_log (organization_id, created_at DESC, id DESC);
CREATE INDEX audit_log_object ON audit_log (organization_id, object_id, created_at DESC);
-- Retention deletes by age; rows arrive in time order, so a BRIN index is enough and costs
-- inserts next to nothing.
CREATE INDEX audit_log_created_at ON audit_log USING brin (created_at);

-- audit_write records one change with the transaction's actor. Triggers call it; a use case
-- may too, for a change to a table that is not tracked.
-- +goose StatementBegin
CREATE FUNCTION audit_write(p_organization_id uuid, p_object_type text, p_object_id uuid, p_action text,
    p_changes jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    a jsonb := nullif(current_setting('till.audit', true), '')::jsonb;
BEGIN
    INSERT INTO audit_log (organization_id, actor_kind, user_id, token_id, oauth_client_id, customer_id,
        member_id, operation, api, object_type, object_id, action, changes, ip, user_agent, request_id)
    VALUES (p_organization_id, coalesce(a->>'kind', 'system'), (a->>'user')::uuid, (a->>'token')::uuid,
        a->>'client', (a->>'customer')::uuid, (a->>'member')::uuid, a->>'op', a->>'api', p_object_type,
        p_object_id, p_action, p_changes, (a->>'ip')::inet, a->>'ua', a->>'rid');
END
$$;
-- +goose StatementEnd

-- audit_change is the row trigger audit_track installs. Its arguments: the object type, the
-- id column, the organization column ('' for none), the masked columns and the ignored
-- columns (text arrays). An update that changes only ignored columns (counters the data
-- plane bumps) records nothing; clearing deleted_at is an update, setting it a delete.
-- +goose StatementBegin
CREATE FUNCTION audit_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    o jsonb;
    n jsonb;
    r jsonb;
    diff jsonb;
    masked text[] := TG_ARGV[3];
    ignored text[] := TG_ARGV[4];
    act text := CASE TG_OP WHEN 'INSERT' THEN 'create' WHEN 'DELETE' THEN 'delete' ELSE 'update' END;
BEGIN
    IF TG_OP <> 'INSERT' THEN
        o := to_jsonb(OLD);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        n := to_jsonb(NEW);
    END IF;
    r := coalesce(n, o);
    SELECT jsonb_object_agg(key, CASE WHEN key = ANY (masked) THEN to_jsonb('redacted'::text)
            ELSE jsonb_build_array(coalesce(o->key, 'null'), coalesce(n->key, 'null')) END)
    INTO diff
    FROM jsonb_object_keys(r) AS key
    WHERE key NOT IN ('created_at', 'modified_at', TG_ARGV[1], TG_ARGV[2]) AND key <> ALL (ignored)
        AND coalesce(o->key, 'null') IS DISTINCT FROM coalesce(n->key, 'null');
    IF diff IS NULL THEN
        IF TG_OP = 'UPDATE' THEN
            RETURN NULL;
        END IF;
        diff := '{}';
    END IF;
    IF TG_OP = 'UPDATE' AND diff ? 'deleted_at' AND o->'deleted_at' = 'null' THEN
        act := 'delete';
    END IF;
    PERFORM audit_write(CASE WHEN TG_ARGV[2] = '' THEN NULL ELSE (r->>TG_ARGV[2])::uuid END, TG_ARGV[0],
        (r->>TG_ARGV[1])::uuid, act, diff);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- audit_track makes a table audited: the one line a new table needs, e.g.
--   SELECT audit_track('invitations', 'invitation', masked => '{token}');
-- id_column names the object (a link table names its owner, e.g. product_benefits by
-- product_id), organization_column its organization ('' for none). masked columns are
-- recorded as changed without their values (secrets, hashes); ignored columns are not
-- recorded at all (counters and bookkeeping the data plane writes on every request), and an
-- update of them alone does not run the trigger.
-- actor_only records only changes made with an actor, for data-plane tables whose own
-- churn is not worth a row but whose changes by a caller are (retrying a job); events
-- narrows the trigger (e.g. 'UPDATE'). Columns are checked, so a typo fails the migration.
-- +goose StatementBegin
CREATE FUNCTION audit_track(tbl regclass, object_type text, id_column text DEFAULT 'id',
    organization_column text DEFAULT 'organization_id', masked text[] DEFAULT '{}', ignored text[] DEFAULT '{}',
    actor_only boolean DEFAULT false, events text DEFAULT 'INSERT OR UPDATE OR DELETE')
    RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    c text;
    watched text;
BEGIN
    IF events !~ '^(INSERT|UPDATE|DELETE)( OR (INSERT|UPDATE|DELETE))*$' THEN
        RAISE EXCEPTION 'audit_track: events % is not a list of INSERT, UPDATE and DELETE', events;
    END IF;
    FOREACH c IN ARRAY array_remove(ARRAY[id_column, organization_column], '') || masked || ignored LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = tbl AND attname = c AND attnum > 0
                AND NOT attisdropped) THEN
            RAISE EXCEPTION 'audit_track: % has no column %', tbl, c;
        END IF;
    END LOOP;
    -- An update that sets only ignored columns (and modified_at) must not even run the
    -- trigger: such updates are the data plane's, on its hottest paths (every license
    -- validation). UPDATE OF names the other columns, as they are now: a column added to
    -- the table later needs audit_track again (a test checks).
    IF ignored <> '{}' THEN
        SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO watched FROM pg_attribute
        WHERE attrelid = tbl AND attnum > 0 AND NOT attisdropped AND attname <> ALL (ignored || '{modified_at}'::text[]);
        events := replace(events, 'UPDATE', 'UPDATE OF ' || watched);
    END IF;
    EXECUTE format('DROP TRIGGER IF EXISTS audit ON %s', tbl);
    EXECUTE format('CREATE TRIGGER audit AFTER %s ON %s FOR EACH ROW %s EXECUTE FUNCTION audit_change(%L, %L, %L, %L, %L)',
        events, tbl, CASE WHEN actor_only THEN $w$WHEN (current_setting('till.audit', true) <> '')$w$ ELSE '' END,
        object_type, id_column, organization_column, masked, ignored);
END
$$;
-- +goose StatementEnd

-- audit_untrack stops auditing a table; its past rows stay in the log.
-- +goose StatementBegin
CREATE FUNCTION audit_untrack(tbl regclass) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('DROP TRIGGER IF EXISTS audit ON %s', tbl);
END
$$;
-- +goose StatementEnd

-- Organizations and the people and credentials that act for them.
SELECT audit_track('organizations', 'organization', organization_column => 'id');
SELECT audit_track('user_organizations', 'organization_member', id_column => 'user_id');
SELECT audit_track('users', 'user', organization_column => '');
SELECT audit_track('user_sessions', 'user_session', organization_column => '', masked => '{token}',
    ignored => '{last_seen_at}');
SELECT audit_track('organization_invitations', 'organization_invitation', masked => '{token}');
SELECT audit_track('organization_access_tokens', 'organization_access_token', masked => '{token}',
    ignored => '{last_used_at}');
SELECT audit_track('personal_access_tokens', 'personal_access_token', organization_column => '',
    masked => '{token}', ignored => '{last_used_at}');
SELECT audit_track('oauth2_clients', 'oauth2_client',
    masked => '{client_secret_hash,registration_access_token_hash}');
SELECT audit_track('oauth2_grants', 'oauth2_grant');
SELECT audit_track('webhook_endpoints', 'webhook_endpoint', masked => '{secret}',
    ignored => '{consecutive_failures}');
SELECT audit_track('license_signing_keys', 'license_signing_key', masked => '{sealed_private_key}');
SELECT audit_track('test_clocks', 'test_clock', id_column => 'organization_id');

-- The catalog.
SELECT audit_track('products', 'product');
SELECT audit_track('product_prices', 'product_price');
SELECT audit_track('product_benefits', 'product_benefit', id_column => 'product_id');
SELECT audit_track('product_medias', 'product_media', id_column => 'product_id');
SELECT audit_track('product_custom_fields', 'product_custom_field', id_column => 'product_id');
SELECT audit_track('custom_fields', 'custom_field');
SELECT audit_track('benefits', 'benefit');
SELECT audit_track('discounts', 'discount');
SELECT audit_track('discount_products', 'discount_product', id_column => 'discount_id');
SELECT audit_track('checkout_links', 'checkout_link', masked => '{client_secret}');
SELECT audit_track('checkout_link_products', 'checkout_link_product', id_column => 'checkout_link_id');
SELECT audit_track('meters', 'meter');
SELECT audit_track('files', 'file');

-- Customers and what they bought.
SELECT audit_track('customers', 'customer', ignored => '{first_user_event_at}');
SELECT audit_track('members', 'member');
SELECT audit_track('customer_seats', 'customer_seat', masked => '{invitation_token}');
SELECT audit_track('customer_sessions', 'customer_session', masked => '{token}');
SELECT audit_track('member_sessions', 'member_session', masked => '{token}');
SELECT audit_track('payment_methods', 'payment_method');
SELECT audit_track('checkouts', 'checkout', masked => '{client_secret,payment_processor_metadata}');
SELECT audit_track('subscriptions', 'subscription');
SELECT audit_track('pending_subscription_updates', 'pending_subscription_update');
SELECT audit_track('orders', 'order', ignored => '{payment_lock_acquired_at}');
SELECT audit_track('payments', 'payment');
SELECT audit_track('refunds', 'refund');
SELECT audit_track('disputes', 'dispute');
SELECT audit_track('customer_balance_transactions', 'customer_balance_transaction');
SELECT audit_track('benefit_grants', 'benefit_grant');
SELECT audit_track('license_keys', 'license_key', masked => '{key}',
    ignored => '{validations,last_validated_at,usage}');
SELECT audit_track('license_key_activations', 'license_key_activation');

-- Data-plane tables record only what a caller changes in them: retrying or cancelling a
-- job, redelivering a webhook event. Their own churn (every claim, attempt and delivery)
-- is not worth a row.
SELECT audit_track('jobs', 'job', masked => '{args}', actor_only => true, events => 'UPDATE');
SELECT audit_track('webhook_events', 'webhook_event', masked => '{payload}', actor_only => true,
    events => 'UPDATE');

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE
    t regclass;
BEGIN
    FOR t IN SELECT tgrelid::regclass FROM pg_trigger WHERE tgname = 'audit' AND NOT tgisinternal LOOP
        PERFORM audit_untrack(t);
    END LOOP;
END
$$;
-- +goose StatementEnd
DROP FUNCTION audit_untrack(regclass);
DROP FUNCTION audit_track(regclass, text, text, text, text[], text[], boolean, text);
DROP FUNCTION audit_change();
DROP FUNCTION audit_write(uuid, text, uuid, text, jsonb);
DROP TABLE audit_log;
