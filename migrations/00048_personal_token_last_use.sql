-- +goose Up
-- A personal token records when it was last used, at most once a minute, from the request it
-- authenticates. That write changes nothing a token lookup answers, so it must not tell
-- every serving process to forget its tokens (00026): the trigger now fires only on the
-- columns a lookup reads, and on revocation.
DROP TRIGGER personal_access_tokens_changed ON personal_access_tokens;
CREATE TRIGGER personal_access_tokens_changed
    AFTER UPDATE OF deleted_at, expires_at, scope, token, user_id OR DELETE ON personal_access_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION till_notify('till_credentials');

-- +goose Down
DROP TRIGGER personal_access_tokens_changed ON personal_access_tokens;
CREATE TRIGGER personal_access_tokens_changed AFTER UPDATE OR DELETE ON personal_access_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION till_notify('till_credentials');
