-- +goose Up
-- How many charges of a checkout ended without taking money for certain (the card's issuer
-- asked the holder to authenticate): each attempt after one such end charges under a key
-- of its own, so another card is not answered with the first attempt's outcome, while a
-- retry after an unknown outcome (the processor unreachable) replays the same key and can
-- never charge twice.
ALTER TABLE checkouts ADD COLUMN charge_attempts integer NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE checkouts DROP COLUMN charge_attempts;
