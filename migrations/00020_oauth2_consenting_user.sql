-- +goose Up
-- consented_by is the user who gave the consent a code (and every token pair issued from it,
-- refreshes included) rests on. An organization subject's rows carry no user_id, yet the
-- consent was a user's act: the token endpoint checks on every exchange and refresh that this
-- user is still an owner or admin of the organization, so a user who left it (or was demoted)
-- cannot go on minting tokens for it. Rows from before this column have none and are refused
-- for organization subjects: their holder must ask for consent again.
ALTER TABLE oauth2_authorization_codes ADD COLUMN consented_by uuid REFERENCES users (id) ON DELETE CASCADE;
ALTER TABLE oauth2_tokens ADD COLUMN consented_by uuid REFERENCES users (id) ON DELETE CASCADE;
CREATE INDEX oauth2_authorization_codes_consented_by_idx ON oauth2_authorization_codes (consented_by)
    WHERE consented_by IS NOT NULL;
CREATE INDEX oauth2_tokens_consented_by_idx ON oauth2_tokens (consented_by) WHERE consented_by IS NOT NULL;

-- +goose Down
ALTER TABLE oauth2_tokens DROP COLUMN consented_by;
ALTER TABLE oauth2_authorization_codes DROP COLUMN consented_by;
