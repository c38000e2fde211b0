package resttest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// The shapes below are what upstream really sends where the published
// document is silent or wrong (contract §1.5, §1.6 and §5).

// domainNames are error names upstream sends under a documented
// ResourceNotFound schema (contract §5 #3, #4).
func domainNames() []string { return []string{"InvoiceDoesNotExist", "ReceiptNotAllocated"} }

// refundNames are the errors of upstream's refund service (server/polar/refund/service.py)
// that the document does not list, by status: RevokeSubscriptionBenefitsProhibited (400),
// RefundDisputedPayment (403), RefundUnknownPayment (404), and RefundError (409), which
// Till answers for a processor refusal that upstream lets through as a server error.
var refundNames = map[int][]string{
	http.StatusBadRequest: {"RevokeSubscriptionBenefitsProhibited"},
	http.StatusForbidden:  {"RefundDisputedPayment"},
	http.StatusNotFound:   {"RefundUnknownPayment"},
	http.StatusConflict:   {"RefundError"},
}

// retryNames are the errors of upstream's payment retry (server/polar/order/service.py)
// that the document does not list: PaymentRetryValidationError, under a 422 documented as
// OrderNotEligibleForRetry only.
var retryNames = map[int][]string{
	http.StatusUnprocessableEntity: {"PaymentRetryValidationError"},
}

// documentsName reports whether the operation documents the error name under status, as
// refunds:create documents RefundedAlready under its 403: such a body is checked against
// the document rather than taken for one of the generic shapes.
func documentsName(op *openapi3.Operation, status int, name string) bool {
	r := op.Responses.Status(status)
	if name == "" || r == nil || r.Value == nil {
		return false
	}
	mt := r.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return false
	}
	p := mt.Schema.Value.Properties["error"]
	return p != nil && p.Value != nil && p.Value.Const == name
}

// useGenericShape reports whether a documented status carries one of the
// bodies the document does not describe: the auth pipeline's answers, the
// size guards, framework 404/405s and domain errors under another name.
func useGenericShape(status int, body []byte) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusLengthRequired,
		http.StatusRequestEntityTooLarge, http.StatusTooManyRequests:
		return true
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
		name := ErrorName(body)
		return name == "" || slices.Contains(domainNames(), name) || slices.Contains(refundNames[status], name)
	case http.StatusUnprocessableEntity:
		return slices.Contains(retryNames[status], ErrorName(body))
	}
	return false
}

// checkUndocumented accepts the statuses every route may answer although the
// document does not list them, in the shape upstream uses for each.
func checkUndocumented(status int, body []byte) error {
	switch status {
	case http.StatusBadRequest:
		return oneOf(body, framework("There was an error parsing the body"), envelope(append([]string{"BadRequest"}, refundNames[status]...)...))
	case http.StatusUnauthorized:
		return oneOf(body, oauth("invalid_token"), envelope("Unauthorized"))
	case http.StatusForbidden:
		return oneOf(body, oauth("insufficient_scope"), envelope(append([]string{"NotPermitted"}, refundNames[status]...)...))
	case http.StatusNotFound:
		return oneOf(body, framework("Not Found"), envelope(append(append([]string{"ResourceNotFound"}, domainNames()...), refundNames[status]...)...))
	case http.StatusConflict:
		return oneOf(body, envelope(refundNames[status]...))
	case http.StatusMethodNotAllowed:
		return oneOf(body, framework("Method Not Allowed"))
	case http.StatusLengthRequired:
		return oneOf(body, envelope("LengthRequired"))
	case http.StatusRequestEntityTooLarge:
		return oneOf(body, envelope("RequestBodyTooLarge"))
	case http.StatusTooManyRequests:
		return nil // the rate limiter's body and headers are not part of the contract
	case http.StatusUnprocessableEntity:
		if isRequestValidation(body) {
			return nil // FastAPI's validation applies to every operation
		}
		return oneOf(body, envelope(retryNames[status]...))
	}
	return fmt.Errorf("status %d is not documented", status)
}

// checkFramework accepts what a path outside the document can answer.
func checkFramework(status int, body []byte) error {
	switch status {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusUnauthorized,
		http.StatusLengthRequired, http.StatusRequestEntityTooLarge, http.StatusTooManyRequests:
		return checkUndocumented(status, body)
	}
	return fmt.Errorf("no documented operation for this path, yet status %d", status)
}

type shape func(map[string]any) bool

// framework is Starlette's {"detail": "..."}.
func framework(detail string) shape {
	return func(m map[string]any) bool { return len(m) == 1 && m["detail"] == detail }
}

// envelope is a PolarError {"error": name, "detail": "..."}.
func envelope(names ...string) shape {
	return func(m map[string]any) bool {
		name, _ := m["error"].(string)
		_, isString := m["detail"].(string)
		return len(m) == 2 && isString && slices.Contains(names, name)
	}
}

// oauth is authlib's {"error": code, "error_description": "..."}.
func oauth(code string) shape {
	return func(m map[string]any) bool {
		_, isString := m["error_description"].(string)
		return len(m) == 2 && isString && m["error"] == code
	}
}

func oneOf(body []byte, shapes ...shape) error {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("body is not a JSON object: %w", err)
	}
	for _, s := range shapes {
		if s(m) {
			return nil
		}
	}
	return errors.New("unexpected error body")
}

// isRequestValidation recognises a 422 from request validation, which Polar
// sends as {"error": ..., "detail": [...]} whatever the operation documents.
func isRequestValidation(body []byte) bool {
	name := ErrorName(body)
	return name == "RequestValidationError" || name == "PolarRequestValidationError"
}

