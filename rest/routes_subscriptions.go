package rest

import (
	"net/http"

	"till/rest/fastapi"
)

// subscriptionRoutes serve subscriptions: organization and portal lists, and subscriptions with a claimed seat.
func subscriptionRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/subscriptions/", Operation: "ListSubscriptions", Field: "subscriptions",
			Params: []fastapi.Param{
				Page(), Limit(),
				Sorting("customer", "status", "started_at", "current_period_end", "ended_at", "ends_at", "amount",
					"product", "discount"),
				Metadata(),
				Filter("organization_id", "organizationId", fastapi.UUID4{}),
				Filter("product_id", "productId", fastapi.UUID4{}),
				Filter("customer_id", "customerId", fastapi.UUID4{}),
				Filter("external_customer_id", "externalCustomerId", fastapi.String{}),
				Filter("discount_id", "discountId", fastapi.UUID4{}),
				Query("active", "active", fastapi.Nullable{Schema: fastapi.Bool{}}),
				Filter("status", "status", subscriptionStatus()),
				Query("cancel_at_period_end", "cancelAtPeriodEnd", fastapi.Nullable{Schema: fastapi.Bool{}}),
				Filter("customer_cancellation_reason", "customerCancellationReason", fastapi.Enum{Name: "CustomerCancellationReason",
					Values: []string{"customer_service", "low_quality", "missing_features", "switched_service",
						"too_complex", "too_expensive", "unused", "other"}}),
				Query("canceled_at_after", "canceledAtAfter", fastapi.Nullable{Schema: fastapi.DateTime{}}),
				Query("canceled_at_before", "canceledAtBefore", fastapi.Nullable{Schema: fastapi.DateTime{}}),
				Query("started_after", "startedAfter", fastapi.Nullable{Schema: fastapi.DateTime{}}),
				Query("started_before", "startedBefore", fastapi.Nullable{Schema: fastapi.DateTime{}}),
			}},
		{Method: http.MethodGet, Path: "/v1/customer-portal/subscriptions/", Operation: "PortalListSubscriptions",
			Field: "me.subscriptions", Params: []fastapi.Param{
				Page(), Limit(),
				Sorting("started_at", "amount", "status", "organization", "product"),
				Filter("product_id", "productId", fastapi.UUID4{}),
				Query("active", "active", fastapi.Nullable{Schema: fastapi.Bool{}}),
				Query("query", "query", fastapi.Nullable{Schema: fastapi.String{}}),
			}},
		{Method: http.MethodGet, Path: "/v1/customer-portal/seats/subscriptions", Operation: "PortalListClaimedSubscriptions",
			Field: "me.claimedSeatSubscriptions", Params: []fastapi.Param{Page(), Limit()}},
	}
}

// subscriptionStatus is the SubscriptionStatus enum.
func subscriptionStatus() fastapi.Enum {
	return fastapi.Enum{Name: "SubscriptionStatus", Values: []string{"incomplete", "incomplete_expired", "trialing", "active",
		"past_due", "canceled", "unpaid", "paused"}}
}
