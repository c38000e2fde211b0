package resolvers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

func TestValidateLicenseKeyChecksInUpstreamOrder(t *testing.T) {
	t.Parallel()
	w := newKeyWorld(t, vars{"activations": vars{"limit": 3}, "limit_usage": 10})
	withConditions, gqlErr := w.activate(t, vars{"label": "laptop", "conditions": vars{"major": 2, "beta": true}, "meta": vars{"os": "linux"}})
	if gqlErr != nil {
		t.Fatalf("activate: %+v", gqlErr)
	}
	plain, gqlErr := w.activate(t, vars{"label": "desktop"})
	if gqlErr != nil {
		t.Fatalf("activate: %+v", gqlErr)
	}
	other := w.s.NewOrg(t, resolverstest.AllScopes)
	tests := []struct {
		name   string
		in     vars
		code   string
		status int
		detail string
	}{
		{"unknown key", vars{"key": "NOPE"}, "not_found", 404, "Not found"},
		{"key text is case-sensitive", vars{"key": strings.ToLower(w.key.Key)}, "not_found", 404, "Not found"},
		{"key under another organization", vars{"organizationId": other.ID}, "not_found", 404, "Not found"},
		{"unknown activation", vars{"activationId": uuid.New()}, "activation_not_found", 404, "Not found"},
		{"conditions missing", vars{"activationId": withConditions}, "conditions_mismatch", 404,
			"License key does not match required conditions"},
		{"conditions a subset", vars{"activationId": withConditions, "conditions": vars{"major": 2}}, "conditions_mismatch", 404,
			"License key does not match required conditions"},
		{"conditions with an extra key", vars{"activationId": withConditions, "conditions": vars{"major": 2, "beta": true, "x": "y"}},
			"conditions_mismatch", 404, "License key does not match required conditions"},
		{"wrong benefit", vars{"benefitId": uuid.New()}, "benefit_mismatch", 404, "License key does not match given benefit."},
		{"wrong customer", vars{"customerId": uuid.New()}, "customer_mismatch", 404, "License key does not match given user."},
		{"usage past the limit", vars{"incrementUsage": 11}, "usage_limit_exceeded", 400, "License key only has 10 more usages."},
		{"benefit checked before usage", vars{"benefitId": uuid.New(), "incrementUsage": 11}, "benefit_mismatch", 404,
			"License key does not match given benefit."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := []int{}
			u, v, a := w.counters(t)
			before = append(before, u, v, a)
			got := w.validate(t, w.org.Token, tc.in)
			if got.Valid || got.Code != tc.code || got.Error == nil || got.LicenseKey != nil ||
				got.Error.Code != map[int]string{404: "ResourceNotFound", 400: "BadRequest"}[tc.status] ||
				got.Error.Status != tc.status || got.Error.Detail != tc.detail {
				t.Errorf("validation = %+v (error %+v), want %s %d %q", got, got.Error, tc.code, tc.status, tc.detail)
			}
			u, v, a = w.counters(t)
			if before[0] != u || before[1] != v || before[2] != a {
				t.Errorf("counters changed by a failed validation: %v -> %d %d %d", before, u, v, a)
			}
		})
	}

	t.Run("a token of another organization does not find the key", func(t *testing.T) {
		if got := w.validate(t, other.Token, vars{}); got.Code != "not_found" {
			t.Errorf("validation = %+v", got)
		}
	})
	t.Run("a valid validation counts, adds usage and returns the activation", func(t *testing.T) {
		got := w.validate(t, w.org.Token, vars{"activationId": withConditions, "conditions": vars{"beta": 1, "major": 2.0},
			"benefitId": w.benefit.ID, "customerId": w.customer.ID, "incrementUsage": 4})
		if !got.Valid || got.Code != "valid" || got.Error != nil || got.LicenseKey == nil || got.LicenseKey.Usage != 4 ||
			got.LicenseKey.Validations != 1 || got.LicenseKey.LastValidatedAt == nil || got.LicenseKey.Customer.ID != w.customer.ID ||
			got.Activation == nil || got.Activation.ID != withConditions || got.Activation.Label != "laptop" ||
			got.Activation.Meta["os"] != "linux" || got.RemainingUsage == nil || *got.RemainingUsage != 6 {
			t.Errorf("validation = %+v", got)
		}
	})
	t.Run("an activation without conditions accepts any", func(t *testing.T) {
		if got := w.validate(t, "", vars{"activationId": plain, "conditions": vars{"anything": "x"}}); !got.Valid {
			t.Errorf("validation = %+v", got)
		}
	})
	t.Run("conditions are ignored without an activation", func(t *testing.T) {
		if got := w.validate(t, "", vars{"conditions": vars{"anything": "x"}}); !got.Valid || got.Activation != nil {
			t.Errorf("validation = %+v", got)
		}
	})
	t.Run("usage up to the limit passes, one more fails with the remaining count", func(t *testing.T) {
		if got := w.validate(t, w.org.Token, vars{"incrementUsage": 6}); !got.Valid || *got.RemainingUsage != 0 {
			t.Fatalf("validation = %+v", got)
		}
		got := w.validate(t, w.org.Token, vars{"incrementUsage": 1})
		if got.Code != "usage_limit_exceeded" || got.Error.Detail != "License key only has 0 more usages." {
			t.Errorf("validation = %+v", got)
		}
		if got := w.validate(t, w.org.Token, vars{"incrementUsage": 0}); !got.Valid {
			t.Errorf("increment 0 at the limit = %+v, want valid", got)
		}
	})
	t.Run("a negative increment is a validation error", func(t *testing.T) {
		e := w.s.QueryError(t, w.org.Token, `mutation($in: LicenseKeyValidateInput!) { validateLicenseKey(input: $in) { code } }`,
			vars{"in": vars{"key": w.key.Key, "organizationId": w.org.ID, "incrementUsage": -1}})
		if (e.Extensions.Code != "BAD_USER_INPUT" || e.Extensions.Reason != "RequestValidationError") || len(e.Extensions.Fields) != 1 ||
			e.Extensions.Fields[0].Type != "greater_than_equal" {
			t.Errorf("error = %+v", e)
		}
	})
	for _, tc := range []struct {
		status, code string
	}{{"revoked", "revoked"}, {"disabled", "disabled"}} {
		t.Run(tc.status+" keys are no longer active", func(t *testing.T) {
			w.s.Exec(t, `UPDATE license_keys SET status = $2 WHERE id = $1`, w.key.ID, tc.status)
			defer w.s.Exec(t, `UPDATE license_keys SET status = 'granted' WHERE id = $1`, w.key.ID)
			got := w.validate(t, "", vars{"benefitId": uuid.New()})
			if got.Code != tc.code || got.Error.Detail != "License key is no longer active." {
				t.Errorf("validation = %+v", got)
			}
		})
	}
	t.Run("a key expires at expires_at", func(t *testing.T) {
		now := time.Now().UTC().Truncate(time.Second)
		w.s.Clock.Set(now)
		w.s.Exec(t, `UPDATE license_keys SET expires_at = $2 WHERE id = $1`, w.key.ID, now)
		got := w.validate(t, "", vars{})
		if got.Code != "expired" || got.Error.Detail != "License key has expired." {
			t.Errorf("validation = %+v", got)
		}
	})
}
