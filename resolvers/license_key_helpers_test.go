package resolvers_test

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"till/resolvers"
	"till/resolvers/resolverstest"
)

// keyWorld is a grantWorld with one license-key benefit granted to one customer: the key
// the license tests validate, activate and update.
type keyWorld struct {
	*grantWorld
	benefit  benefit
	customer customer
	key      licenseKey
}

func newKeyWorld(tb testing.TB, props vars, opts ...resolverstest.Option) *keyWorld {
	tb.Helper()
	w := &keyWorld{grantWorld: newGrantWorld(tb, opts...)}
	w.benefit = w.licenseBenefit(tb, props)
	p := w.s.NewProduct(tb, w.org.ID, "App", w.benefit.ID)
	w.customer = w.s.NewCustomer(tb, w.org.ID, "")
	orderID := w.s.NewPaidOrder(tb, w.org.ID, w.customer.ID, p.ID, nil)
	w.grant(tb, resolvers.GrantScope{CustomerID: w.customer.ID, ProductID: p.ID, OrderID: &orderID})
	keys := w.licenseKeys(tb, w.benefit.ID)
	if len(keys) != 1 {
		tb.Fatalf("keys = %d, want 1", len(keys))
	}
	w.key = keys[0]
	return w
}

// validation is the JSON shape of LicenseKeyValidation.
type validation struct {
	Code  string `json:"code"`
	Valid bool   `json:"valid"`
	Error *struct {
		Code   string `json:"code"`
		Status int    `json:"status"`
		Detail string `json:"detail"`
	} `json:"error"`
	LicenseKey *struct {
		ID              uuid.UUID `json:"id"`
		Usage           int       `json:"usage"`
		Validations     int       `json:"validations"`
		LastValidatedAt *string   `json:"lastValidatedAt"`
		Customer        struct {
			ID   uuid.UUID `json:"id"`
			Name *string   `json:"name"`
		} `json:"customer"`
	} `json:"licenseKey"`
	Activation *struct {
		ID    uuid.UUID      `json:"id"`
		Label string         `json:"label"`
		Meta  map[string]any `json:"meta"`
	} `json:"activation"`
	RemainingUsage *int `json:"remainingUsage"`
}

const validationFields = `code valid error { code status detail }
	licenseKey { id usage validations lastValidatedAt customer { id name } } activation { id label meta } remainingUsage`

// validate runs validateLicenseKey (or the public twin when token is "") for this key.
func (w *keyWorld) validate(tb testing.TB, token string, in vars) validation {
	tb.Helper()
	if _, set := in["key"]; !set {
		in["key"] = w.key.Key
	}
	if _, set := in["organizationId"]; !set {
		in["organizationId"] = w.org.ID
	}
	field := "validateLicenseKey"
	if token == "" {
		field = "portalValidateLicenseKey"
	}
	var out map[string]validation
	w.s.Query(tb, token, `mutation($in: LicenseKeyValidateInput!) { `+field+`(input: $in) { `+validationFields+` } }`,
		vars{"in": in}, &out)
	return out[field]
}

// activate runs activateLicenseKey for this key and returns the activation id, or the error.
func (w *keyWorld) activate(tb testing.TB, in vars) (uuid.UUID, *gqlError) {
	tb.Helper()
	if _, set := in["key"]; !set {
		in["key"] = w.key.Key
	}
	if _, set := in["organizationId"]; !set {
		in["organizationId"] = w.org.ID
	}
	res := w.s.Do(tb, w.org.Token, `mutation($in: LicenseKeyActivateInput!) { activateLicenseKey(input: $in) { id licenseKey { id } } }`,
		vars{"in": in})
	if len(res.Errors) > 0 {
		return uuid.Nil, &res.Errors[0]
	}
	var out struct {
		ActivateLicenseKey struct{ ID uuid.UUID }
	}
	if err := json.Unmarshal(res.Data, &out); err != nil {
		tb.Fatal(err)
	}
	return out.ActivateLicenseKey.ID, nil
}

// counters reads the key's counters straight from the database.
func (w *keyWorld) counters(tb testing.TB) (usage, validations, activations int) {
	tb.Helper()
	w.s.Get(tb, &usage, `SELECT usage FROM license_keys WHERE id = $1`, w.key.ID)
	w.s.Get(tb, &validations, `SELECT validations FROM license_keys WHERE id = $1`, w.key.ID)
	w.s.Get(tb, &activations, `SELECT count(*) FROM license_key_activations WHERE license_key_id = $1 AND deleted_at IS NULL`, w.key.ID)
	return usage, validations, activations
}
