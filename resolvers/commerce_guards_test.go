package resolvers_test

import (
	"testing"

	"github.com/google/uuid"
)

// TestOrderAndSubscriptionRelationsAreGuarded covers the @relation guards of Order.customer,
// Order.product, Order.subscription, Subscription.customer and Subscription.product. A token
// follows each with its target's scopes or with the scopes of the object it leaves, since
// upstream's order and subscription bodies embed them for the route's scope alone; a portal
// session follows them from its own customer's objects, and a subscription's product from any
// subscription of its organization it reached.
func TestOrderAndSubscriptionRelationsAreGuarded(t *testing.T) {
	t.Parallel()
	w := newCommerceWorld(t)
	const orderDoc = `query($id: UUID!) { order(id: $id) { id customer { id } product { id }
		subscription { id customer { id } product { id } } } }`
	for _, c := range []struct {
		name, scope string
		refused     []string
	}{
		{"orders:read follows what the order body embeds, not the subscription's own relations", "orders:read",
			[]string{"order.subscription.customer", "order.subscription.product"}},
		{"orders:read with customers:read and products:read follows them all", "orders:read customers:read products:read", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := w.s.Do(t, w.s.NewToken(t, w.org.ID, c.scope), orderDoc, vars{"id": w.ann1.order})
			requireRefused(t, res, c.refused...)
			var out struct {
				Order struct {
					Customer, Product struct{ ID uuid.UUID }
					Subscription      struct{ ID uuid.UUID }
				}
			}
			mustUnmarshal(t, res.Data, &out)
			o := out.Order
			if o.Customer.ID != w.ann.ID || o.Product.ID != w.plan || o.Subscription.ID != w.ann1.subscription {
				t.Errorf("order relations %+v", o)
			}
		})
	}
	t.Run("subscriptions:read follows what the subscription body embeds", func(t *testing.T) {
		var out struct {
			Subscription struct{ Customer, Product struct{ ID uuid.UUID } }
		}
		w.s.Query(t, w.s.NewToken(t, w.org.ID, "subscriptions:read"), `query($id: UUID!) { subscription(id: $id) {
			customer { id } product { id } } }`, vars{"id": w.bob1.subscription}, &out)
		if out.Subscription.Customer.ID != w.bob.ID || out.Subscription.Product.ID != w.plan {
			t.Errorf("subscription relations %+v", out.Subscription)
		}
	})

	owner := w.s.NewCustomerSession(t, w.org.ID, w.ann.ID)
	t.Run("a customer session follows them from its own orders and subscriptions", func(t *testing.T) {
		var out struct {
			Me struct {
				Orders struct {
					Items []struct {
						Customer     struct{ ID uuid.UUID }
						Product      *struct{ ID uuid.UUID }
						Subscription *struct{ Customer, Product struct{ ID uuid.UUID } }
					}
				}
			}
		}
		w.s.Query(t, owner, `{ me { orders(limit: 100) { items { customer { id } product { id }
			subscription { customer { id } product { id } } } } } }`, nil, &out)
		if len(out.Me.Orders.Items) != 3 {
			t.Fatalf("%d orders, want 3", len(out.Me.Orders.Items))
		}
		subscriptions := 0
		for _, o := range out.Me.Orders.Items {
			if o.Customer.ID != w.ann.ID || o.Product == nil {
				t.Errorf("order %+v", o)
			}
			if s := o.Subscription; s != nil {
				subscriptions++
				if s.Customer.ID != w.ann.ID || s.Product.ID != w.plan {
					t.Errorf("subscription %+v", s)
				}
			}
		}
		if subscriptions != 2 {
			t.Errorf("%d orders with their subscription, want 2", subscriptions)
		}
	})
	t.Run("a seat holder of another customer's subscription sees its product, never its customer", func(t *testing.T) {
		w.s.Exec(t, `INSERT INTO customer_seats (organization_id, subscription_id, status, customer_id, claimed_at)
			VALUES ($1, $2, 'claimed', $3, now())`, w.org.ID, w.bob1.subscription, w.ann.ID)
		res := w.s.Do(t, owner, `{ me { claimedSeatSubscriptions { items { id product { id } customer { id } } } } }`, nil)
		requireRefused(t, res, "me.claimedSeatSubscriptions.items.0.customer")
		var out struct {
			Me struct {
				ClaimedSeatSubscriptions struct {
					Items []struct {
						ID      uuid.UUID
						Product struct{ ID uuid.UUID }
					}
				}
			}
		}
		mustUnmarshal(t, res.Data, &out)
		items := out.Me.ClaimedSeatSubscriptions.Items
		if len(items) != 1 || items[0].ID != w.bob1.subscription || items[0].Product.ID != w.plan {
			t.Errorf("claimed subscriptions %+v", items)
		}
	})
}
