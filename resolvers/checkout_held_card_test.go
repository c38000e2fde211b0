package resolvers_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/internal/payment"
)

// heldCard is a subWorld where a stranger, with no token, bought the monthly plan by typing
// the world's customer's email and paying with a card of their own.
type heldCard struct {
	*subWorld
	card      uuid.UUID // the stranger's card
	strangers uuid.UUID // the subscription the stranger's checkout created
	other     uuid.UUID // the customer's own subscription, on its own card
}

func newHeldCard(t *testing.T) heldCard {
	t.Helper()
	w := newSubWorld(t, payment.TokenVisa)
	h := heldCard{subWorld: w, other: w.subscribePlan(t).ID}
	c := ckNewCheckout(t, w.s, w.org.Token, vars{"products": []uuid.UUID{w.plan.ID}})
	in := ckStranger(c.ClientSecret, *w.customer.Email)
	in["paymentToken"] = payment.TokenMastercard
	var out struct{ ConfirmCheckout ckCheckout }
	w.s.Query(t, "", ckConfirm, vars{"in": in}, &out)
	got := out.ConfirmCheckout
	if got.Status != "succeeded" || got.CustomerID == nil || *got.CustomerID != w.customer.ID || got.SubscriptionID == nil {
		t.Fatalf("stranger's checkout: status %s customer %v subscription %v", got.Status, got.CustomerID, got.SubscriptionID)
	}
	h.strangers = *got.SubscriptionID
	w.s.Get(t, &h.card, `SELECT payment_method_id FROM subscriptions WHERE id = $1`, h.strangers)
	return h
}

// cycleCharges lists the payment method and outcome of each renewal charge of a subscription.
func (h heldCard) cycleCharges(t *testing.T, subID uuid.UUID) []string {
	t.Helper()
	var rows []struct {
		Method *uuid.UUID `db:"payment_method_id"`
		Status string     `db:"status"`
		Reason *string    `db:"decline_reason"`
	}
	if err := h.s.DB.SelectContext(context.Background(), &rows, `SELECT p.payment_method_id, p.status, p.decline_reason
		FROM payments p JOIN orders o ON o.id = p.order_id
		WHERE o.subscription_id = $1 AND o.billing_reason = 'subscription_cycle' ORDER BY p.created_at, p.id`, subID); err != nil {
		t.Fatalf("reading charges: %v", err)
	}
	names := map[uuid.UUID]string{h.card: "stranger's card", h.subWorld.card: "customer's card"}
	out := []string{}
	for _, r := range rows {
		switch {
		case r.Method != nil:
			out = append(out, names[*r.Method]+" "+r.Status)
		case r.Reason != nil:
			out = append(out, "no method "+r.Status+" "+*r.Reason)
		default:
			out = append(out, "no method "+r.Status)
		}
	}
	return out
}

