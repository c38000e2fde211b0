package rest

import (
	"net/http"

	"till/rest/fastapi"
)

// orderRoutes serve orders: organization and portal lists, get, billing-details updates,
// the invoice and receipt documents, and the portal's payment status and payment retry.
func orderRoutes() []Route {
	idParam := PathUUID4("id", "id")
	return []Route{
		{Method: http.MethodGet, Path: "/v1/orders/", Operation: "ListOrders", Field: "orders", Params: []fastapi.Param{
			Page(), Limit(),
			Sorting("created_at", "status", "invoice_number", "amount", "net_amount", "customer", "product",
				"discount", "subscription"),
			Metadata(),
			Filter("organization_id", "organizationId", fastapi.UUID4{}),
			Filter("product_id", "productId", fastapi.UUID4{}),
			Filter("product_billing_type", "productBillingType", productBillingType()),
			Filter("discount_id", "discountId", fastapi.UUID4{}),
			Filter("customer_id", "customerId", fastapi.UUID4{}),
			Filter("external_customer_id", "externalCustomerId", fastapi.String{}),
			Filter("checkout_id", "checkoutId", fastapi.UUID4{}),
			Filter("subscription_id", "subscriptionId", fastapi.UUID4{}),
			Filter("status", "status", orderStatus()),
			Query("created_after", "createdAfter", fastapi.Nullable{Schema: fastapi.DateTime{}}),
			Query("created_before", "createdBefore", fastapi.Nullable{Schema: fastapi.DateTime{}}),
		}},
		{Method: http.MethodGet, Path: "/v1/orders/{id}", Operation: "GetOrder", Field: "order",
			Params: []fastapi.Param{idParam}},
		{Method: http.MethodPatch, Path: "/v1/orders/{id}", Operation: "UpdateOrder", Field: "updateOrder",
			Params: []fastapi.Param{idParam}, Body: &fastapi.Body{Var: "input", Schema: orderUpdate("OrderUpdate")}},
		{Method: http.MethodPost, Path: "/v1/orders/{id}/invoice", Operation: "GenerateOrderInvoice",
			Params: []fastapi.Param{idParam}, Status: http.StatusAccepted},
		{Method: http.MethodGet, Path: "/v1/orders/{id}/invoice", Operation: "OrderInvoice", Field: "orderInvoice",
			Params: []fastapi.Param{idParam}},
		{Method: http.MethodGet, Path: "/v1/orders/{id}/receipt", Operation: "OrderReceipt", Field: "orderReceipt",
			Params: []fastapi.Param{idParam}},
		{Method: http.MethodPost, Path: "/v1/customer-portal/orders/{id}/invoice", Operation: "PortalGenerateOrderInvoice",
			Params: []fastapi.Param{idParam}, Status: http.StatusAccepted},
		{Method: http.MethodGet, Path: "/v1/customer-portal/orders/{id}/invoice", Operation: "PortalOrderInvoice",
			Field: "me.orderInvoice", Params: []fastapi.Param{idParam}},
		{Method: http.MethodGet, Path: "/v1/customer-portal/orders/", Operation: "PortalListOrders", Field: "me.orders",
			Params: []fastapi.Param{
				Page(), Limit(),
				Sorting("created_at", "amount", "net_amount", "product", "subscription"),
				Filter("product_id", "productId", fastapi.UUID4{}),
				Filter("product_billing_type", "productBillingType", productBillingType()),
				Filter("subscription_id", "subscriptionId", fastapi.UUID4{}),
				Query("query", "query", fastapi.Nullable{Schema: fastapi.String{}}),
			}},
		{Method: http.MethodPatch, Path: "/v1/customer-portal/orders/{id}", Operation: "PortalUpdateOrder",
			Field: "portalUpdateOrder", Params: []fastapi.Param{idParam},
			Body: &fastapi.Body{Var: "input", Schema: orderUpdate("CustomerOrderUpdate")}},
		{Method: http.MethodGet, Path: "/v1/customer-portal/orders/{id}/payment-status", Operation: "PortalOrderPaymentStatus",
			Field: "me.orderPaymentStatus", Params: []fastapi.Param{idParam}},
		// Where upstream's server differs from the published document: its 422 is documented
		// as OrderNotEligibleForRetry only, yet a body that fails validation answers
		// RequestValidationError, and neither or both of confirmation_token_id and
		// payment_method_id, or a payment method of another customer, answer
		// PaymentRetryValidationError. A declined card is no error: 200 with status "failed".
		{Method: http.MethodPost, Path: "/v1/customer-portal/orders/{id}/confirm-payment", Operation: "PortalConfirmOrderPayment",
			Field: "portalConfirmOrderPayment", Params: []fastapi.Param{idParam},
			Body: &fastapi.Body{Var: "input", Schema: fastapi.Object{Name: "CustomerOrderConfirmPayment", Fields: []fastapi.Field{
				{Name: "confirmation_token_id", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
				{Name: "payment_method_id", Schema: fastapi.Nullable{Schema: fastapi.UUID4{}}},
				{Name: "payment_processor", Schema: fastapi.Enum{Name: "PaymentProcessor", Values: []string{"stripe"}}},
			}}}},
	}
}

// orderStatus is the OrderStatus enum.
func orderStatus() fastapi.Enum {
	return fastapi.Enum{Name: "OrderStatus", Values: []string{"draft", "pending", "paid", "refunded", "partially_refunded", "void"}}
}

// productBillingType is the ProductBillingType enum.
func productBillingType() fastapi.Enum {
	return fastapi.Enum{Name: "ProductBillingType", Values: []string{"one_time", "recurring"}}
}

// orderUpdate is OrderUpdate / CustomerOrderUpdate: billing name and address, both nullable
// (null clears). The address is AddressInput with its country upper-cased before it is
// checked, as upstream's BeforeValidator(str.upper) does; the use case normalises the rest.
func orderUpdate(name string) fastapi.Object {
	address := addressInput()
	for i, f := range address.Fields {
		if f.Name == "country" {
			address.Fields[i].Schema = fastapi.UpperCase{Schema: f.Schema}
		}
	}
	return fastapi.Object{Name: name, Fields: []fastapi.Field{
		{Name: "billing_name", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
		{Name: "billing_address", Schema: fastapi.Nullable{Schema: address}},
	}}
}
