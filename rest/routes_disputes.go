package rest

import (
	"net/http"

	"till/rest/fastapi"
)

// disputeRoutes serve disputes: the organization's list, one dispute, and its acceptance.
func disputeRoutes() []Route {
	idParam := PathUUID4("id", "id")
	return []Route{
		{Method: http.MethodGet, Path: "/v1/disputes/", Operation: "ListDisputes", Field: "disputes", Params: []fastapi.Param{
			Page(), Limit(),
			Sorting("created_at", "amount"),
			Filter("organization_id", "organizationId", fastapi.UUID4{}),
			Filter("order_id", "orderId", fastapi.UUID4{}),
			Filter("status", "status", fastapi.Enum{Name: "DisputeStatus",
				Values: []string{"prevented", "early_warning", "needs_response", "under_review", "lost", "won"}}),
		}},
		{Method: http.MethodGet, Path: "/v1/disputes/{id}", Operation: "GetDispute", Field: "dispute",
			Params: []fastapi.Param{idParam}},
		{Method: http.MethodPost, Path: "/v1/disputes/{id}/accept", Operation: "AcceptDispute", Field: "acceptDispute",
			Params: []fastapi.Param{idParam}},
	}
}
