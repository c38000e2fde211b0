package resolvers_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// requireRefused checks that each dotted path (list indexes as numbers) has an error of its
// own and a null value, and that nothing else failed: a refused relation costs its field,
// never the rest of the response.
func requireRefused(t *testing.T, res *resolverstest.Response, paths ...string) {
	t.Helper()
	var got []string
	for _, e := range res.Errors {
		parts := make([]string, len(e.Path))
		for i, p := range e.Path {
			parts[i] = fmt.Sprint(p)
		}
		got = append(got, strings.Join(parts, "."))
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(paths))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error paths (-want +got):\n%s\nbody %s", diff, res.Body)
	}
	var data any
	mustUnmarshal(t, res.Data, &data)
	for _, p := range paths {
		v := data
		for _, k := range strings.Split(p, ".") {
			switch m := v.(type) {
			case map[string]any:
				v = m[k]
			case []any:
				var i int
				fmt.Sscan(k, &i)
				v = m[i]
			}
		}
		if v != nil {
			t.Errorf("%s = %v, want null", p, v)
		}
	}
}

func TestPortalFollowsCommerceRelationsOfItsOwnCustomer(t *testing.T) {
	t.Parallel()
	w := newCommerceWorld(t)
	w.s.Exec(t, `UPDATE organizations SET feature_settings = '{"member_model_enabled": true}' WHERE id = $1`, w.org.ID)
	owner := w.s.NewCustomerSession(t, w.org.ID, w.ann.ID)
	var memberID uuid.UUID
	w.s.Get(t, &memberID, `INSERT INTO members (organization_id, customer_id, email, role)
		VALUES ($1, $2, 'dev@example.com', 'member') RETURNING id`, w.org.ID, w.ann.ID)
	var plain struct{ CreateCustomerSession struct{ Token string } }
	w.s.Query(t, w.org.Token, `mutation($c: UUID!, $m: UUID!) { createCustomerSession(input: {customerId: $c, memberId: $m}) { token } }`,
		vars{"c": w.ann.ID, "m": memberID}, &plain)
	member := plain.CreateCustomerSession.Token

	const page = `query { me { customer { id
		subscriptions(sorting: ["started_at"]) { items { id orders { items { id } } } }
		orders(sorting: ["created_at"]) { items { id checkout { id } } }
		checkouts(sorting: ["created_at"]) { items { id order { id } subscription { id } customer { id } } } } } }`
	type meOut struct {
		Me struct {
			Customer struct {
				Subscriptions *struct {
					Items []struct {
						ID     uuid.UUID
						Orders *struct{ Items []struct{ ID uuid.UUID } }
					}
				}
				Orders *struct {
					Items []struct {
						ID       uuid.UUID
						Checkout *struct{ ID uuid.UUID }
					}
				}
				Checkouts *struct {
					Items []struct {
						ID           uuid.UUID
						Order        *struct{ ID uuid.UUID }
						Subscription *struct{ ID uuid.UUID }
						Customer     *struct{ ID uuid.UUID }
					}
				}
			}
		}
	}

	t.Run("an owner follows the customer's subscriptions, orders and checkouts", func(t *testing.T) {
		var out meOut
		w.s.Query(t, owner, page, nil, &out)
		c := out.Me.Customer
		if c.Subscriptions == nil || len(c.Subscriptions.Items) != 2 || c.Subscriptions.Items[0].ID != w.ann1.subscription ||
			c.Subscriptions.Items[0].Orders == nil || len(c.Subscriptions.Items[0].Orders.Items) != 1 ||
			c.Subscriptions.Items[0].Orders.Items[0].ID != w.ann1.order {
			t.Errorf("subscriptions %+v", c.Subscriptions)
		}
		if c.Orders == nil || len(c.Orders.Items) != 3 || c.Orders.Items[0].Checkout == nil ||
			c.Orders.Items[0].Checkout.ID != w.ann1.checkout || c.Orders.Items[2].Checkout != nil {
			t.Errorf("orders %+v", c.Orders)
		}
		if c.Checkouts == nil || len(c.Checkouts.Items) != 3 {
			t.Fatalf("checkouts %+v", c.Checkouts)
		}
		first := c.Checkouts.Items[0]
		if first.ID != w.ann1.checkout || first.Order == nil || first.Order.ID != w.ann1.order ||
			first.Subscription == nil || first.Subscription.ID != w.ann1.subscription || first.Customer == nil || first.Customer.ID != w.ann.ID {
			t.Errorf("first checkout %+v", first)
		}
	})
	t.Run("a plain member follows the subscriptions only; billing relations are refused field by field", func(t *testing.T) {
		res := w.s.Do(t, member, page, nil)
		requireRefused(t, res, "me.customer.subscriptions.items.0.orders", "me.customer.subscriptions.items.1.orders",
			"me.customer.orders", "me.customer.checkouts")
		var out meOut
		mustUnmarshal(t, res.Data, &out)
		if s := out.Me.Customer.Subscriptions; s == nil || len(s.Items) != 2 {
			t.Errorf("subscriptions %+v", s)
		}
	})
	t.Run("relations that reach other customers are refused to the portal", func(t *testing.T) {
		res := w.s.Do(t, owner, `{ me { subscriptions { items { id product { id orders { items { id } }
			subscriptions { items { id } } } } } } }`, nil)
		requireRefused(t, res, "me.subscriptions.items.0.product.orders", "me.subscriptions.items.0.product.subscriptions",
			"me.subscriptions.items.1.product.orders", "me.subscriptions.items.1.product.subscriptions")
	})
	t.Run("another customer's checkout opened by its secret does not open its relations", func(t *testing.T) {
		res := w.s.Do(t, owner, `query($s: String!) { checkoutByClientSecret(clientSecret: $s) { id
			order { id } subscription { id } customer { id } } }`, vars{"s": w.bob1.secret})
		requireRefused(t, res, "checkoutByClientSecret.order", "checkoutByClientSecret.subscription",
			"checkoutByClientSecret.customer")
		var out struct{ CheckoutByClientSecret struct{ ID uuid.UUID } }
		mustUnmarshal(t, res.Data, &out)
		if out.CheckoutByClientSecret.ID != w.bob1.checkout {
			t.Errorf("the checkout itself did not survive: %s", res.Data)
		}
	})
	t.Run("its own checkout opened by its secret does", func(t *testing.T) {
		var out struct {
			CheckoutByClientSecret struct{ Order, Subscription, Customer struct{ ID uuid.UUID } }
		}
		w.s.Query(t, owner, `query($s: String!) { checkoutByClientSecret(clientSecret: $s) {
			order { id } subscription { id } customer { id } } }`, vars{"s": w.ann2.secret}, &out)
		c := out.CheckoutByClientSecret
		if c.Order.ID != w.ann2.order || c.Subscription.ID != w.ann2.subscription || c.Customer.ID != w.ann.ID {
			t.Errorf("relations %+v", c)
		}
	})
	t.Run("a buyer with only the secret reaches none of its relations", func(t *testing.T) {
		res := w.s.Do(t, "", `query($s: String!) { checkoutByClientSecret(clientSecret: $s) { id
			order { id } subscription { id } customer { id } } }`, vars{"s": w.ann2.secret})
		requireRefused(t, res, "checkoutByClientSecret.order", "checkoutByClientSecret.subscription",
			"checkoutByClientSecret.customer")
	})
	t.Run("another organization's token with every scope reaches none of its relations either", func(t *testing.T) {
		other := w.s.NewOrg(t, resolverstest.AllScopes)
		res := w.s.Do(t, other.Token, `query($s: String!) { checkoutByClientSecret(clientSecret: $s) { id
			order { id } subscription { id } customer { id paymentMethods { id } } } }`, vars{"s": w.ann2.secret})
		requireRefused(t, res, "checkoutByClientSecret.order", "checkoutByClientSecret.subscription",
			"checkoutByClientSecret.customer")
	})
}
