package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"

	"till/storage"
)

// A resolver that reads parent records looks ahead at the selection under its field: the
// to-one relations (and order lines) selected there are read in the parent's own statement
// (storage.OrderWith) and handed to the loaders under the keys the relation fields load, so
// those fields cost no statement. The relation fields still run, guards (@relation)
// included, exactly as when their loader reads; only the statement is saved. What the query
// does not select is not read.

// selectedFields names the fields the query selects on the object that the field being
// resolved returns, an object of GraphQL type typ; fragments and @skip/@include count as
// the executor counts them.
func selectedFields(ctx context.Context, typ string) map[string]bool {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return nil
	}
	return fieldNames(ctx, fc.Field.Selections, typ)
}

// selectedItemFields names the fields the query selects on the items (of GraphQL type item)
// of the page (of type page) that the field being resolved returns.
func selectedItemFields(ctx context.Context, page, item string) map[string]bool {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return nil
	}
	out := map[string]bool{}
	for _, f := range graphql.CollectFields(graphql.GetOperationContext(ctx), fc.Field.Selections, []string{page}) {
		if f.Name == "items" {
			for name := range fieldNames(ctx, f.Selections, item) {
				out[name] = true
			}
		}
	}
	return out
}

// fieldNames names the fields of sel on an object of type typ.
func fieldNames(ctx context.Context, sel ast.SelectionSet, typ string) map[string]bool {
	out := map[string]bool{}
	for _, f := range graphql.CollectFields(graphql.GetOperationContext(ctx), sel, []string{typ}) {
		out[f.Name] = true
	}
	return out
}

// orderWith is what a read of orders carries for a selection on Order.
func orderWith(sel map[string]bool) storage.OrderWith {
	return storage.OrderWith{Customer: sel["customer"], Product: sel["product"], Discount: sel["discount"],
		Subscription: sel["subscription"], Items: sel["items"]}
}

// primeOrderRelations hands the loaders the relations read with orders (rels aligned with
// orders), under the keys Order's relation fields load.
func primeOrderRelations(ctx context.Context, orders []*storage.Order, rels []storage.OrderRelations) {
	if len(rels) == 0 {
		return
	}
	ld := loaders(ctx)
	var (
		customers     = make([]*storage.Customer, 0, len(rels))
		products      = make([]*storage.Product, 0, len(rels))
		discounts     = make([]*storage.Discount, 0, len(rels))
		subscriptions = make([]*storage.Subscription, 0, len(rels))
		items         []*storage.OrderItem
	)
	for i, o := range orders {
		r := rels[i]
		customers, products = append(customers, r.Customer), append(products, r.Product)
		discounts, subscriptions = append(discounts, r.Discount), append(subscriptions, r.Subscription)
		if r.Items != nil {
			ld.OrderItemsByOrder.prime(ctx, o.ID, r.Items)
			items = append(items, r.Items...)
		}
	}
	primeLevel(ctx, ld.Customer, customers, func(c *storage.Customer) uuid.UUID { return c.ID })
	primeLevel(ctx, ld.Product, products, func(p *storage.Product) uuid.UUID { return p.ID })
	primeLevel(ctx, ld.Discount, discounts, func(d *storage.Discount) uuid.UUID { return d.ID })
	primeLevel(ctx, ld.Subscription, subscriptions, func(s *storage.Subscription) uuid.UUID { return s.ID })
	record(ctx, items)
}

// primeLevel hands l the records one statement carried (nil where none), each once by its
// id, and notes them as read together, as l's own batch would have: their relations then
// load in one statement per level, as everywhere.
func primeLevel[T any](ctx context.Context, l *loader[*T], recs []*T, id func(*T) uuid.UUID) {
	seen := make(map[uuid.UUID]bool, len(recs))
	level := make([]*T, 0, len(recs))
	for _, r := range recs {
		if r == nil || seen[id(r)] {
			continue
		}
		seen[id(r)] = true
		l.prime(ctx, id(r), r)
		level = append(level, r)
	}
	record(ctx, level)
}
