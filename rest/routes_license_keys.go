package rest

import (
	"math"
	"net/http"

	"till/rest/fastapi"
)

// licenseKeyRoutes serve license keys: the organization's list, get, update and
// server-side validate/activate/deactivate, then the portal's list and get and the public
// validate/activate/deactivate, which take no token.
func licenseKeyRoutes() []Route {
	idParam := PathUUID4("id", "id")
	return []Route{
		{Method: http.MethodGet, Path: "/v1/license-keys/", Operation: "ListLicenseKeys", Field: "licenseKeys",
			Params: []fastapi.Param{Page(), Limit(),
				Filter("organization_id", "organizationId", fastapi.UUID4{}),
				Filter("benefit_id", "benefitId", fastapi.UUID4{}),
				Filter("status", "status", licenseKeyStatus()),
			}},
		{Method: http.MethodGet, Path: "/v1/license-keys/{id}", Operation: "GetLicenseKey", Field: "licenseKey",
			Params: []fastapi.Param{idParam}},
		{Method: http.MethodPatch, Path: "/v1/license-keys/{id}", Operation: "UpdateLicenseKey", Field: "updateLicenseKey",
			Params: []fastapi.Param{idParam}, Body: &fastapi.Body{Var: "input", Schema: licenseKeyUpdate()}},
		{Method: http.MethodPost, Path: "/v1/license-keys/validate", Operation: "ValidateLicenseKey",
			Body: &fastapi.Body{Var: "input", Schema: licenseKeyValidate()}, Field: "validateLicenseKey.licenseKey",
			Append: []string{"validateLicenseKey.activation"}, Problem: "validateLicenseKey.error"},
		{Method: http.MethodPost, Path: "/v1/license-keys/activate", Operation: "ActivateLicenseKey",
			Body: &fastapi.Body{Var: "input", Schema: licenseKeyActivate()}, Field: "activateLicenseKey"},
		{Method: http.MethodPost, Path: "/v1/license-keys/deactivate", Operation: "DeactivateLicenseKey",
			Body: &fastapi.Body{Var: "input", Schema: licenseKeyDeactivate()}, Status: http.StatusNoContent},
		{Method: http.MethodGet, Path: "/v1/customer-portal/license-keys/", Operation: "PortalListLicenseKeys",
			Field: "me.licenseKeys", Params: []fastapi.Param{Page(), Limit(), Query("benefit_id", "benefitId", fastapi.Nullable{Schema: fastapi.UUID4{}})}},
		{Method: http.MethodGet, Path: "/v1/customer-portal/license-keys/{id}", Operation: "PortalGetLicenseKey",
			Field: "me.licenseKey", Params: []fastapi.Param{idParam}},
		{Method: http.MethodPost, Path: "/v1/customer-portal/license-keys/validate", Operation: "PortalValidateLicenseKey",
			Body: &fastapi.Body{Var: "input", Schema: licenseKeyValidate()}, Field: "portalValidateLicenseKey.licenseKey",
			Append: []string{"portalValidateLicenseKey.activation"}, Problem: "portalValidateLicenseKey.error"},
		{Method: http.MethodPost, Path: "/v1/customer-portal/license-keys/activate", Operation: "PortalActivateLicenseKey",
			Body: &fastapi.Body{Var: "input", Schema: licenseKeyActivate()}, Field: "portalActivateLicenseKey"},
		{Method: http.MethodPost, Path: "/v1/customer-portal/license-keys/deactivate", Operation: "PortalDeactivateLicenseKey",
			Body: &fastapi.Body{Var: "input", Schema: licenseKeyDeactivate()}, Status: http.StatusNoContent},
	}
}

// licenseKeyStatus is the LicenseKeyStatus enum.
func licenseKeyStatus() fastapi.Enum {
	return fastapi.Enum{Name: "LicenseKeyStatus", Values: []string{"granted", "revoked", "disabled"}}
}

// keyValues is upstream's conditions and meta map: at most 50 keys of 1–40 characters,
// values strings of 1–500 characters, integers, numbers or booleans.
func keyValues() fastapi.Map {
	return fastapi.Map{
		Keys:      fastapi.String{MinLength: 1, MaxLength: 40},
		Values:    fastapi.Union{Members: []fastapi.Schema{fastapi.String{MinLength: 1, MaxLength: 500}, fastapi.Int{}, fastapi.Float{}, fastapi.Bool{}}},
		MaxLength: 50,
	}
}

// licenseKeyRef are the fields naming a key: its text and organization.
func licenseKeyRef() []fastapi.Field {
	return []fastapi.Field{
		{Name: "key", Schema: fastapi.String{}, Required: true},
		{Name: "organization_id", Schema: fastapi.UUID4{}, Required: true},
	}
}

// licenseKeyValidate is LicenseKeyValidate.
func licenseKeyValidate() fastapi.Object {
	return fastapi.Object{Name: "LicenseKeyValidate", Fields: append(licenseKeyRef(),
		fastapi.Field{Name: "activation_id", Schema: fastapi.Nullable{Schema: fastapi.UUID4{}}},
		fastapi.Field{Name: "benefit_id", Schema: fastapi.Nullable{Schema: fastapi.UUID4{}}},
		fastapi.Field{Name: "customer_id", Schema: fastapi.Nullable{Schema: fastapi.UUID4{}}},
		fastapi.Field{Name: "increment_usage", Schema: fastapi.Nullable{Schema: fastapi.Int{Ge: fastapi.At(0), Le: fastapi.At(math.MaxInt32)}}},
		fastapi.Field{Name: "conditions", Schema: keyValues()},
	)}
}

// licenseKeyActivate is LicenseKeyActivate.
func licenseKeyActivate() fastapi.Object {
	return fastapi.Object{Name: "LicenseKeyActivate", Fields: append(licenseKeyRef(),
		fastapi.Field{Name: "label", Schema: fastapi.String{}, Required: true},
		fastapi.Field{Name: "conditions", Schema: keyValues()},
		fastapi.Field{Name: "meta", Schema: keyValues()},
	)}
}

// licenseKeyDeactivate is LicenseKeyDeactivate.
func licenseKeyDeactivate() fastapi.Object {
	return fastapi.Object{Name: "LicenseKeyDeactivate", Fields: append(licenseKeyRef(),
		fastapi.Field{Name: "activation_id", Schema: fastapi.UUID4{}, Required: true})}
}

// licenseKeyUpdate is LicenseKeyUpdate: every field optional, limits int32 and positive.
func licenseKeyUpdate() fastapi.Object {
	positive := fastapi.Int{Ge: fastapi.At(math.MinInt32), Le: fastapi.At(math.MaxInt32), Gt: fastapi.At(0)}
	return fastapi.Object{Name: "LicenseKeyUpdate", Fields: []fastapi.Field{
		{Name: "status", Schema: fastapi.Nullable{Schema: licenseKeyStatus()}},
		{Name: "usage", Schema: fastapi.Int32()},
		{Name: "limit_activations", Schema: fastapi.Nullable{Schema: positive}},
		{Name: "limit_usage", Schema: fastapi.Nullable{Schema: positive}},
		{Name: "expires_at", Schema: fastapi.Nullable{Schema: fastapi.DateTime{}}},
	}}
}
