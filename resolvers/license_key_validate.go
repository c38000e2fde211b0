package resolvers

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/google/uuid"

	"till/graph/model"
	"till/storage"
)

// The causes of refused activations that are not validation codes: /v1 names them in its
// errors, GraphQL in extensions.reason.
const (
	codeActivationsDisabled = "activations_not_supported"
	codeActivationLimit     = "activation_limit_reached"
)

// validateLicenseKey validates a key for GraphQL, handing the validated key and its customer
// to the loaders so rendering them costs no query.
func (r *Resolver) validateLicenseKey(ctx context.Context, in model.LicenseKeyValidateInput, orgs []uuid.UUID) (*model.LicenseKeyValidation, error) {
	v, customer, err := r.checkLicenseKey(ctx, in, orgs)
	if err == nil && v.LicenseKey != nil {
		loaders(ctx).Customer.prime(ctx, customer.ID, customer)
		loaders(ctx).LicenseKey.prime(ctx, v.LicenseKey.ID, v.LicenseKey)
	}
	return v, err
}

// LicenseKeyValidationV1 is a validation as /v1's validate routes render it: the GraphQL
// result and the validated key's customer, which the /v1 shape embeds. It carries the
// records to the /v1 layer, which renders them but never reads storage itself.
type LicenseKeyValidationV1 struct {
	*model.LicenseKeyValidation
	Customer *storage.Customer // nil unless the key is valid
}

// ValidateLicenseKeyForV1 validates a key for /v1's validate routes, which render the result
// without a GraphQL operation. public is the customer-portal route, open to any
// organization's keys; otherwise the key must be in an organization the principal may see.
func (r *Resolver) ValidateLicenseKeyForV1(ctx context.Context, in model.LicenseKeyValidateInput, public bool) (LicenseKeyValidationV1, error) {
	var orgs []uuid.UUID
	if !public {
		orgs = licenseKeyOrganizations(ctx)
	}
	v, customer, err := r.checkLicenseKey(ctx, in, orgs)
	return LicenseKeyValidationV1{LicenseKeyValidation: v, Customer: customer}, err
}

// checkLicenseKey validates a key. orgs limits it to keys of those organizations; nil (the
// public operations, rate-limited) allows any. The happy path is one statement; only a failure reads the
// key again to say which check failed.
func (r *Resolver) checkLicenseKey(ctx context.Context, in model.LicenseKeyValidateInput, orgs []uuid.UUID) (*model.LicenseKeyValidation, *storage.Customer, error) {
	if orgs == nil {
		if err := r.limitPublicLicenseCall(ctx, in.OrganizationID, in.Key); err != nil {
			return nil, nil, err
		}
	}
	c, err := licenseKeyCheckOf(in)
	if err != nil {
		return nil, nil, err
	}
	if !visibleTo(orgs, c.OrganizationID) {
		return invalidation(storage.LicenseKeyValidationCodeNotFound, NotFound("")), nil, nil
	}
	validator, err := r.licenseKeyValidator(ctx)
	if err != nil {
		return nil, nil, err
	}
	for range 3 { // a diagnosis that finds no failure saw a concurrent change: validate again
		c.Now = r.Now()
		v, err := validator.Validate(ctx, c)
		if err == nil {
			customer, err := r.licenseKeyCustomer(ctx, v.CustomerID)
			if err != nil {
				return nil, nil, err
			}
			return validated(v), customer, nil
		}
		if !errors.Is(err, storage.ErrNotFound) {
			return nil, nil, err
		}
		s, err := storage.DiagnoseLicenseKey(ctx, r.db, c)
		if errors.Is(err, storage.ErrNotFound) {
			return invalidation(storage.LicenseKeyValidationCodeNotFound, NotFound("")), nil, nil
		}
		if err != nil {
			return nil, nil, err
		}
		if code, fail := firstFailure(s, c); code != storage.LicenseKeyValidationCodeValid {
			return invalidation(code, fail), nil, nil
		}
	}
	return nil, nil, fmt.Errorf("license key %s changed during three validations", c.Key)
}

// licenseKeyCustomer returns a validated key's customer, from r.customers when it holds it.
// Deleted customers are returned too: their keys are still the keys they were.
func (r *Resolver) licenseKeyCustomer(ctx context.Context, id uuid.UUID) (*storage.Customer, error) {
	if r.customers != nil {
		if c, ok := r.customers.Get(id); ok {
			return c, nil
		}
	}
	cs, err := storage.CustomersByIDs(ctx, r.db, []uuid.UUID{id})
	if err != nil {
		return nil, err
	}
	if cs[0] == nil {
		return nil, fmt.Errorf("license key customer %s: %w", id, storage.ErrNotFound)
	}
	if r.customers != nil {
		r.customers.Add(id, cs[0])
	}
	return cs[0], nil
}

