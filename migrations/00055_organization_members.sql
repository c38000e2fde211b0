-- +goose Up
-- Organization members and roles. A user's role in an organization decides what the user's
-- credentials may do there; upstream's fourth role, finance, reads the money and handles
-- sales without managing the catalog or the people.
ALTER TABLE user_organizations DROP CONSTRAINT user_organizations_role_check;
ALTER TABLE user_organizations ADD CONSTRAINT user_organizations_role_check
    CHECK (role IN ('owner', 'admin', 'member', 'finance'));

-- An organization that has an owner keeps one: demoting, removing or deleting the
-- membership of its last live owner is refused. The check locks the organization's row
-- (FOR NO KEY UPDATE, which the foreign-key checks of other writes do not wait for), so two
-- owners demoting each other at once are taken in turn and the second sees the first's
-- change (each statement of the function reads a fresh snapshot). When the organization or
-- the user is itself being deleted, its memberships go with it.
-- +goose StatementBegin
CREATE FUNCTION user_organizations_keep_owner() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.role <> 'owner' OR OLD.deleted_at IS NOT NULL
       OR (TG_OP = 'UPDATE' AND NEW.role = 'owner' AND NEW.deleted_at IS NULL
           AND NEW.organization_id = OLD.organization_id) THEN
        RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
    END IF;
    PERFORM 1 FROM organizations WHERE id = OLD.organization_id AND deleted_at IS NULL FOR NO KEY UPDATE;
    IF FOUND AND EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id)
       AND NOT EXISTS (SELECT 1 FROM user_organizations
           WHERE organization_id = OLD.organization_id AND role = 'owner' AND deleted_at IS NULL
             AND user_id <> OLD.user_id) THEN
        RAISE EXCEPTION 'organization % would be left without an owner', OLD.organization_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'user_organizations_last_owner';
    END IF;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER user_organizations_keep_owner BEFORE UPDATE OR DELETE ON user_organizations
    FOR EACH ROW EXECUTE FUNCTION user_organizations_keep_owner();

-- A signed-in user's browser session carries the user's memberships as a personal token
-- does, so a membership change empties the session caches as well as the token caches
-- (00026): a removed member's sessions stop at once too.
CREATE TRIGGER user_organizations_sessions_changed AFTER INSERT OR UPDATE OR DELETE ON user_organizations
    FOR EACH STATEMENT EXECUTE FUNCTION till_notify('till_sessions');

-- An invitation to join an organization with a role, sent by mail to an address that may
-- not belong to any user yet. Its token is the link's secret, stored only as an HMAC like
-- every credential. An organization holds at most one pending invitation per address
-- (compared without case): inviting again refreshes it, with a new token and expiry, so the
-- older link stops working. Accepted and cancelled invitations stay as a record.
CREATE TABLE organization_invitations (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    email text NOT NULL,
    role text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'finance')),
    token char(64) NOT NULL,
    invited_by uuid REFERENCES users (id) ON DELETE SET NULL,
    expires_at timestamptz NOT NULL,
    accepted_at timestamptz,
    accepted_by uuid REFERENCES users (id) ON DELETE SET NULL,
    cancelled_at timestamptz,
    CONSTRAINT organization_invitations_settled CHECK (accepted_at IS NULL OR cancelled_at IS NULL)
);
CREATE UNIQUE INDEX organization_invitations_token_key ON organization_invitations (token);
CREATE UNIQUE INDEX organization_invitations_pending_key ON organization_invitations (organization_id, lower(email))
    WHERE accepted_at IS NULL AND cancelled_at IS NULL;

-- +goose Down
DROP TABLE organization_invitations;
DROP TRIGGER user_organizations_sessions_changed ON user_organizations;
DROP TRIGGER user_organizations_keep_owner ON user_organizations;
DROP FUNCTION user_organizations_keep_owner();
UPDATE user_organizations SET role = 'member' WHERE role = 'finance';
ALTER TABLE user_organizations DROP CONSTRAINT user_organizations_role_check;
ALTER TABLE user_organizations ADD CONSTRAINT user_organizations_role_check
    CHECK (role IN ('owner', 'admin', 'member'));
