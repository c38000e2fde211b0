package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// OrderWith says which relations a read of orders carries with each order (see Prefetched):
// the ones the query about to render them selects.
type OrderWith struct {
	Customer, Product, Discount, Subscription, Items bool
}

// OrderRelations are the relations one order was read with, each exactly as its batch
// loader reads it (CustomersByIDs, ProductsByIDs, DiscountsByIDs, SubscriptionsByIDs,
// OrderItemsByOrders). A nil record was not carried or does not exist; Items is nil when
// not carried and empty when the order has none.
type OrderRelations struct {
	Customer     *Customer
	Product      *Product
	Discount     *Discount
	Subscription *Subscription
	Items        []*OrderItem
}

// orderItemsOrder is the order of an order's lines, for the loader and the prefetch alike.
const orderItemsOrder = "created_at, id"

// columns are the select expressions that carry the relations of an order aliased o.
func (w OrderWith) columns() []string {
	var out []string
	if w.Customer {
		out = append(out, prefetchOne("customer", customerColumns, "customers", "id = o.customer_id"))
	}
	if w.Product {
		out = append(out, prefetchOne("product", productColumns, "products", "id = o.product_id"))
	}
	if w.Discount {
		out = append(out, prefetchOne("discount", discountColumns, "discounts", "id = o.discount_id"))
	}
	if w.Subscription {
		out = append(out, prefetchOne("subscription", subscriptionColumns, "subscriptions", "id = o.subscription_id"))
	}
	if w.Items {
		out = append(out, prefetchMany("items", orderItemColumns, "order_items", "order_id = o.id", orderItemsOrder))
	}
	return out
}

// decoder decodes the records of one relation that the rows of one read carry, each distinct
// record once: the orders of a customer's page mostly share their customer and product.
type decoder[T any] map[string]*T

func (d decoder[T]) decode(raw []byte, loc *time.Location) (*T, error) {
	if r, ok := d[string(raw)]; ok {
		return r, nil
	}
	r, err := decodeRecord[T](raw, loc)
	if err == nil {
		d[string(raw)] = r
	}
	return r, err
}

// orderDecoders decode the relations carried by the orders of one read.
type orderDecoders struct {
	customers     decoder[Customer]
	products      decoder[Product]
	discounts     decoder[Discount]
	subscriptions decoder[Subscription]
}

func newOrderDecoders() orderDecoders {
	return orderDecoders{customers: decoder[Customer]{}, products: decoder[Product]{}, discounts: decoder[Discount]{},
		subscriptions: decoder[Subscription]{}}
}

// relationsOf decodes the relations carried with o.
func (d orderDecoders) relationsOf(o *Order, p Prefetched) (OrderRelations, error) {
	var r OrderRelations
	if p == nil {
		return r, nil
	}
	loc := sessionLocation(o.CreatedAt)
	var err error
	if r.Customer, err = d.customers.decode(p["customer"], loc); err != nil {
		return r, err
	}
	if r.Product, err = d.products.decode(p["product"], loc); err != nil {
		return r, err
	}
	if r.Discount, err = d.discounts.decode(p["discount"], loc); err != nil {
		return r, err
	}
	if r.Subscription, err = d.subscriptions.decode(p["subscription"], loc); err != nil {
		return r, err
	}
	if raw, ok := p["items"]; ok {
		r.Items, err = decodeRecords[OrderItem](raw, loc)
	}
	return r, err
}

// GetOrderWith is GetOrder carrying the relations with asks for, in the same statement.
func GetOrderWith(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, customerID *uuid.UUID, id uuid.UUID,
	with OrderWith) (*Order, OrderRelations, error) {
	l := listSQL{Columns: orderColumnsO, Extra: with.columns()}
	rows, err := scanPaged[*Order](ctx, q, `SELECT `+l.selectList(Window{})+` FROM orders o
		WHERE o.id = $1 AND o.organization_id = ANY($2) AND o.deleted_at IS NULL
		AND ($3::uuid IS NULL OR o.customer_id = $3)`, []any{id, pq.Array(orgs), customerID})
	if err != nil {
		return nil, OrderRelations{}, mapErr(err)
	}
	if len(rows) == 0 {
		return nil, OrderRelations{}, ErrNotFound
	}
	rels, err := newOrderDecoders().relationsOf(rows[0].item, rows[0].prefetched)
	return rows[0].item, rels, err
}

// ListOrdersWith is ListOrders carrying the relations with asks for with each order, in the
// same statement; the relations are aligned with the page's items.
func ListOrdersWith(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f OrderListFilter, sorts []Sort, w Window,
	with OrderWith) (Paged[*Order], []OrderRelations, error) {
	l := orderList(orgs, f, sorts)
	l.Extra = with.columns()
	p, err := listWindow[*Order](ctx, q, l, w)
	if err != nil || p.Prefetched == nil {
		return p, nil, err
	}
	rels, d := make([]OrderRelations, len(p.Items)), newOrderDecoders()
	for i, o := range p.Items {
		if rels[i], err = d.relationsOf(o, p.Prefetched[i]); err != nil {
			return p, nil, err
		}
	}
	p.Prefetched = nil
	return p, rels, nil
}

// SubscriptionWith says which relations a read of subscriptions carries with each
// subscription: the ones the query about to render them selects.
type SubscriptionWith struct {
	Product bool
}

// SubscriptionRelations are the relations one subscription was read with, each exactly as
// its batch loader reads it (ProductsByIDs); nil when not carried.
type SubscriptionRelations struct {
	Product *Product
}

// ListSubscriptionsWith is ListSubscriptions carrying the relations with asks for with each
// subscription, in the same statement; the relations are aligned with the page's items.
func ListSubscriptionsWith(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f SubscriptionListFilter,
	sorts []Sort, w Window, with SubscriptionWith) (Paged[*Subscription], []SubscriptionRelations, error) {
	l := subscriptionList(orgs, f, sorts)
	if with.Product {
		l.Extra = []string{prefetchOne("product", productColumns, "products", "id = s.product_id")}
	}
	p, err := listWindow[*Subscription](ctx, q, l, w)
	if err != nil || p.Prefetched == nil {
		return p, nil, err
	}
	rels, products := make([]SubscriptionRelations, len(p.Items)), decoder[Product]{}
	for i, s := range p.Items {
		if rels[i].Product, err = products.decode(p.Prefetched[i]["product"], sessionLocation(s.CreatedAt)); err != nil {
			return p, nil, err
		}
	}
	p.Prefetched = nil
	return p, rels, nil
}
