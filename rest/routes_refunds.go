package rest

import (
	"net/http"

	"till/rest/fastapi"
)

// refundRoutes serve refunds: the organization's list and the creation of one.
func refundRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/refunds/", Operation: "ListRefunds", Field: "refunds", Params: []fastapi.Param{
			Page(), Limit(),
			Sorting("created_at", "amount"),
			Filter("id", "id", fastapi.UUID4{}),
			Filter("organization_id", "organizationId", fastapi.UUID4{}),
			Filter("order_id", "orderId", fastapi.UUID4{}),
			Filter("subscription_id", "subscriptionId", fastapi.UUID4{}),
			Filter("customer_id", "customerId", fastapi.UUID4{}),
			Filter("external_customer_id", "externalCustomerId", fastapi.String{}),
			Query("succeeded", "succeeded", fastapi.Nullable{Schema: fastapi.Bool{}}),
		}},
		{Method: http.MethodPost, Path: "/v1/refunds/", Operation: "CreateRefund", Field: "createRefund",
			Status: http.StatusCreated, Body: &fastapi.Body{Var: "input", Schema: refundCreate()}},
	}
}

// refundCreate is RefundCreate. Its reason is upstream's ManualRefundReason, RefundReason
// without dispute_prevention, which only the system gives.
func refundCreate() fastapi.Object {
	return fastapi.Object{Name: "RefundCreate", Fields: []fastapi.Field{
		{Name: "metadata", Schema: keyValues()},
		{Name: "order_id", Schema: fastapi.UUID4{}, Required: true},
		{Name: "reason", Schema: fastapi.Enum{Name: "ManualRefundReason", Values: []string{"duplicate", "fraudulent",
			"customer_request", "service_disruption", "satisfaction_guarantee", "other"}}, Required: true},
		{Name: "amount", Schema: fastapi.Int{Gt: fastapi.At(0)}, Required: true},
		{Name: "comment", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
		{Name: "revoke_benefits", Schema: fastapi.Bool{}},
	}}
}
