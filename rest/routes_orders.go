package rest

import (
	"net/http"
	"strings"
)

// orderRoutes serve orders: organization and portal lists, get, billing-details updates,
// and the invoice and receipt documents.
func orderRoutes() []Route {
	idParam := PathUUID4("id", "id")
	return []Route{
		{Method: http.MethodGet, Path: "/v1/orders/", Operation: "ListOrders", Field: "orders", Params: []Param{
			Page(), Limit(),
			Sorting("created_at", "status", "invoice_number", "amount", "net_amount", "customer", "product",
				"discount", "subscription"),
			Metadata(),
			Filter("organization_id", "organizationId", UUID4{}),
			Filter("product_id", "productId", UUID4{}),
			Filter("product_billing_type", "productBillingType", productBillingType()),
			Filter("discount_id", "discountId", UUID4{}),
			Filter("customer_id", "customerId", UUID4{}),
			Filter("external_customer_id", "externalCustomerId", String{}),
			Filter("checkout_id", "checkoutId", UUID4{}),
			Filter("subscription_id", "subscriptionId", UUID4{}),
			Filter("status", "status", Enum{Name: "OrderStatus",
				Values: []string{"draft", "pending", "paid", "refunded", "partially_refunded", "void"}}),
			Query("created_after", "createdAfter", Nullable{Schema: DateTime{}}),
			Query("created_before", "createdBefore", Nullable{Schema: DateTime{}}),
		}},
		{Method: http.MethodGet, Path: "/v1/orders/{id}", Operation: "GetOrder", Field: "order",
			Params: []Param{idParam}},
		{Method: http.MethodPatch, Path: "/v1/orders/{id}", Operation: "UpdateOrder", Field: "updateOrder",
			Params: []Param{idParam}, Body: &Body{Var: "input", Schema: orderUpdate("OrderUpdate")}},
		{Method: http.MethodPost, Path: "/v1/orders/{id}/invoice", Operation: "GenerateOrderInvoice",
			Params: []Param{idParam}, Status: http.StatusAccepted},
		{Method: http.MethodGet, Path: "/v1/orders/{id}/invoice", Operation: "OrderInvoice", Field: "orderInvoice",
			Params: []Param{idParam}},
		{Method: http.MethodGet, Path: "/v1/orders/{id}/receipt", Operation: "OrderReceipt", Field: "orderReceipt",
			Params: []Param{idParam}},
		{Method: http.MethodPost, Path: "/v1/customer-portal/orders/{id}/invoice", Operation: "PortalGenerateOrderInvoice",
			Params: []Param{idParam}, Status: http.StatusAccepted},
		{Method: http.MethodGet, Path: "/v1/customer-portal/orders/{id}/invoice", Operation: "PortalOrderInvoice",
			Field: "me.orderInvoice", Params: []Param{idParam}},
		{Method: http.MethodGet, Path: "/v1/customer-portal/orders/", Operation: "PortalListOrders", Field: "me.orders",
			Params: []Param{
				Page(), Limit(),
				Sorting("created_at", "amount", "net_amount", "product", "subscription"),
				Filter("product_id", "productId", UUID4{}),
				Filter("product_billing_type", "productBillingType", productBillingType()),
				Filter("subscription_id", "subscriptionId", UUID4{}),
				Query("query", "query", Nullable{Schema: String{}}),
			}},
		{Method: http.MethodPatch, Path: "/v1/customer-portal/orders/{id}", Operation: "PortalUpdateOrder",
			Field: "portalUpdateOrder", Params: []Param{idParam},
			Body: &Body{Var: "input", Schema: orderUpdate("CustomerOrderUpdate")}},
	}
}

// productBillingType is the ProductBillingType enum.
func productBillingType() Enum {
	return Enum{Name: "ProductBillingType", Values: []string{"one_time", "recurring"}}
}

// orderUpdate is OrderUpdate / CustomerOrderUpdate: billing name and address, both nullable
// (null clears). The address is AddressInput with its country upper-cased before it is
// checked, as upstream's BeforeValidator(str.upper) does; the use case normalises the rest.
func orderUpdate(name string) Object {
	address := addressInput()
	for i, f := range address.Fields {
		if f.Name == "country" {
			address.Fields[i].Schema = upperCase{Schema: f.Schema}
		}
	}
	return Object{Name: name, Fields: []Field{
		{Name: "billing_name", Schema: Nullable{Schema: String{}}},
		{Name: "billing_address", Schema: Nullable{Schema: address}},
	}}
}

// upperCase upper-cases a string before its schema validates it (pydantic's
// BeforeValidator(str.upper)); other values reach the schema unchanged.
type upperCase struct{ Schema Schema }

func (u upperCase) validatorName() string { return u.Schema.validatorName() }

func (u upperCase) validate(in any, loc []any) (outcome, []ValidationError) {
	if s, isString := in.(string); isString {
		in = strings.ToUpper(s)
	}
	return u.Schema.validate(in, loc)
}
