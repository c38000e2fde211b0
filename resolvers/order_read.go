package resolvers

import (
	"context"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

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

// order reads one order of the caller's organizations, with the relations the query
// selects on it (an order page shows them all: GET /v1/orders/{id} embeds them).
func (r *Resolver) order(ctx context.Context, id uuid.UUID) (*storage.Order, error) {
	o, rels, err := storage.GetOrderWith(ctx, r.db, organizations(ctx), nil, id, orderWith(selectedFields(ctx, "Order")))
	if err != nil {
		return nil, notFoundOr(err, "")
	}
	primeOrderRelations(ctx, []*storage.Order{o}, []storage.OrderRelations{rels})
	return o, nil
}

// ordersPage lists the organizations' orders with upstream's filters and sorting.
func (r *Resolver) ordersPage(ctx context.Context, a listArgs, f *model.OrderFilter) (*model.OrderPage, error) {
	return r.orderPage(ctx, a, orderSorts, orderFilterOf(f), storage.OrderWith{})
}

// orderFilterOf turns the GraphQL filter into the storage one.
func orderFilterOf(f *model.OrderFilter) storage.OrderListFilter {
	if f == nil {
		return storage.OrderListFilter{}
	}
	return storage.OrderListFilter{OrganizationIDs: f.OrganizationID, ProductIDs: f.ProductID,
		ProductBillingTypes: billingTypes(f.ProductBillingType), DiscountIDs: f.DiscountID,
		CustomerIDs: f.CustomerID, ExternalCustomerIDs: f.ExternalCustomerID, CheckoutIDs: f.CheckoutID,
		SubscriptionIDs: f.SubscriptionID, Statuses: f.Status, CreatedAfter: f.CreatedAfter,
		CreatedBefore: f.CreatedBefore, Metadata: metadataOf(f.Metadata)}
}

// portalOrdersPage lists the session customer's orders, drafts included, with the
// relations the query selects on them (a portal page of orders is one customer's, so their
// relations are few and small); @billing on the field has checked the member's role.
func (r *Resolver) portalOrdersPage(ctx context.Context, me *storage.Me, a listArgs, f *model.PortalOrderFilter) (*model.OrderPage, error) {
	lf := storage.OrderListFilter{CustomerID: &me.Customer.ID}
	if f != nil {
		lf.ProductIDs, lf.ProductBillingTypes = f.ProductID, billingTypes(f.ProductBillingType)
		lf.SubscriptionIDs, lf.Query = f.SubscriptionID, f.Query
	}
	return r.orderPage(ctx, a, portalOrderSorts, lf, orderWith(selectedItemFields(ctx, "OrderPage", "Order")))
}

// orderPage runs a list carrying the relations with asks for, and notes its orders as read
// together, so that the relations it did not carry load in one statement each.
func (r *Resolver) orderPage(ctx context.Context, a listArgs, columns map[string]string, f storage.OrderListFilter,
	with storage.OrderWith) (*model.OrderPage, error) {
	w, sorts, err := a.windowAndSorts(columns)
	if err != nil {
		return nil, err
	}
	w = selectionWindow[storage.Order](ctx, w)
	p, rels, err := storage.ListOrdersWith(ctx, r.db, organizations(ctx), f, sorts, w, with)
	if err != nil {
		return nil, cursorErr(err, a)
	}
	record(ctx, p.Items)
	primeOrderRelations(ctx, p.Items, rels)
	return orderPageOf(p, w), nil
}

// customerOrders is Customer.orders: a window of each customer's orders of the level, in
// one statement.
func (r *Resolver) customerOrders(ctx context.Context, c *storage.Customer, a listArgs, f *model.OrderFilter) (*model.OrderPage, error) {
	return orderWindow(ctx, r, "Customer.orders", c, func(c *storage.Customer) uuid.UUID { return c.ID },
		storage.OrderWindowsByCustomers, a, f)
}

// subscriptionOrders is Subscription.orders: a window of each subscription's orders of the
// level, in one statement.
func (r *Resolver) subscriptionOrders(ctx context.Context, s *storage.Subscription, a listArgs, f *model.OrderFilter) (*model.OrderPage, error) {
	return orderWindow(ctx, r, "Subscription.orders", s, func(s *storage.Subscription) uuid.UUID { return s.ID },
		storage.OrderWindowsBySubscriptions, a, f)
}

// productOrders is Product.orders: a window of each product's orders of the level, in one
// statement.
func (r *Resolver) productOrders(ctx context.Context, p *storage.Product, a listArgs, f *model.OrderFilter) (*model.OrderPage, error) {
	return orderWindow(ctx, r, "Product.orders", p, func(p *storage.Product) uuid.UUID { return p.ID },
		storage.OrderWindowsByProducts, a, f)
}

// orderWindows reads one window of orders per parent.
type orderWindows func(context.Context, sqlx.ExtContext, []uuid.UUID, []uuid.UUID,
	storage.OrderListFilter, []storage.Sort, storage.Window) ([]storage.Paged[*storage.Order], error)

// orderWindow is a paginated order relation named name: obj's window, read with the windows
// of every parent of its level by fetch, with the root list's filters and sorting.
func orderWindow[P any](ctx context.Context, r *Resolver, name string, obj *P, key func(*P) uuid.UUID,
	fetch orderWindows, a listArgs, f *model.OrderFilter) (*model.OrderPage, error) {
	w, sorts, err := a.windowAndSorts(orderSorts)
	if err != nil {
		return nil, err
	}
	lf, orgs := orderFilterOf(f), organizations(ctx)
	l, err := windowsOf(ctx, name, []any{a.key(), f}, &w, func(ctx context.Context, ids []uuid.UUID) ([]storage.Paged[*storage.Order], error) {
		return fetch(ctx, r.db, orgs, ids, lf, sorts, w)
	})
	if err != nil {
		return nil, err
	}
	p, err := related(ctx, l, obj, key)
	if err != nil {
		return nil, cursorErr(err, a)
	}
	return orderPageOf(p, w), nil
}

// orderPageOf is the GraphQL page of a window of orders.
func orderPageOf(p storage.Paged[*storage.Order], w storage.Window) *model.OrderPage {
	return &model.OrderPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}
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
