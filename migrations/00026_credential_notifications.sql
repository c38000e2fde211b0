-- +goose Up
-- Serving processes keep organization and personal tokens' principals for a few seconds
-- (TILL_TOKEN_CACHE_TTL). A change that could alter what such a lookup answers notifies
-- till_credentials when it commits, and every process then forgets the tokens it holds, so
-- a revoked token or a deleted organization stops working at once rather than at the end
-- of the cache's time. As for sessions (00024), the triggers are per statement with an
-- empty payload, and nothing that runs per request writes these tables. The channel name
-- is storage's (storage.CredentialsChannel).
CREATE TRIGGER organization_access_tokens_changed AFTER UPDATE OR DELETE ON organization_access_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION till_notify('till_credentials');
CREATE TRIGGER personal_access_tokens_changed AFTER UPDATE OR DELETE ON personal_access_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION till_notify('till_credentials');
-- A personal token's principal lists its user's organizations.
CREATE TRIGGER user_organizations_changed AFTER INSERT OR UPDATE OR DELETE ON user_organizations
    FOR EACH STATEMENT EXECUTE FUNCTION till_notify('till_credentials');
CREATE TRIGGER users_deleted AFTER UPDATE OF deleted_at OR DELETE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION till_notify('till_credentials');
CREATE TRIGGER organizations_deleted_credentials AFTER UPDATE OF deleted_at OR DELETE ON organizations
    FOR EACH STATEMENT EXECUTE FUNCTION till_notify('till_credentials');

-- +goose Down
DROP TRIGGER organizations_deleted_credentials ON organizations;
DROP TRIGGER users_deleted ON users;
DROP TRIGGER user_organizations_changed ON user_organizations;
DROP TRIGGER personal_access_tokens_changed ON personal_access_tokens;
DROP TRIGGER organization_access_tokens_changed ON organization_access_tokens;
