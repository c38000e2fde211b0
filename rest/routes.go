package rest

import (
	"net/http"

	"till/rest/fastapi"
)

// Routes is the /v1 route table: one row per upstream operation Till serves, grouped by
// area, each group in the order upstream registers its routes (the order decides the Allow
// header of a 405).
func Routes() []Route {
	var all []Route
	for _, group := range [][]Route{customerRoutes(), orderRoutes(), subscriptionRoutes(), checkoutRoutes(), grantRoutes(), licenseKeyRoutes(), eventRoutes(), webhookRoutes(), fileRoutes(), refundRoutes(), disputeRoutes(), memberRoutes(), seatRoutes(), upstreamExportRoutes(), metricsRoutes()} {
		all = append(all, group...)
	}
	return all
}

// customerRoutes serve customers' payment methods, sessions and the portal's customer.
func customerRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/customers/{id}/payment-methods", Operation: "PaymentMethods",
			Params: []fastapi.Param{Page(), Limit(), PathUUID4("id", "customerId")}, Field: "paymentMethods"},
		{Method: http.MethodGet, Path: "/v1/customers/external/{external_id}/payment-methods",
			Operation: "PaymentMethods",
			Params:    []fastapi.Param{Page(), Limit(), PathString("external_id", "externalCustomerId")}, Field: "paymentMethods"},
		{Method: http.MethodPatch, Path: "/v1/customer-portal/customers/me", Operation: "PortalUpdateCustomer",
			Body: &fastapi.Body{Var: "input", Schema: portalCustomerUpdate()}, Field: "portalUpdateCustomer"},
		{Method: http.MethodGet, Path: "/v1/customer-portal/customers/me/payment-methods", Operation: "PortalListPaymentMethods",
			Params: []fastapi.Param{Page(), Limit()}, Field: "me.paymentMethods"},
		{Method: http.MethodPost, Path: "/v1/customer-sessions/", Operation: "CreateCustomerSession",
			Status: http.StatusCreated, Field: "createCustomerSession",
			Body: &fastapi.Body{Var: "input", Schema: fastapi.Union{Members: []fastapi.Schema{
				fastapi.Object{Name: "CustomerSessionCustomerIDCreate", Fields: append(sessionCommon(),
					fastapi.Field{Name: "customer_id", Schema: fastapi.UUID4{}, Required: true})},
				fastapi.Object{Name: "CustomerSessionCustomerExternalIDCreate", Fields: append(sessionCommon(),
					fastapi.Field{Name: "external_customer_id", Aliases: []string{"customer_external_id"}, Schema: fastapi.String{}, Required: true})},
			}}}},
	}
}

// sessionCommon are the fields both customer-session bodies share.
func sessionCommon() []fastapi.Field {
	return []fastapi.Field{
		{Name: "member_id", Schema: fastapi.Nullable{Schema: fastapi.UUID4{}}},
		{Name: "external_member_id", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
		{Name: "return_url", Schema: fastapi.Nullable{Schema: fastapi.URL{Schemes: []string{"http", "https"}, MaxLength: 2083}}},
	}
}

// addressInput is the contract's AddressInput.
func addressInput() fastapi.Object {
	text := fastapi.Nullable{Schema: fastapi.String{}}
	return fastapi.Object{Name: "AddressInput", Fields: []fastapi.Field{
		{Name: "line1", Schema: text},
		{Name: "line2", Schema: text},
		{Name: "postal_code", Schema: text},
		{Name: "city", Schema: text},
		{Name: "state", Schema: text},
		{Name: "country", Schema: fastapi.Enum{Name: "CountryAlpha2Input", Values: countryAlpha2Input}, Required: true},
	}}
}

// portalCustomerUpdate is the contract's CustomerPortalCustomerUpdate.
func portalCustomerUpdate() fastapi.Object {
	return fastapi.Object{Name: "CustomerPortalCustomerUpdate", Fields: []fastapi.Field{
		{Name: "billing_name", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
		{Name: "billing_address", Schema: fastapi.Nullable{Schema: addressInput()}},
		{Name: "tax_id", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
		{Name: "default_payment_method_id", Schema: fastapi.Nullable{Schema: fastapi.UUID4{}}},
	}}
}
