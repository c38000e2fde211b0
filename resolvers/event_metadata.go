package resolvers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"till/graph/model"
	"till/storage"
)

// Event metadata differs from other metadata (contract §4.5): no limit on the number or
// length of keys, values of 1–500 characters, numbers or booleans, and two structured keys.
const eventMetadataMaxValueLength = 500

// eventMetadataObjects are the structured keys, with the fields each requires and the ones
// it also allows.
var eventMetadataObjects = map[string]struct{ required, optional []string }{
	"_cost": {required: []string{"amount", "currency"}},
	"_llm": {required: []string{"vendor", "model", "input_tokens", "output_tokens", "total_tokens"},
		optional: []string{"prompt", "response", "cached_input_tokens"}},
}

// checkEventMetadata checks event metadata given through GraphQL; /v1 bodies are checked by
// their schema before they get here.
func checkEventMetadata(m map[string]any, loc []any) []FieldError {
	var errs []FieldError
	at := func(path ...any) []any { return append(append([]any{}, loc...), path...) }
	for k, v := range m {
		if shape, structured := eventMetadataObjects[k]; structured {
			obj, isObj := v.(map[string]any)
			if !isObj {
				errs = append(errs, FieldError{Type: "model_type", Loc: at(k), Input: v,
					Msg: "Input should be an object"})
				continue
			}
			for _, f := range shape.required {
				if _, set := obj[f]; !set {
					errs = append(errs, FieldError{Type: "missing", Loc: at(k, f), Input: v, Msg: "Field required"})
				}
			}
			if k == "_cost" {
				if c, _ := obj["currency"].(string); obj["currency"] != nil && c != "usd" {
					errs = append(errs, FieldError{Type: "string_pattern_mismatch", Loc: at(k, "currency"), Input: obj["currency"],
						Msg: "String should match pattern 'usd'", Ctx: map[string]any{"pattern": "usd"}})
				}
				if amount, set := obj["amount"]; set {
					errs = append(errs, checkCostAmount(amount, at(k, "amount"))...)
				}
			}
			continue
		}
		switch x := v.(type) {
		case string:
			if n := utf8.RuneCountInString(x); n < 1 || n > eventMetadataMaxValueLength {
				errs = append(errs, FieldError{Type: "string_too_long", Loc: at(k), Input: x,
					Msg: "Metadata strings must be 1 to 500 characters long."})
			}
		case bool, float64, int, int64, json.Number, *big.Int:
		default:
			errs = append(errs, FieldError{Type: "value_error", Loc: at(k), Input: v,
				Msg: "Value error, Metadata values are strings, numbers or booleans."})
		}
	}
	return errs
}

// eventIngestOf converts a GraphQL event; metadata keeps integers exact.
func eventIngestOf(in *model.UsageEventInput, i int) (EventIngest, error) {
	e := EventIngest{Name: in.Name, OrganizationID: in.OrganizationID, ExternalID: in.ExternalID,
		ParentID: in.ParentID, CustomerID: in.CustomerID, MemberID: in.MemberID,
		ExternalCustomerID: in.ExternalCustomerID, ExternalMemberID: in.ExternalMemberID}
	if in.Timestamp != nil {
		t := *in.Timestamp
		e.Timestamp = &t
	}
	if len(in.Metadata) > 0 {
		m, err := jsonObject(in.Metadata)
		if err != nil {
			return e, Invalid("dict_type", "Input should be a valid dictionary", string(in.Metadata), "input", "events", i, "metadata")
		}
		e.Metadata = m
	}
	return e, nil
}

func jsonObject(raw storage.RawJSON) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// costAmountDigits and costAmountPlaces bound _cost.amount as /v1's CostMetadata does (a
// Decimal of at most 17 digits and 12 decimal places): metrics sum the amounts, and an
// amount past these bounds (1e-400, 1e308) is no cost anyone incurred.
const costAmountDigits, costAmountPlaces = 17, 12

// decimalText is a number as JSON or a decimal string writes it.
var decimalText = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,6})?$`)

// checkCostAmount checks _cost.amount given through GraphQL as pydantic checks /v1's
// Decimal: a number or a decimal string, its digits and decimal places counted once
// normalised (trailing zeros dropped, an exponent applied).
func checkCostAmount(v any, loc []any) []FieldError {
	var text string
	switch x := v.(type) {
	case json.Number:
		text = string(x)
	case string:
		text = strings.TrimSpace(x)
	case float64:
		text = strconv.FormatFloat(x, 'g', -1, 64)
	case int:
		text = strconv.Itoa(x)
	case int64:
		text = strconv.FormatInt(x, 10)
	default:
		return []FieldError{{Type: "decimal_type", Loc: loc, Input: v,
			Msg: "Decimal input should be an integer, float, string or Decimal object"}}
	}
	m := decimalText.FindStringSubmatch(text)
	if m == nil {
		return []FieldError{{Type: "decimal_parsing", Loc: loc, Input: v, Msg: "Input should be a valid decimal"}}
	}
	whole, frac, _ := strings.Cut(m[1], ".")
	exp := 0
	if m[2] != "" {
		exp, _ = strconv.Atoi(m[2][1:])
	}
	significant := strings.TrimRight(strings.TrimLeft(whole+frac, "0"), "0")
	// The normalised exponent: where the last significant digit stands.
	last := len(whole) - exp
	if significant != "" {
		last = strings.LastIndexFunc(whole+frac, func(r rune) bool { return r != '0' }) + 1 - len(whole) - exp
	}
	digits, places := len(significant), 0
	if last > 0 {
		digits, places = max(digits, last), last
	} else {
		digits += -last
	}
	if significant == "" {
		digits, places = 0, 0
	}
	switch {
	case digits > costAmountDigits:
		return []FieldError{{Type: "decimal_max_digits", Loc: loc, Input: v,
			Msg: fmt.Sprintf("Decimal input should have no more than %d digits in total", costAmountDigits),
			Ctx: map[string]any{"max_digits": costAmountDigits}}}
	case places > costAmountPlaces:
		return []FieldError{{Type: "decimal_max_places", Loc: loc, Input: v,
			Msg: fmt.Sprintf("Decimal input should have no more than %d decimal places", costAmountPlaces),
			Ctx: map[string]any{"decimal_places": costAmountPlaces}}}
	}
	return nil
}
