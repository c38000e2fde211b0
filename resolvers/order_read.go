package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"

	"till/graph/model"
	"till/storage"
)

// orderSorts whitelists the sorting of GET /v1/orders/: status sorts by its rank
// (draft < pending < paid < partially_refunded < refunded < void), amount and net_amount
// both by net_amount, customer by email, product and discount by name.
var orderSorts = storage.OrderSortColumns

// portalOrderSorts whitelists the sorting of GET /v1/customer-portal/orders/.
var portalOrderSorts = map[string]string{
	"created_at":   storage.OrderSortColumns["created_at"],
	"amount":       storage.OrderSortColumns["amount"],
	"net_amount":   storage.OrderSortColumns["net_amount"],
	"product":      storage.OrderSortColumns["product"],
	"subscription": storage.OrderSortColumns["subscription"],
}

// order reads one order of the caller's organizations.
func (r *Resolver) order(ctx context.Context, id uuid.UUID) (*storage.Order, error) {
	o, err := storage.GetOrder(ctx, r.DB, organizations(ctx), nil, id)
	return o, notFoundOr(err, "")
}

// ordersPage lists the organizations' orders with upstream's filters and sorting.
func (r *Resolver) ordersPage(ctx context.Context, page, limit *int, sorting []string, f *model.OrderFilter) (*model.OrderPage, error) {
	var lf storage.OrderListFilter
	if f != nil {
		lf = storage.OrderListFilter{OrganizationIDs: f.OrganizationID, ProductIDs: f.ProductID,
			ProductBillingTypes: billingTypes(f.ProductBillingType), DiscountIDs: f.DiscountID,
			CustomerIDs: f.CustomerID, ExternalCustomerIDs: f.ExternalCustomerID, CheckoutIDs: f.CheckoutID,
			SubscriptionIDs: f.SubscriptionID, Statuses: f.Status, CreatedAfter: f.CreatedAfter,
			CreatedBefore: f.CreatedBefore, Metadata: metadataOf(f.Metadata)}
	}
	return r.orderPage(ctx, page, limit, sorting, orderSorts, lf)
}

// portalOrdersPage lists the session customer's orders, drafts included; @billing on the
// field has checked the member's role.
func (r *Resolver) portalOrdersPage(ctx context.Context, me *model.Me, page, limit *int, sorting []string, f *model.PortalOrderFilter) (*model.OrderPage, error) {
	lf := storage.OrderListFilter{CustomerID: &me.Customer.ID}
	if f != nil {
		lf.ProductIDs, lf.ProductBillingTypes = f.ProductID, billingTypes(f.ProductBillingType)
		lf.SubscriptionIDs, lf.Query = f.SubscriptionID, f.Query
	}
	return r.orderPage(ctx, page, limit, sorting, portalOrderSorts, lf)
}

// orderPage runs a list and loads, for the whole page at once, the relations the operation
// selects, so a page costs the same number of statements whatever its size.
func (r *Resolver) orderPage(ctx context.Context, page, limit *int, sorting []string, columns map[string]string, f storage.OrderListFilter) (*model.OrderPage, error) {
	p, sorts, err := pageAndSorts(page, limit, sorting, columns)
	if err != nil {
		return nil, err
	}
	items, total, err := storage.ListOrders(ctx, r.DB, organizations(ctx), f, sorts, p)
	if err != nil {
		return nil, err
	}
	if err := r.primeOrders(ctx, items); err != nil {
		return nil, err
	}
	return &model.OrderPage{Items: items, Pagination: pagination(total, p)}, nil
}

// primeOrders loads each selected relation of a page of orders with one statement.
func (r *Resolver) primeOrders(ctx context.Context, orders []*storage.Order) error {
	var ids, customers, products, productOrgs, discounts, subscriptions []uuid.UUID
	for _, o := range orders {
		ids, customers = append(ids, o.ID), append(customers, o.CustomerID)
		if o.ProductID != nil {
			products, productOrgs = append(products, *o.ProductID), append(productOrgs, o.OrganizationID)
		}
		if o.DiscountID != nil {
			discounts = append(discounts, *o.DiscountID)
		}
		if o.SubscriptionID != nil {
			subscriptions = append(subscriptions, *o.SubscriptionID)
		}
	}
	l := loaders(ctx)
	items := selection{"OrderPage", "items"}
	product := selection{"Order", "product"}
	// prices and wirePrices (the /v1 spelling) read the same loader: prime it for either.
	prices := []selection{items, product, {"Product", "prices"}}
	if !selects(ctx, graphql.CollectFieldsCtx(ctx, []string{"OrderPage"}), prices) {
		prices[2].field = "wirePrices"
	}
	for _, err := range []error{
		prime(ctx, r.DB, l.Customer, storage.CustomersByIDs, customers, items, selection{"Order", "customer"}),
		prime(ctx, r.DB, l.Product, storage.ProductsByIDs, products, items, product),
		prime(ctx, r.DB, l.PricesByProduct, storage.PricesByProducts, products, prices...),
		prime(ctx, r.DB, l.BenefitsByProduct, storage.ProductBenefitsByProducts, products, items, product, selection{"Product", "benefits"}),
		prime(ctx, r.DB, l.Organization, storage.OrganizationsByIDs, productOrgs, items, product, selection{"Product", "organization"}),
		prime(ctx, r.DB, l.Discount, storage.DiscountsByIDs, discounts, items, selection{"Order", "discount"}),
		prime(ctx, r.DB, l.Subscription, storage.SubscriptionsByIDs, subscriptions, items, selection{"Order", "subscription"}),
		prime(ctx, r.DB, l.OrderItemsByOrder, storage.OrderItemsByOrders, ids, items, selection{"Order", "items"}),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// billingTypes turns the GraphQL enum values into their wire strings.
func billingTypes(in []model.ProductBillingType) []string {
	out := make([]string, len(in))
	for i, t := range in {
		out[i] = string(t)
	}
	return out
}

// refundableAmount is what can still be refunded before taxes, as upstream computes it:
// the net amount plus any applied balance, minus refunds, never negative.
func refundableAmount(o *storage.Order) int {
	return int(max(0, o.NetAmount+o.AppliedBalanceAmount-o.RefundedAmount))
}

// refundableTaxAmount is the tax that a full refund of the rest would return.
func refundableTaxAmount(o *storage.Order) int {
	return int(max(0, o.TaxAmount-o.RefundedTaxAmount))
}
