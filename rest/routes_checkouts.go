package rest

import (
	"net/http"

	"till/rest/fastapi"
)

// checkoutRoutes serve checkout sessions. Creating, updating and confirming checkouts are
// GraphQL mutations; /v1 serves the list the upstream subset names.
func checkoutRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/checkouts/", Operation: "ListCheckouts", Field: "checkouts", Params: []fastapi.Param{
			Page(), Limit(),
			Sorting("created_at", "expires_at", "status"),
			Filter("organization_id", "organizationId", fastapi.UUID4{}),
			Filter("product_id", "productId", fastapi.UUID4{}),
			Filter("customer_id", "customerId", fastapi.UUID4{}),
			Filter("external_customer_id", "externalCustomerId", fastapi.String{}),
			Filter("status", "status", fastapi.Enum{Name: "CheckoutStatus",
				Values: []string{"open", "expired", "confirmed", "succeeded", "failed"}}),
			Query("query", "query", fastapi.Nullable{Schema: fastapi.String{}}),
		}},
	}
}