func TestAStrangersCardIsHeldForTheirPurchaseOnly(t *testing.T) {
	t.Parallel()
	h := newHeldCard(t)
	w := h.subWorld
	session := w.s.NewCustomerSession(t, w.org.ID, w.customer.ID)

	for _, tc := range []struct {
		name string
		list func(t *testing.T) []uuid.UUID
	}{
		{"the customer's portal", func(t *testing.T) []uuid.UUID {
			var out struct {
				Me struct{ PaymentMethods paymentMethodPage }
			}
			w.s.Query(t, session, mePaymentsDoc, nil, &out)
			return out.Me.PaymentMethods.ids()
		}},
		{"the organization's list of the customer's methods", func(t *testing.T) []uuid.UUID {
			var out struct{ PaymentMethods paymentMethodPage }
			w.s.Query(t, w.org.Token, paymentMethodsDoc, vars{"id": w.customer.ID}, &out)
			return out.PaymentMethods.ids()
		}},
		{"the customer's paymentMethods field", func(t *testing.T) []uuid.UUID {
			var out struct {
				Customer struct{ PaymentMethods []struct{ ID uuid.UUID } }
			}
			w.s.Query(t, w.org.Token, `query($id: UUID!) { customer(id: $id) { paymentMethods { id } } }`,
				vars{"id": w.customer.ID}, &out)
			ids := []uuid.UUID{}
			for _, m := range out.Customer.PaymentMethods {
				ids = append(ids, m.ID)
			}
			return ids
		}},
	} {
		t.Run(tc.name+" lists the customer's own card and not the stranger's", func(t *testing.T) {
			if diff := cmp.Diff([]uuid.UUID{w.card}, tc.list(t)); diff != "" {
				t.Errorf("listed methods (-want +got):\n%s", diff)
			}
		})
	}

	bound := ckNewCheckout(t, w.s, w.org.Token, vars{"products": []uuid.UUID{w.plan.ID}, "customerId": w.customer.ID})
	for _, tc := range []struct {
		name, token, doc string
		vars             vars
		check            func(t *testing.T, e gqlError)
	}{
		{"a seller checkout bound to the customer cannot pay with it", w.org.Token, ckConfirm,
			vars{"in": vars{"id": bound.ID, "paymentMethodId": h.card}}, func(t *testing.T, e gqlError) {
				wantInvalid(t, e, fieldErr{Type: "value_error", Loc: []any{"input", "paymentMethodId"},
					Msg: "Payment method does not exist.", Input: h.card.String()})
			}},
		{"the customer's portal cannot make it the default", session, portalUpdateDoc,
			vars{"input": vars{"defaultPaymentMethodId": h.card}}, func(t *testing.T, e gqlError) {
				wantInvalid(t, e, fieldErr{Type: "invalid", Loc: []any{"input", "defaultPaymentMethodId"},
					Msg: "Payment method not found.", Input: h.card.String()})
			}},
		{"the customer's portal cannot delete it", session, `mutation($id: UUID!) { portalDeletePaymentMethod(id: $id) { id } }`,
			vars{"id": h.card}, func(t *testing.T, e gqlError) { wantError(t, e, "NOT_FOUND", "ResourceNotFound") }},
		{"the organization cannot delete it", w.org.Token, `mutation($id: UUID!) { deletePaymentMethod(id: $id) { id } }`,
			vars{"id": h.card}, func(t *testing.T, e gqlError) { wantError(t, e, "NOT_FOUND", "ResourceNotFound") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, w.s.QueryError(t, tc.token, tc.doc, tc.vars))
			var deleted bool
			w.s.Get(t, &deleted, `SELECT deleted_at IS NOT NULL FROM payment_methods WHERE id = $1`, h.card)
			if deleted {
				t.Error("the stranger's card was deleted")
			}
		})
	}

	t.Run("the customer's default is still its own card", func(t *testing.T) {
		var def *uuid.UUID
		w.s.Get(t, &def, `SELECT default_payment_method_id FROM customers WHERE id = $1`, w.customer.ID)
		if def == nil || *def != w.card {
			t.Errorf("default payment method = %v, want the customer's card %s", def, w.card)
		}
	})

	t.Run("a new card on a seller checkout bound to the customer is still saved as the customer's", func(t *testing.T) {
		var out struct{ ConfirmCheckout ckCheckout }
		w.s.Query(t, w.org.Token, ckConfirm, vars{"in": vars{"id": bound.ID, "paymentToken": payment.TokenVisa}}, &out)
		var card uuid.UUID
		w.s.Get(t, &card, `SELECT payment_method_id FROM subscriptions WHERE checkout_id = $1`, bound.ID)
		var list struct{ PaymentMethods paymentMethodPage }
		w.s.Query(t, w.org.Token, paymentMethodsDoc, vars{"id": w.customer.ID}, &list)
		if diff := cmp.Diff([]uuid.UUID{card, w.card}, list.PaymentMethods.ids()); diff != "" {
			t.Errorf("listed methods (-want +got):\n%s", diff)
		}
	})
}

func TestAStrangersHeldCardPaysOnlyTheSubscriptionItBought(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// before runs before the first renewal.
		before                 func(t *testing.T, h heldCard)
		wantStrangers, wantOwn []string
	}{
		{"both renew, each on its own card", func(*testing.T, heldCard) {},
			[]string{"stranger's card succeeded"}, []string{"customer's card succeeded"}},
		{"the customer's subscription without a card of the customer's does not fall back to the stranger's, even were it the default",
			func(t *testing.T, h heldCard) {
				h.s.Query(t, h.s.NewCustomerSession(t, h.org.ID, h.customer.ID), `mutation($id: UUID!) { portalDeletePaymentMethod(id: $id) { id } }`,
					vars{"id": h.subWorld.card}, nil)
				// No operation makes a held card a default; the renewal must not charge it if one did.
				h.s.Exec(t, `UPDATE customers SET default_payment_method_id = $2 WHERE id = $1`, h.customer.ID, h.card)
			},
			[]string{"stranger's card succeeded"}, []string{"no method failed no_payment_method"}},
		{"the stranger's subscription does not fall back to the customer's default once its card is gone",
			func(t *testing.T, h heldCard) {
				h.s.Exec(t, `UPDATE payment_methods SET deleted_at = now() WHERE id = $1`, h.card)
			},
			[]string{"no method failed no_payment_method"}, []string{"customer's card succeeded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHeldCard(t)
			tc.before(t, h)
			if n := h.advance(t, at(2, 28)); n != 2 {
				t.Errorf("%d renewals, want 2", n)
			}
			if diff := cmp.Diff(tc.wantStrangers, h.cycleCharges(t, h.strangers)); diff != "" {
				t.Errorf("charges of the stranger's subscription (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantOwn, h.cycleCharges(t, h.other)); diff != "" {
				t.Errorf("charges of the customer's own subscription (-want +got):\n%s", diff)
			}
		})
	}
}
