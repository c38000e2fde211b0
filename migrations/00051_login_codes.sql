-- +goose Up
-- A login code is a one-time way to sign in by email: a short code typed by hand and a
-- magic link carrying a long random token, mailed together and valid together for a few
-- minutes. Both are stored only as HMAC-SHA256 keyed by the server secret; the code's HMAC
-- also covers the email, so a code is worth nothing for another address. email_key is the
-- lowercase email: an address has at most one pending code (used_at IS NULL), which a new
-- request replaces, so attempts counts the wrong guesses against the code in force. A code
-- is used once (used_at), dies after a few wrong guesses (attempts) or at expires_at.
-- return_to is the same-origin path the magic link leads back to.
CREATE TABLE login_codes (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    email text NOT NULL,
    email_key text NOT NULL,
    code_hash char(64) NOT NULL,
    link_hash char(64) NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz,
    attempts integer NOT NULL DEFAULT 0,
    return_to text NOT NULL DEFAULT '/'
);
CREATE UNIQUE INDEX login_codes_pending_key ON login_codes (email_key) WHERE used_at IS NULL;
CREATE UNIQUE INDEX login_codes_link_hash_key ON login_codes (link_hash);
CREATE INDEX login_codes_email_key_idx ON login_codes (email_key, created_at);
CREATE INDEX login_codes_expires_at_idx ON login_codes (expires_at);

-- +goose Down
DROP TABLE login_codes;
