package rest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"till/internal/auth"
)

// everyScope is a scope string holding every scope.
func everyScope() string {
	all := make([]string, 0, len(auth.AllScopes()))
	for _, sc := range auth.AllScopes() {
		all = append(all, string(sc))
	}
	return strings.Join(all, " ")
}

// TestEmbeddedRelationsNeedOnlyTheRoutesScope pins what the @relation guards of Order.customer,
// Order.product, Order.subscription, Subscription.customer and Subscription.product must leave
// alone: upstream embeds those objects in its order and subscription bodies for a token holding
// only the route's scope, so a body read with that scope alone is the body read with every
// scope, its relations present.
func TestEmbeddedRelationsNeedOnlyTheRoutesScope(t *testing.T) {
	t.Parallel()
	s := newV1(t)
	orders := newOrderWorld(t, s)
	subs := newSubscriptionWorld(t, s)
	for _, c := range []struct {
		name, target, narrow string
		method, body         string
		embedded             []string
	}{
		{name: "an order read with orders:read", target: "/v1/orders/" + orders.b.ID.String(), narrow: "orders:read",
			embedded: []string{"customer", "product", "subscription"}},
		{name: "an order changed with orders:write", target: "/v1/orders/" + orders.b.ID.String(), narrow: "orders:write",
			method: http.MethodPatch, body: `{"billing_name":"Bob Ltd"}`, embedded: []string{"customer", "product", "subscription"}},
		{name: "the orders listed with orders:read", target: "/v1/orders/?sorting=created_at", narrow: "orders:read",
			embedded: []string{"customer"}},
		{name: "the subscriptions listed with subscriptions:read", target: "/v1/subscriptions/?sorting=started_at",
			narrow: "subscriptions:read", embedded: []string{"customer", "product"}},
	} {
		t.Run(c.name+" embeds its relations as with every scope", func(t *testing.T) {
			org := orders.org.ID
			if strings.HasPrefix(c.target, "/v1/subscriptions") {
				org = subs.org.ID
			}
			read := func(scope string) []byte {
				rec := s.do(t, call{method: c.method, target: c.target, body: c.body, token: s.NewToken(t, org, scope)})
				want{status: 200}.check(t, rec)
				return rec.Body.Bytes()
			}
			narrow, every := read(c.narrow), read(everyScope())
			if c.method == http.MethodPatch { // each PATCH stamps the order's modified_at anew
				narrow, every = withoutModifiedAt(t, narrow), withoutModifiedAt(t, every)
			}
			if string(narrow) != string(every) {
				t.Errorf("with %s:\n%s\nwith every scope:\n%s", c.narrow, narrow, every)
			}
			var body struct{ Items []map[string]json.RawMessage }
			if strings.Contains(c.target, "/?") {
				decodeJSON(t, narrow, &body)
			} else {
				var one map[string]json.RawMessage
				decodeJSON(t, narrow, &one)
				body.Items = append(body.Items, one)
			}
			if len(body.Items) == 0 {
				t.Fatal("no items")
			}
			for i, it := range body.Items {
				for _, k := range c.embedded {
					if string(it[k]) == "null" || len(it[k]) == 0 {
						t.Errorf("item %d: %s is %s", i, k, it[k])
					}
				}
			}
		})
	}

	t.Run("a claimed seat's subscription, another customer's, shows its product in the portal", func(t *testing.T) {
		rec := s.do(t, call{target: "/v1/customer-portal/seats/subscriptions", token: s.NewCustomerSession(t, subs.org.ID, subs.carol.ID)})
		want{status: 200}.check(t, rec)
		var body struct{ Items []map[string]json.RawMessage }
		decodeJSON(t, rec.Body.Bytes(), &body)
		if len(body.Items) != 1 || string(body.Items[0]["product"]) == "null" || !strings.Contains(string(body.Items[0]["product"]), subs.seats.ID.String()) {
			t.Errorf("got %s", rec.Body)
		}
	})
}

// withoutModifiedAt is a body with its top-level modified_at set to null.
func withoutModifiedAt(t *testing.T, body []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	decodeJSON(t, body, &m)
	m["modified_at"] = json.RawMessage("null")
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