// licenseKeyCheckOf checks the request's own limits (the ones a schema cannot state) and
// builds the storage check.
func licenseKeyCheckOf(in model.LicenseKeyValidateInput) (storage.LicenseKeyCheck, error) {
	c := storage.LicenseKeyCheck{OrganizationID: in.OrganizationID, Key: in.Key,
		ActivationID: in.ActivationID, BenefitID: in.BenefitID, CustomerID: in.CustomerID}
	if in.IncrementUsage != nil {
		if *in.IncrementUsage < 0 {
			return c, &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "greater_than_equal",
				Loc: []any{"input", "incrementUsage"}, Msg: "Input should be greater than or equal to 0",
				Input: *in.IncrementUsage, Ctx: map[string]any{"ge": 0}}}}
		}
		c.IncrementUsage = *in.IncrementUsage
	}
	if err := checkMetadata(in.Conditions, "input", "conditions"); err != nil {
		return c, err
	}
	c.Conditions = conditionsForComparison(in.Conditions)
	return c, nil
}

// firstFailure applies upstream's checks in order to a key a validation did not match and
// returns the first that fails, or VALID when none does.
func firstFailure(s *storage.LicenseKeyState, c storage.LicenseKeyCheck) (storage.LicenseKeyValidationCode, *Error) {
	switch {
	case s.Status == storage.LicenseKeyStatusRevoked:
		return storage.LicenseKeyValidationCodeRevoked, NotFound("License key is no longer active.")
	case s.Status != storage.LicenseKeyStatusGranted:
		return storage.LicenseKeyValidationCodeDisabled, NotFound("License key is no longer active.")
	case s.ExpiresAt != nil && !c.Now.Before(*s.ExpiresAt):
		return storage.LicenseKeyValidationCodeExpired, NotFound("License key has expired.")
	case c.ActivationID != nil && !s.ActivationFound:
		return storage.LicenseKeyValidationCodeActivationNotFound, NotFound("")
	case c.ActivationID != nil && !s.ActivationConditionsMatch:
		return storage.LicenseKeyValidationCodeConditionsMismatch, NotFound("License key does not match required conditions")
	case c.BenefitID != nil && *c.BenefitID != s.BenefitID:
		return storage.LicenseKeyValidationCodeBenefitMismatch, NotFound("License key does not match given benefit.")
	case c.CustomerID != nil && *c.CustomerID != s.CustomerID:
		return storage.LicenseKeyValidationCodeCustomerMismatch, NotFound("License key does not match given user.")
	}
	if c.IncrementUsage > 0 {
		remaining := int64(math.MaxInt32) - int64(s.Usage) // usage is a 32-bit counter
		if s.LimitUsage != nil {
			remaining = min(remaining, int64(*s.LimitUsage)-int64(s.Usage))
		}
		if int64(c.IncrementUsage) > remaining {
			return storage.LicenseKeyValidationCodeUsageLimitExceeded,
				BadRequest(fmt.Sprintf("License key only has %d more usages.", remaining))
		}
	}
	return storage.LicenseKeyValidationCodeValid, nil
}

// validated turns a validated key into the result.
func validated(v *storage.ValidatedLicenseKey) *model.LicenseKeyValidation {
	key := v.LicenseKey
	res := &model.LicenseKeyValidation{Code: storage.LicenseKeyValidationCodeValid, Valid: true, LicenseKey: &key,
		Activation: v.Activation}
	if key.LimitUsage != nil {
		remaining := *key.LimitUsage - key.Usage
		res.RemainingUsage = &remaining
	}
	return res
}

// invalidation is a failed validation's result: its code and the error /v1 answers with.
func invalidation(code storage.LicenseKeyValidationCode, e *Error) *model.LicenseKeyValidation {
	return &model.LicenseKeyValidation{Code: code,
		Error: &model.Problem{Code: e.Code, Status: e.Status(), Detail: e.Detail}}
}

// conditionsForComparison prepares conditions for comparison as jsonb the way upstream compares them in
// Python: jsonb already holds 1 and 1.0 equal, and booleans become 1 and 0 because True == 1.
// Stored activation conditions go through the same function; they are never shown.
func conditionsForComparison(m storage.JSONMap) storage.JSONMap {
	out := make(storage.JSONMap, len(m))
	for k, v := range m {
		if b, isBool := v.(bool); isBool {
			if b {
				v = 1
			} else {
				v = 0
			}
		}
		out[k] = v
	}
	return out
}
