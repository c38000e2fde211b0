// Package rawjson finds the members and elements of JSON that Till's own code wrote
// (PostgreSQL's to_json, the GraphQL executor's output) without validating it:
// encoding/json validates its whole input at every call, which made decoding a carried
// record cost as much as the statement it saves, and made /v1 pay for its response twice.
// The functions only find where keys and values start and end, never read past the input,
// and report ErrMalformed for input such writers do not produce; each value is left to the
// caller's own decoding.
package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ErrMalformed is JSON that the writers this package reads would not have written.
var ErrMalformed = errors.New("rawjson: malformed JSON")

// Fields calls f with the key and the raw value of each member of the JSON object raw.
func Fields(raw []byte, f func(key, val []byte) error) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return ErrMalformed
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return nil
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return ErrMalformed
		}
		end, err := stringEnd(raw, i)
		if err != nil {
			return err
		}
		key, err := Unquote(raw[i:end])
		if err != nil {
			return err
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return ErrMalformed
		}
		i = skipSpace(raw, i+1)
		if end, err = valueEnd(raw, i); err != nil {
			return err
		}
		if err := f(key, raw[i:end]); err != nil {
			return err
		}
		if i, err = nextMember(raw, end, '}'); i < 0 || err != nil {
			return err
		}
	}
}

// Elements calls f with each raw element of the JSON array raw.
func Elements(raw []byte, f func(val []byte) error) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return ErrMalformed
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return nil
	}
	for {
		end, err := valueEnd(raw, i)
		if err != nil {
			return err
		}
		if err := f(raw[i:end]); err != nil {
			return err
		}
		if i, err = nextMember(raw, end, ']'); i < 0 || err != nil {
			return err
		}
	}
}

// nextMember steps over the comma after a member that ends at i, to the start of the next
// one; -1 when the container closes there.
func nextMember(raw []byte, i int, closing byte) (int, error) {
	i = skipSpace(raw, i)
	switch {
	case i < len(raw) && raw[i] == ',':
		return skipSpace(raw, i+1), nil
	case i < len(raw) && raw[i] == closing:
		return -1, nil
	}
	return -1, ErrMalformed
}

// skipSpace is the index of the first byte from i that is not JSON whitespace.
func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index after the closing quote of the string that opens at i.
func stringEnd(raw []byte, i int) (int, error) {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, ErrMalformed
}

// valueEnd is the index after the value that starts at i: a string, an object or array
// (strings inside skipped whole), or a literal (number, true, false, null).
func valueEnd(raw []byte, i int) (int, error) {
	if i >= len(raw) {
		return 0, ErrMalformed
	}
	switch raw[i] {
	case '"':
		return stringEnd(raw, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(raw); j++ {
			switch raw[j] {
			case '"':
				end, err := stringEnd(raw, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, ErrMalformed
	}
	j := i
	for j < len(raw) && bytes.IndexByte([]byte(",}] \t\n\r"), raw[j]) < 0 {
		j++
	}
	if j == i {
		return 0, ErrMalformed
	}
	return j, nil
}

// Unquote is the text of a JSON string (quotes included in raw): the bytes between the
// quotes when nothing is escaped, as column names and most values are, else decoded.
func Unquote(raw []byte) ([]byte, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, ErrMalformed
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// Member is the raw value of the member name of the JSON object raw; found is false when
// the object has no such member.
func Member(raw []byte, name string) (value []byte, found bool, err error) {
	err = Fields(raw, func(key, val []byte) error {
		if !found && string(key) == name {
			value, found = val, true
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return value, found, nil
}
