-- +goose Up
-- oidc_signing_keys are the RSA keys OpenID Connect id tokens are signed with, one series per
-- installation. The public half (PKIX DER) is published at /.well-known/jwks.json; the
-- private half (PKCS #8 DER) is stored sealed with a key derived from the server secret, so a
-- database dump alone cannot mint id tokens. One key is current (retired_at IS NULL): it signs
-- until it is older than the rotation period, then the next signer retires it and creates a
-- successor. valid_until is set at retirement to the latest expiry of any id token the key
-- signed plus a margin for clock skew; until then the key stays published so tokens issued
-- before the rotation keep verifying.
CREATE TABLE oidc_signing_keys (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    -- kid is the RFC 7638 thumbprint of the public key, the "kid" of id tokens and JWKs.
    kid text NOT NULL UNIQUE,
    public_key bytea NOT NULL,
    sealed_private_key bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    retired_at timestamptz,
    valid_until timestamptz,
    CONSTRAINT oidc_signing_keys_retirement CHECK (
        (retired_at IS NULL AND valid_until IS NULL)
        OR (retired_at IS NOT NULL AND valid_until >= retired_at))
);
-- At most one current key; processes creating the first key (or a successor) at once race on
-- this index and the losers read the winner's key.
CREATE UNIQUE INDEX oidc_signing_keys_current_key ON oidc_signing_keys ((retired_at IS NULL))
    WHERE retired_at IS NULL;

-- +goose Down
DROP TABLE oidc_signing_keys;
