package rest

import (
	"net/http"

	"till/rest/fastapi"
)

// grantRoutes serve a benefit's grants.
func grantRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/benefits/{id}/grants", Operation: "ListBenefitGrants",
			Params: []fastapi.Param{Page(), Limit(), PathUUID4("id", "benefitId"),
				Query("is_granted", "isGranted", fastapi.Bool{}),
				Filter("customer_id", "customerId", fastapi.UUID4{}),
				Filter("member_id", "memberId", fastapi.UUID4{})},
			Field: "benefitGrants"},
	}
}
