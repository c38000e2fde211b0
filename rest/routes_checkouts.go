package rest

import "net/http"

// checkoutRoutes serve checkout sessions. Creating, updating and confirming checkouts are
// GraphQL mutations; /v1 serves the list the upstream subset names.
func checkoutRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/checkouts/", Operation: "ListCheckouts", Field: "checkouts", Params: []Param{
			Page(), Limit(),
			Sorting("created_at", "expires_at", "status"),
			Filter("organization_id", "organizationId", UUID4{}),
			Filter("product_id", "productId", UUID4{}),
			Filter("customer_id", "customerId", UUID4{}),
			Filter("external_customer_id", "externalCustomerId", String{}),
			Filter("status", "status", Enum{Name: "CheckoutStatus",
				Values: []string{"open", "expired", "confirmed", "succeeded", "failed"}}),
			Query("query", "query", Nullable{Schema: String{}}),
		}},
	}
}
