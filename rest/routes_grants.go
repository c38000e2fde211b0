package rest

import "net/http"

// grantRoutes serve a benefit's grants.
func grantRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/benefits/{id}/grants", Operation: "ListBenefitGrants",
			Params: []Param{Page(), Limit(), PathUUID4("id", "benefitId"),
				Query("is_granted", "isGranted", Bool{}),
				Filter("customer_id", "customerId", UUID4{}),
				Filter("member_id", "memberId", UUID4{})},
			Field: "benefitGrants"},
	}
}
