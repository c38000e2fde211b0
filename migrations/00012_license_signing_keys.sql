-- +goose Up
-- license_signing_keys are the Ed25519 keys an organization's offline license certificates
-- are signed with. The public half is published as a JWK Set; the private half is stored
-- sealed with a key derived from the server secret, so a database dump alone cannot sign.
-- An organization signs with its one active key (retired_at IS NULL). Rotation retires it and
-- sets valid_until to the latest expiry any certificate it signed can have (retired_at plus
-- the longest certificate validity): until then the key stays published so certificates
-- issued before the rotation keep verifying, after that it is dropped from the set.
CREATE TABLE license_signing_keys (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    -- kid is the RFC 7638 thumbprint of the public key, the "kid" of certificates and JWKs.
    kid text NOT NULL UNIQUE,
    public_key bytea NOT NULL CHECK (octet_length(public_key) = 32),
    sealed_private_key bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    retired_at timestamptz,
    valid_until timestamptz,
    CONSTRAINT license_signing_keys_retirement CHECK (
        (retired_at IS NULL AND valid_until IS NULL)
        OR (retired_at IS NOT NULL AND valid_until >= retired_at))
);
CREATE INDEX license_signing_keys_organization_id_idx ON license_signing_keys (organization_id);
-- At most one active key per organization; concurrent first signers race on this index and
-- the loser reads the winner's key.
CREATE UNIQUE INDEX license_signing_keys_active_key ON license_signing_keys (organization_id)
    WHERE retired_at IS NULL;

-- +goose Down
DROP TABLE license_signing_keys;
