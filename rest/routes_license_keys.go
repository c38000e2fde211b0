package rest

import (
	"math"
	"net/http"
)

// licenseKeyRoutes serve license keys: the organization's list, get, update and
// server-side validate/activate/deactivate, then the portal's list and get and the public
// validate/activate/deactivate, which take no token.
func licenseKeyRoutes() []Route {
	idParam := PathUUID4("id", "id")
	return []Route{
		{Method: http.MethodGet, Path: "/v1/license-keys/", Operation: "ListLicenseKeys", Field: "licenseKeys",
			Params: []Param{Page(), Limit(),
				Filter("organization_id", "organizationId", UUID4{}),
				Filter("benefit_id", "benefitId", UUID4{}),
				Filter("status", "status", licenseKeyStatus()),
			}},
		{Method: http.MethodGet, Path: "/v1/license-keys/{id}", Operation: "GetLicenseKey", Field: "licenseKey",
			Params: []Param{idParam}},
		{Method: http.MethodPatch, Path: "/v1/license-keys/{id}", Operation: "UpdateLicenseKey", Field: "updateLicenseKey",
			Params: []Param{idParam}, Body: &Body{Var: "input", Schema: licenseKeyUpdate()}},
		{Method: http.MethodPost, Path: "/v1/license-keys/validate", Operation: "ValidateLicenseKey",
			Body: &Body{Var: "input", Schema: licenseKeyValidate()}, Field: "validateLicenseKey.licenseKey",
			Append: []string{"validateLicenseKey.activation"}, Problem: "validateLicenseKey.error"},
		{Method: http.MethodPost, Path: "/v1/license-keys/activate", Operation: "ActivateLicenseKey",
			Body: &Body{Var: "input", Schema: licenseKeyActivate()}, Field: "activateLicenseKey"},
		{Method: http.MethodPost, Path: "/v1/license-keys/deactivate", Operation: "DeactivateLicenseKey",
			Body: &Body{Var: "input", Schema: licenseKeyDeactivate()}, Status: http.StatusNoContent},
		{Method: http.MethodGet, Path: "/v1/customer-portal/license-keys/", Operation: "PortalListLicenseKeys",
			Field: "me.licenseKeys", Params: []Param{Page(), Limit(), Query("benefit_id", "benefitId", Nullable{Schema: UUID4{}})}},
		{Method: http.MethodGet, Path: "/v1/customer-portal/license-keys/{id}", Operation: "PortalGetLicenseKey",
			Field: "me.licenseKey", Params: []Param{idParam}},
		{Method: http.MethodPost, Path: "/v1/customer-portal/license-keys/validate", Operation: "PortalValidateLicenseKey",
			Body: &Body{Var: "input", Schema: licenseKeyValidate()}, Field: "portalValidateLicenseKey.licenseKey",
			Append: []string{"portalValidateLicenseKey.activation"}, Problem: "portalValidateLicenseKey.error"},
		{Method: http.MethodPost, Path: "/v1/customer-portal/license-keys/activate", Operation: "PortalActivateLicenseKey",
			Body: &Body{Var: "input", Schema: licenseKeyActivate()}, Field: "portalActivateLicenseKey"},
		{Method: http.MethodPost, Path: "/v1/customer-portal/license-keys/deactivate", Operation: "PortalDeactivateLicenseKey",
			Body: &Body{Var: "input", Schema: licenseKeyDeactivate()}, Status: http.StatusNoContent},
	}
}

// licenseKeyStatus is the LicenseKeyStatus enum.
func licenseKeyStatus() Enum {
	return Enum{Name: "LicenseKeyStatus", Values: []string{"granted", "revoked", "disabled"}}
}

// keyValues is upstream's conditions and meta map: at most 50 keys of 1–40 characters,
// values strings of 1–500 characters, integers, numbers or booleans.
func keyValues() Map {
	return Map{
		Keys:      String{MinLength: 1, MaxLength: 40},
		Values:    Union{Members: []Schema{String{MinLength: 1, MaxLength: 500}, Int{}, Float{}, Bool{}}},
		MaxLength: 50,
	}
}

// licenseKeyRef are the fields naming a key: its text and organization.
func licenseKeyRef() []Field {
	return []Field{
		{Name: "key", Schema: String{}, Required: true},
		{Name: "organization_id", Schema: UUID4{}, Required: true},
	}
}

// licenseKeyValidate is LicenseKeyValidate.
func licenseKeyValidate() Object {
	return Object{Name: "LicenseKeyValidate", Fields: append(licenseKeyRef(),
		Field{Name: "activation_id", Schema: Nullable{Schema: UUID4{}}},
		Field{Name: "benefit_id", Schema: Nullable{Schema: UUID4{}}},
		Field{Name: "customer_id", Schema: Nullable{Schema: UUID4{}}},
		Field{Name: "increment_usage", Schema: Nullable{Schema: Int{Ge: At(0), Le: At(math.MaxInt32)}}},
		Field{Name: "conditions", Schema: keyValues()},
	)}
}

// licenseKeyActivate is LicenseKeyActivate.
func licenseKeyActivate() Object {
	return Object{Name: "LicenseKeyActivate", Fields: append(licenseKeyRef(),
		Field{Name: "label", Schema: String{}, Required: true},
		Field{Name: "conditions", Schema: keyValues()},
		Field{Name: "meta", Schema: keyValues()},
	)}
}

// licenseKeyDeactivate is LicenseKeyDeactivate.
func licenseKeyDeactivate() Object {
	return Object{Name: "LicenseKeyDeactivate", Fields: append(licenseKeyRef(),
		Field{Name: "activation_id", Schema: UUID4{}, Required: true})}
}

// licenseKeyUpdate is LicenseKeyUpdate: every field optional, limits int32 and positive.
func licenseKeyUpdate() Object {
	positive := Int{Ge: At(math.MinInt32), Le: At(math.MaxInt32), Gt: At(0)}
	return Object{Name: "LicenseKeyUpdate", Fields: []Field{
		{Name: "status", Schema: Nullable{Schema: licenseKeyStatus()}},
		{Name: "usage", Schema: Int32()},
		{Name: "limit_activations", Schema: Nullable{Schema: positive}},
		{Name: "limit_usage", Schema: Nullable{Schema: positive}},
		{Name: "expires_at", Schema: Nullable{Schema: DateTime{}}},
	}}
}
