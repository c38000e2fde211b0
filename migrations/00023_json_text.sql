-- +goose Up
-- Lists that PostgreSQL writes as JSON (storage/render.go) write each string as the GraphQL
-- executor does. to_json escapes the same characters, except that it writes backspace and
-- form feed as \b and \f and other control characters in lower-case hex, where the executor
-- writes \u0008, \u000C and upper case. till_json_text writes text the executor's way, one
-- character at a time. A statement calls it only for text holding such a character (names
-- and emails do not); being a function rather than a subquery, it adds no subplan that every
-- run of the statement would set up.

-- +goose StatementBegin
CREATE FUNCTION till_json_text(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT '"' || coalesce(string_agg(CASE WHEN c = chr(92) THEN chr(92) || chr(92)
        WHEN c = '"' THEN chr(92) || '"' WHEN c = chr(9) THEN chr(92) || 't'
        WHEN c = chr(10) THEN chr(92) || 'n' WHEN c = chr(13) THEN chr(92) || 'r'
        WHEN ascii(c) < 32 THEN chr(92) || 'u00' || upper(lpad(to_hex(ascii(c)), 2, '0')) ELSE c END, '' ORDER BY n), '') || '"'
    FROM unnest(string_to_array(t, NULL)) WITH ORDINALITY AS x(c, n)
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION till_json_text(text);
