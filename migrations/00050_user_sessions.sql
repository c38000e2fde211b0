-- +goose Up
-- A user session is what signing in to Till in a browser yields: its token travels in an
-- HttpOnly cookie and, like every other token, is stored only as the lowercase hex
-- HMAC-SHA256 of the token keyed by the server secret. A session lives a fixed time from
-- its creation (expires_at) unless revoked first (deleted_at: signing out, or revoking it
-- from another session). ip and user_agent describe the browser that signed in, for the
-- owner's list of sessions; last_seen_at is refreshed at most once a minute by the requests
-- the session authenticates.
CREATE TABLE user_sessions (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token char(64) NOT NULL,
    expires_at timestamptz NOT NULL,
    last_seen_at timestamptz,
    ip text,
    user_agent text NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX user_sessions_token_key ON user_sessions (token);
CREATE INDEX user_sessions_user_id_idx ON user_sessions (user_id) WHERE deleted_at IS NULL;
CREATE INDEX user_sessions_expires_at_idx ON user_sessions (expires_at);

-- Serving processes keep a session's principal with the tokens' (00026), so what can change
-- a session lookup's answer tells them to forget: its revocation, expiry, token or owner.
-- Recording a use (last_seen_at) changes nothing a lookup answers and notifies nobody.
CREATE TRIGGER user_sessions_changed
    AFTER UPDATE OF deleted_at, expires_at, token, user_id OR DELETE ON user_sessions
    FOR EACH STATEMENT EXECUTE FUNCTION till_notify('till_credentials');

-- +goose Down
DROP TABLE user_sessions;