// checkValidationBody validates a 422 against HTTPValidationError (which
// allows the extra "error" key) and requires the keys FastAPI always sends.
func checkValidationBody(doc *openapi3.T, body []byte) error {
	ref := doc.Components.Schemas["HTTPValidationError"]
	if ref == nil || ref.Value == nil {
		return errors.New("contract has no HTTPValidationError")
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return err
	}
	if err := ref.Value.VisitJSON(withoutNullInputs(v), openapi3.EnableJSONSchema2020(), openapi3.MultiErrors()); err != nil {
		return err
	}
	items, _ := v.(map[string]any)["detail"].([]any)
	if len(items) == 0 {
		return errors.New("422 without detail items")
	}
	for i, it := range items {
		m, _ := it.(map[string]any)
		for _, k := range []string{"type", "loc", "msg", "input"} {
			if _, has := m[k]; !has {
				return fmt.Errorf("detail[%d] has no %q", i, k)
			}
		}
		loc, _ := m["loc"].([]any)
		if len(loc) == 0 || !slices.Contains([]any{"body", "query", "path", "header"}, loc[0]) {
			return fmt.Errorf("detail[%d].loc %v does not start with body, query, path or header", i, loc)
		}
	}
	return nil
}

// withoutNullInputs returns a copy of a 422 body without the items' "input": null keys.
// ValidationError.input is an untyped schema, which allows null under JSON Schema 2020-12
// (OpenAPI 3.1), but kin-openapi validates schemas with internal references through its
// OpenAPI 3.0 fallback, where an untyped schema without "nullable" refuses null. FastAPI
// sends null inputs (a missing body, a null field), so the key is checked for presence
// only, by checkValidationBody.
func withoutNullInputs(v any) any {
	m, isObj := v.(map[string]any)
	if !isObj {
		return v
	}
	items, isList := m["detail"].([]any)
	if !isList {
		return v
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		out[k] = e
	}
	copied := make([]any, len(items))
	for i, it := range items {
		im, isItem := it.(map[string]any)
		if input, has := im["input"]; !isItem || !has || input != nil {
			copied[i] = it
			continue
		}
		c := make(map[string]any, len(im))
		for k, e := range im {
			if k != "input" {
				c[k] = e
			}
		}
		copied[i] = c
	}
	out["detail"] = copied
	return out
}

// oauthBody lists the operations whose bodies upstream renders without the
// unset keys (contract §1.4): the every-field check does not apply.
func oauthBody(operationID string) bool {
	switch operationID {
	case "oauth2:request_token", "oauth2:revoke_token", "oauth2:introspect_token", "oauth2:userinfo":
		return true
	}
	return false
}

// allFieldsPresent checks contract §1.4: every property the response schema
// declares is in the body, null when empty, even when it is not "required".
func allFieldsPresent(resp *openapi3.Response, body []byte) error {
	media := resp.Content.Get("application/json")
	if media == nil || media.Schema == nil {
		return nil
	}
	v, err := decode(body)
	if err != nil {
		return err
	}
	var plain any
	_ = json.Unmarshal(body, &plain)
	return walkFields(media.Schema, v, plain, "$")
}

// walkFields follows the value through the schema; for unions it follows
// the first member the value validates against, as a client decoder would.
// v keeps exact numbers for the walk, plain is the same value for kin.
func walkFields(ref *openapi3.SchemaRef, v, plain any, path string) error {
	if ref == nil || ref.Value == nil {
		return nil
	}
	s := ref.Value
	for _, members := range []openapi3.SchemaRefs{s.AnyOf, s.OneOf} {
		for _, m := range members {
			if m.Value != nil && m.Value.VisitJSON(plain, openapi3.EnableJSONSchema2020()) == nil {
				return walkFields(m, v, plain, path)
			}
		}
	}
	for _, m := range s.AllOf {
		if err := walkFields(m, v, plain, path); err != nil {
			return err
		}
	}
	switch v := v.(type) {
	case map[string]any:
		pm, _ := plain.(map[string]any)
		names := make([]string, 0, len(s.Properties))
		for name := range s.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		var missing []string
		for _, name := range names {
			if _, has := v[name]; !has {
				missing = append(missing, name)
				continue
			}
			if err := walkFields(s.Properties[name], v[name], pm[name], path+"."+name); err != nil {
				return err
			}
		}
		if len(missing) > 0 && !partialDict(s) {
			return fmt.Errorf("%s lacks declared fields %s (emit them as null)", path, strings.Join(missing, ", "))
		}
		if extra := s.AdditionalProperties.Schema; extra != nil {
			for k, e := range v {
				if _, declared := s.Properties[k]; !declared {
					if err := walkFields(extra, e, pm[k], path+"."+k); err != nil {
						return err
					}
				}
			}
		}
	case []any:
		pl, _ := plain.([]any)
		for i, e := range v {
			if err := walkFields(s.Items, e, pl[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// partialDict reports the schemas upstream declares as TypedDict(total=False) rather than
// models: a value holds only the keys that were set, so absent keys are not missing fields.
// These are the grant properties of each benefit type (BenefitGrant*Properties,
// server/polar/benefit/strategies/*/properties.py), e.g. {"license_key_id", "display_key"},
// and the organization's customer-portal settings (TypedDicts whose NotRequired keys, such
// as subscription.pause, appear only once set; server/polar/models/organization.py).
func partialDict(s *openapi3.Schema) bool {
	switch s.Title {
	case "OrganizationCustomerPortalSettings", "CustomerPortalUsageSettings",
		"CustomerPortalSubscriptionSettings", "CustomerPortalCustomerSettings":
		return true
	}
	return strings.HasPrefix(s.Title, "BenefitGrant") && strings.HasSuffix(s.Title, "Properties")
}
