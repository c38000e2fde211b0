package storage

import (
	"bytes"
	"encoding/json"
	"errors"
)

// The carried records are JSON that PostgreSQL wrote (to_json, json_agg), so decoding them
// needs no validation beyond not reading past the input: these helpers only find where keys
// and values start and end, and leave each value to the column's own decoding. encoding/json
// validates its whole input at every call, which made decoding a record cost as much as the
// statement it saves.

// errMalformed is JSON that PostgreSQL would not have written.
var errMalformed = errors.New("storage: malformed prefetched JSON")

// eachField calls f with the key and the raw value of each member of the JSON object raw.
func eachField(raw []byte, f func(key, val []byte) error) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return errMalformed
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return nil
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return errMalformed
		}
		end, err := stringEnd(raw, i)
		if err != nil {
			return err
		}
		key, err := unquote(raw[i:end])
		if err != nil {
			return err
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return errMalformed
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

// eachElement calls f with each raw element of the JSON array raw.
func eachElement(raw []byte, f func(val []byte) error) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return errMalformed
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
	return -1, errMalformed
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
	return 0, errMalformed
}

// valueEnd is the index after the value that starts at i: a string, an object or array
// (strings inside skipped whole), or a literal (number, true, false, null).
func valueEnd(raw []byte, i int) (int, error) {
	if i >= len(raw) {
		return 0, errMalformed
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
		return 0, errMalformed
	}
	j := i
	for j < len(raw) && bytes.IndexByte([]byte(",}] \t\n\r"), raw[j]) < 0 {
		j++
	}
	if j == i {
		return 0, errMalformed
	}
	return j, nil
}

// unquote is the text of a JSON string (quotes included in raw): the bytes between the
// quotes when nothing is escaped, as column names and most values are, else decoded.
func unquote(raw []byte) ([]byte, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, errMalformed
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
