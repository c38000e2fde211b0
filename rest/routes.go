package rest

import "net/http"

// Routes is the /v1 route table: one row per upstream operation Till serves, grouped by
// area, each group in the order upstream registers its routes (the order decides the Allow
// header of a 405).
func Routes() []Route {
	var all []Route
	for _, group := range [][]Route{customerRoutes(), orderRoutes(), subscriptionRoutes(), checkoutRoutes(), grantRoutes(), licenseKeyRoutes(), eventRoutes(), webhookRoutes(), fileRoutes()} {
		all = append(all, group...)
	}
	return all
}

// customerRoutes serve customers' payment methods, sessions and the portal's customer.
func customerRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/customers/{id}/payment-methods", Operation: "PaymentMethods",
			Params: []Param{Page(), Limit(), PathUUID4("id", "customerId")}, Field: "paymentMethods"},
		{Method: http.MethodGet, Path: "/v1/customers/external/{external_id}/payment-methods",
			Operation: "PaymentMethods",
			Params:    []Param{Page(), Limit(), PathString("external_id", "externalCustomerId")}, Field: "paymentMethods"},
		{Method: http.MethodPatch, Path: "/v1/customer-portal/customers/me", Operation: "PortalUpdateCustomer",
			Body: &Body{Var: "input", Schema: portalCustomerUpdate()}, Field: "portalUpdateCustomer"},
		{Method: http.MethodGet, Path: "/v1/customer-portal/customers/me/payment-methods", Operation: "PortalListPaymentMethods",
			Params: []Param{Page(), Limit()}, Field: "me.paymentMethods"},
		{Method: http.MethodPost, Path: "/v1/customer-sessions/", Operation: "CreateCustomerSession",
			Status: http.StatusCreated, Field: "createCustomerSession",
			Body: &Body{Var: "input", Schema: Union{Members: []Schema{
				Object{Name: "CustomerSessionCustomerIDCreate", Fields: append(sessionCommon(),
					Field{Name: "customer_id", Schema: UUID4{}, Required: true})},
				Object{Name: "CustomerSessionCustomerExternalIDCreate", Fields: append(sessionCommon(),
					Field{Name: "external_customer_id", Aliases: []string{"customer_external_id"}, Schema: String{}, Required: true})},
			}}}},
	}
}

// sessionCommon are the fields both customer-session bodies share.
func sessionCommon() []Field {
	return []Field{
		{Name: "member_id", Schema: Nullable{Schema: UUID4{}}},
		{Name: "external_member_id", Schema: Nullable{Schema: String{}}},
		{Name: "return_url", Schema: Nullable{Schema: URL{Schemes: []string{"http", "https"}, MaxLength: 2083}}},
	}
}

// addressInput is the contract's AddressInput.
func addressInput() Object {
	text := Nullable{Schema: String{}}
	return Object{Name: "AddressInput", Fields: []Field{
		{Name: "line1", Schema: text},
		{Name: "line2", Schema: text},
		{Name: "postal_code", Schema: text},
		{Name: "city", Schema: text},
		{Name: "state", Schema: text},
		{Name: "country", Schema: Enum{Name: "CountryAlpha2Input", Values: countryAlpha2Input}, Required: true},
	}}
}

// portalCustomerUpdate is the contract's CustomerPortalCustomerUpdate.
func portalCustomerUpdate() Object {
	return Object{Name: "CustomerPortalCustomerUpdate", Fields: []Field{
		{Name: "billing_name", Schema: Nullable{Schema: String{}}},
		{Name: "billing_address", Schema: Nullable{Schema: addressInput()}},
		{Name: "tax_id", Schema: Nullable{Schema: String{}}},
		{Name: "default_payment_method_id", Schema: Nullable{Schema: UUID4{}}},
	}}
}
