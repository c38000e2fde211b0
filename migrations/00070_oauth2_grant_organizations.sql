-- +goose Up
-- A remembered consent of a user subject keeps the organizations its tokens were narrowed to
-- (empty: all of the user's organizations), so an authorization that skips the consent screen
-- never issues a wider token than the one the user consented to. A row without that record
-- cannot say what it was narrowed to; such rows are forgotten, which costs their users one
-- more consent screen instead of risking a wider token.
ALTER TABLE oauth2_grants ADD COLUMN organization_ids uuid[] NOT NULL DEFAULT '{}';
DELETE FROM oauth2_grants WHERE user_id IS NOT NULL;

-- +goose Down
ALTER TABLE oauth2_grants DROP COLUMN organization_ids;
