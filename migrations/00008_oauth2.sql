-- +goose Up
-- OAuth 2.0 / OpenID Connect provider: clients, consents, authorization codes and tokens.
-- Every secret (client secret, registration token, code, access and refresh token) is stored
-- only as the lowercase hex HMAC-SHA256 of the value keyed by the server secret, like the
-- tokens in 00001. A subject is a user or an organization (sub_type); organization_ids is
-- the optional down-scope list of a user token (empty means all of the user's organizations).

-- oauth2_clients are registered applications (RFC 7591 dynamic registration).
-- client_id is the public "till_ci_…" identifier that the other tables reference.
-- client_secret_hash is null for public clients (token_endpoint_auth_method 'none').
-- A client belongs to the user who registered it, or to an organization; first-party
-- clients may have neither.
CREATE TABLE oauth2_clients (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    deleted_at timestamptz,
    client_id text NOT NULL,
    client_secret_hash char(64),
    client_secret_expires_at timestamptz,
    registration_access_token_hash char(64),
    client_name text NOT NULL,
    client_uri text,
    logo_uri text,
    tos_uri text,
    policy_uri text,
    redirect_uris text[] NOT NULL,
    scope text NOT NULL,
    token_endpoint_auth_method text NOT NULL DEFAULT 'client_secret_post'
        CHECK (token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post', 'none')),
    grant_types text[] NOT NULL DEFAULT '{authorization_code,refresh_token}'
        CHECK (grant_types <@ '{authorization_code,refresh_token,web}'::text[]),
    response_types text[] NOT NULL DEFAULT '{code}' CHECK (response_types <@ '{code}'::text[]),
    default_sub_type text NOT NULL DEFAULT 'user' CHECK (default_sub_type IN ('user', 'organization')),
    first_party boolean NOT NULL DEFAULT false,
    user_id uuid REFERENCES users (id) ON DELETE CASCADE,
    organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
    CONSTRAINT oauth2_clients_client_id_key UNIQUE (client_id),
    CONSTRAINT oauth2_clients_secret_for_confidential CHECK (
        token_endpoint_auth_method = 'none' OR client_secret_hash IS NOT NULL)
);
CREATE UNIQUE INDEX oauth2_clients_registration_access_token_hash_key ON oauth2_clients (registration_access_token_hash)
    WHERE registration_access_token_hash IS NOT NULL;
CREATE INDEX oauth2_clients_user_id_idx ON oauth2_clients (user_id, created_at DESC) WHERE user_id IS NOT NULL;
CREATE INDEX oauth2_clients_organization_id_idx ON oauth2_clients (organization_id) WHERE organization_id IS NOT NULL;

-- oauth2_grants remember the scopes a subject consented to for a client, so later
-- authorizations within them skip the consent screen.
CREATE TABLE oauth2_grants (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    client_id text NOT NULL REFERENCES oauth2_clients (client_id) ON DELETE CASCADE,
    scope text NOT NULL DEFAULT '',
    user_id uuid REFERENCES users (id) ON DELETE CASCADE,
    organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
    CONSTRAINT oauth2_grants_one_subject CHECK (num_nonnulls(user_id, organization_id) = 1),
    CONSTRAINT oauth2_grants_client_user_key UNIQUE (client_id, user_id),
    CONSTRAINT oauth2_grants_client_organization_key UNIQUE (client_id, organization_id)
);
CREATE INDEX oauth2_grants_user_id_idx ON oauth2_grants (user_id) WHERE user_id IS NOT NULL;
CREATE INDEX oauth2_grants_organization_id_idx ON oauth2_grants (organization_id) WHERE organization_id IS NOT NULL;

-- oauth2_authorization_codes are single-use codes (300 s). Instead of deleting a code on
-- exchange, used_at is set, so a replayed code is recognised and the tokens issued from it
-- (oauth2_tokens.authorization_code_id) can be revoked. Expired rows are purged by a job.
CREATE TABLE oauth2_authorization_codes (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    code char(64) NOT NULL,
    client_id text NOT NULL REFERENCES oauth2_clients (client_id) ON DELETE CASCADE,
    sub_type text NOT NULL CHECK (sub_type IN ('user', 'organization')),
    user_id uuid REFERENCES users (id) ON DELETE CASCADE,
    organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
    organization_ids uuid[] NOT NULL DEFAULT '{}',
    redirect_uri text NOT NULL,
    scope text NOT NULL,
    nonce text,
    code_challenge text,
    code_challenge_method text CHECK (code_challenge_method IN ('plain', 'S256')),
    auth_time timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at timestamptz,
    CONSTRAINT oauth2_authorization_codes_subject CHECK (
        (sub_type = 'user' AND user_id IS NOT NULL AND organization_id IS NULL)
        OR (sub_type = 'organization' AND organization_id IS NOT NULL AND user_id IS NULL)),
    CONSTRAINT oauth2_authorization_codes_challenge_pair CHECK (
        (code_challenge IS NULL) = (code_challenge_method IS NULL))
);
CREATE UNIQUE INDEX oauth2_authorization_codes_code_key ON oauth2_authorization_codes (code);
CREATE INDEX oauth2_authorization_codes_expires_at_idx ON oauth2_authorization_codes (expires_at);
CREATE INDEX oauth2_authorization_codes_client_id_idx ON oauth2_authorization_codes (client_id);
CREATE INDEX oauth2_authorization_codes_user_id_idx ON oauth2_authorization_codes (user_id) WHERE user_id IS NOT NULL;
CREATE INDEX oauth2_authorization_codes_organization_id_idx ON oauth2_authorization_codes (organization_id)
    WHERE organization_id IS NOT NULL;

-- oauth2_tokens pair an access token with its (optional) refresh token. The pair counts as
-- revoked once either revoked timestamp is set; a refresh sets refresh_token_revoked_at on
-- the old row and issues a new row. expires_at is the access token's expiry; token_type is
-- the literal that introspection returns.
CREATE TABLE oauth2_tokens (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    client_id text NOT NULL REFERENCES oauth2_clients (client_id) ON DELETE CASCADE,
    token_type text NOT NULL DEFAULT 'Bearer',
    access_token char(64) NOT NULL,
    refresh_token char(64),
    scope text NOT NULL,
    sub_type text NOT NULL CHECK (sub_type IN ('user', 'organization')),
    user_id uuid REFERENCES users (id) ON DELETE CASCADE,
    organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
    organization_ids uuid[] NOT NULL DEFAULT '{}',
    nonce text,
    issued_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    -- refresh_token_expires_at is null when the refresh token lives until used or revoked.
    refresh_token_expires_at timestamptz,
    access_token_revoked_at timestamptz,
    refresh_token_revoked_at timestamptz,
    authorization_code_id uuid REFERENCES oauth2_authorization_codes (id) ON DELETE SET NULL,
    CONSTRAINT oauth2_tokens_subject CHECK (
        (sub_type = 'user' AND user_id IS NOT NULL AND organization_id IS NULL)
        OR (sub_type = 'organization' AND organization_id IS NOT NULL AND user_id IS NULL)),
    CONSTRAINT oauth2_tokens_lifetime CHECK (issued_at < expires_at)
);
CREATE UNIQUE INDEX oauth2_tokens_access_token_key ON oauth2_tokens (access_token);
CREATE UNIQUE INDEX oauth2_tokens_refresh_token_key ON oauth2_tokens (refresh_token) WHERE refresh_token IS NOT NULL;
CREATE INDEX oauth2_tokens_client_id_idx ON oauth2_tokens (client_id);
CREATE INDEX oauth2_tokens_user_id_idx ON oauth2_tokens (user_id) WHERE user_id IS NOT NULL;
CREATE INDEX oauth2_tokens_organization_id_idx ON oauth2_tokens (organization_id) WHERE organization_id IS NOT NULL;
CREATE INDEX oauth2_tokens_authorization_code_id_idx ON oauth2_tokens (authorization_code_id)
    WHERE authorization_code_id IS NOT NULL;
CREATE INDEX oauth2_tokens_expires_at_idx ON oauth2_tokens (expires_at);

-- +goose Down
DROP TABLE oauth2_tokens, oauth2_authorization_codes, oauth2_grants, oauth2_clients;
