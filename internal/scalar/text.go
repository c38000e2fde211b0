package scalar

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
)

// Every String argument, variable and input field of the schema is decoded here, so text
// that PostgreSQL cannot store (U+0000, bytes that are not UTF-8) is refused as the
// client's mistake before any use case runs, instead of failing in SQL as a 500.

// ErrInvalidText is the refusal of a string PostgreSQL text cannot hold. Its message is
// Polar's, which /v1 sends for the same input.
var ErrInvalidText = errors.New("This value contains invalid characters")

// ErrNonFinite is the refusal of a number no JSON document or float column can hold
// (1e400 overflows to infinity).
var ErrNonFinite = errors.New("Input should be a finite number")

// MarshalString writes a String, as gqlgen's built-in scalar does.
func MarshalString(s string) graphql.Marshaler {
	return graphql.MarshalString(s)
}

// UnmarshalString accepts a string PostgreSQL text can store; other values go to gqlgen's
// built-in scalar (variables are type-checked before they get here).
func UnmarshalString(v any) (string, error) {
	s, isString := v.(string)
	if !isString {
		return graphql.UnmarshalString(v)
	}
	if !Storable(s) {
		return "", ErrInvalidText
	}
	return s, nil
}

// Storable reports whether PostgreSQL text can hold s: no U+0000 and nothing but UTF-8.
// Every decoder of outside text, GraphQL's and /v1's, asks it.
func Storable(s string) bool {
	return strings.IndexByte(s, 0) < 0 && utf8.ValidString(s)
}

// checkValue walks a decoded JSON value and refuses what cannot be stored: text (keys
// included) PostgreSQL refuses, and numbers beyond a float64. path names the offending
// value in the error; keys are visited in order so the first one reported is stable.
func checkValue(v any, path string) error {
	switch v := v.(type) {
	case string:
		if !Storable(v) {
			return at(path, ErrInvalidText)
		}
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return at(path, ErrNonFinite)
		}
	case json.Number:
		if f, err := strconv.ParseFloat(string(v), 64); err != nil || math.IsInf(f, 0) {
			return at(path, ErrNonFinite)
		}
	case []any:
		for i, e := range v {
			if err := checkValue(e, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			e := v[k]
			if !Storable(k) {
				if path == "" {
					return fmt.Errorf("a key: %w", ErrInvalidText)
				}
				return fmt.Errorf("a key of %s: %w", strings.TrimPrefix(path, "."), ErrInvalidText)
			}
			if err := checkValue(e, path+"."+k); err != nil {
				return err
			}
		}
	}
	return nil
}

// at prefixes err with the path of the value it is about, when that is not the whole value.
func at(path string, err error) error {
	if path == "" {
		return err
	}
	return fmt.Errorf("%s: %w", strings.TrimPrefix(path, "."), err)
}
