package rest

import "net/http"

// subscriptionRoutes serve subscriptions: organization and portal lists, and subscriptions with a claimed seat.
func subscriptionRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/subscriptions/", Operation: "ListSubscriptions", Field: "subscriptions",
			Params: []Param{
				Page(), Limit(),
				Sorting("customer", "status", "started_at", "current_period_end", "ended_at", "ends_at", "amount",
					"product", "discount"),
				Metadata(),
				Filter("organization_id", "organizationId", UUID4{}),
				Filter("product_id", "productId", UUID4{}),
				Filter("customer_id", "customerId", UUID4{}),
				Filter("external_customer_id", "externalCustomerId", String{}),
				Filter("discount_id", "discountId", UUID4{}),
				Query("active", "active", Nullable{Schema: Bool{}}),
				Filter("status", "status", subscriptionStatus()),
				Query("cancel_at_period_end", "cancelAtPeriodEnd", Nullable{Schema: Bool{}}),
				Filter("customer_cancellation_reason", "customerCancellationReason", Enum{Name: "CustomerCancellationReason",
					Values: []string{"customer_service", "low_quality", "missing_features", "switched_service",
						"too_complex", "too_expensive", "unused", "other"}}),
				Query("canceled_at_after", "canceledAtAfter", Nullable{Schema: DateTime{}}),
				Query("canceled_at_before", "canceledAtBefore", Nullable{Schema: DateTime{}}),
				Query("started_after", "startedAfter", Nullable{Schema: DateTime{}}),
				Query("started_before", "startedBefore", Nullable{Schema: DateTime{}}),
			}},
		{Method: http.MethodGet, Path: "/v1/customer-portal/subscriptions/", Operation: "PortalListSubscriptions",
			Field: "me.subscriptions", Params: []Param{
				Page(), Limit(),
				Sorting("started_at", "amount", "status", "organization", "product"),
				Filter("product_id", "productId", UUID4{}),
				Query("active", "active", Nullable{Schema: Bool{}}),
				Query("query", "query", Nullable{Schema: String{}}),
			}},
		{Method: http.MethodGet, Path: "/v1/customer-portal/seats/subscriptions", Operation: "PortalListClaimedSubscriptions",
			Field: "me.claimedSeatSubscriptions", Params: []Param{Page(), Limit()}},
	}
}

// subscriptionStatus is the SubscriptionStatus enum.
func subscriptionStatus() Enum {
	return Enum{Name: "SubscriptionStatus", Values: []string{"incomplete", "incomplete_expired", "trialing", "active",
		"past_due", "canceled", "unpaid", "paused"}}
}
