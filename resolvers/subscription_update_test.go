package resolvers_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/internal/payment"
)

func TestUpdateSubscriptionProduct(t *testing.T) {
	t.Parallel()
	w := newSubWorld(t, payment.TokenVisa)
	teamBenefit := newBenefit(t, w.s, w.org.Token, "Team workspace")
	team := createProduct(t, w.s, w.org.Token, vars{"name": "Team plan", "recurringInterval": "month",
		"benefitIds": []uuid.UUID{teamBenefit.ID}, "prices": []vars{{"amountType": "fixed", "priceAmount": 3000}}})

	t.Run("applied now it switches product, prices, amount and benefits", func(t *testing.T) {
		s := w.subscribePlan(t)
		got := w.mutate(t, w.org.Token, "updateSubscriptionProduct", vars{"id": s.ID, "productId": team.ID,
			"prorationBehavior": "prorate"})
		if got.ProductID != team.ID || got.Amount != 3000 || len(got.Prices) != 1 || got.Prices[0].ID != team.Prices[0].ID ||
			got.PendingUpdate != nil || !got.CurrentPeriodEnd.Equal(s.CurrentPeriodEnd) {
			t.Errorf("changed now: %+v", got)
		}
		if diff := cmp.Diff([]uuid.UUID{teamBenefit.ID}, w.grantedBenefits(t, s.ID)); diff != "" {
			t.Errorf("granted benefits (-want +got):\n%s", diff)
		}
		events := w.events(t, s.ID)
		if events[len(events)-1] != "subscription.updated" {
			t.Errorf("events: %v", events)
		}
	})

	t.Run("at the next period it waits in pendingUpdate and applies at the renewal", func(t *testing.T) {
		w := newSubWorld(t, payment.TokenVisa)
		team := createProduct(t, w.s, w.org.Token, vars{"name": "Team plan", "recurringInterval": "month",
			"prices": []vars{{"amountType": "fixed", "priceAmount": 3000}}})
		s := w.subscribePlan(t)
		got := w.mutate(t, w.org.Token, "updateSubscriptionProduct", vars{"id": s.ID, "productId": team.ID,
			"prorationBehavior": "next_period"})
		if got.ProductID != w.plan.ID || got.Amount != 1000 || got.PendingUpdate == nil ||
			*got.PendingUpdate.ProductID != team.ID || !got.PendingUpdate.AppliesAt.Equal(s.CurrentPeriodEnd) {
			t.Fatalf("scheduled: %+v", got)
		}
		w.advance(t, at(2, 28))
		got = w.get(t, s.ID)
		if got.ProductID != team.ID || got.Amount != 3000 || got.PendingUpdate != nil {
			t.Errorf("after the renewal: %+v", got)
		}
		if orders := w.orders(t, s.ID); len(orders) != 1 || orders[0].TotalAmount != 3000 {
			t.Errorf("the renewal did not bill the new product: %+v", orders)
		}
	})

	t.Run("the organization's proration behavior is the default", func(t *testing.T) {
		s := w.subscribePlan(t)
		w.s.Exec(t, `UPDATE organizations SET proration_behavior = 'next_period' WHERE id = $1`, w.org.ID)
		defer w.s.Exec(t, `UPDATE organizations SET proration_behavior = 'prorate' WHERE id = $1`, w.org.ID)
		got := w.mutate(t, w.org.Token, "updateSubscriptionProduct", vars{"id": s.ID, "productId": team.ID})
		if got.ProductID != w.plan.ID || got.PendingUpdate == nil {
			t.Errorf("with next_period by default: %+v", got)
		}
	})

	stranger := w.s.NewOrg(t, "products:write")
	foreign := createProduct(t, w.s, stranger.Token, vars{"name": "Foreign plan", "recurringInterval": "month",
		"prices": []vars{{"amountType": "fixed", "priceAmount": 100}}})
	oneTime := w.s.NewProduct(t, w.org.ID, "Ebook")
	archived := createProduct(t, w.s, w.org.Token, vars{"name": "Old plan", "recurringInterval": "month",
		"prices": []vars{{"amountType": "fixed", "priceAmount": 100}}})
	w.s.Exec(t, `UPDATE products SET is_archived = true WHERE id = $1`, archived.ID)
	for _, tc := range []struct {
		name      string
		productID func(s subView) uuid.UUID
		msg       string
	}{
		{"another organization's product does not exist", func(subView) uuid.UUID { return foreign.ID }, "Product does not exist."},
		{"an unknown product does not exist", func(subView) uuid.UUID { return uuid.New() }, "Product does not exist."},
		{"a one-time product is refused", func(subView) uuid.UUID { return oneTime.ID }, "Product is not recurring."},
		{"an archived product is refused", func(subView) uuid.UUID { return archived.ID }, "Product is archived."},
		{"the current product is refused", func(s subView) uuid.UUID { return s.ProductID }, "The subscription is already on this product."},
	} {
		t.Run(tc.name+" and nothing changes", func(t *testing.T) {
			s := w.subscribePlan(t)
			before := w.s.Row(t, "subscriptions", s.ID)
			id := tc.productID(s)
			e := w.mutateError(t, w.org.Token, "updateSubscriptionProduct", vars{"id": s.ID, "productId": id})
			wantInvalid(t, e, fieldErr{Type: "value_error", Loc: []any{"input", "productId"}, Msg: tc.msg, Input: id.String()})
			if w.s.Row(t, "subscriptions", s.ID) != before {
				t.Error("a refused change wrote")
			}
		})
	}
}

func TestUpdateSubscriptionSeats(t *testing.T) {
	t.Parallel()
	w := newSubWorld(t, payment.TokenVisa)
	ten := 10
	seats := w.seatPlan(t, "Seats plan", &ten)
	three := 3

	t.Run("applied now it recomputes the amount from the seat tier", func(t *testing.T) {
		s := w.subscribe(t, seats.ID, w.customer.ID, &w.card, 3000, 0, &three)
		got := w.mutate(t, w.org.Token, "updateSubscriptionSeats", vars{"id": s.ID, "seats": 7, "prorationBehavior": "invoice"})
		if *got.Seats != 7 || got.Amount != 5600 {
			t.Errorf("seats changed now: seats %v amount %d, want 7 and 5600", got.Seats, got.Amount)
		}
	})

	t.Run("graduated tiers price the new count as a checkout does", func(t *testing.T) {
		tiers, _ := json.Marshal(map[string]any{"seatTierType": "graduated", "tiers": []map[string]any{
			{"minSeats": 1, "maxSeats": 5, "pricePerSeat": 1000},
			{"minSeats": 6, "maxSeats": nil, "pricePerSeat": 800}}})
		graduated := createProduct(t, w.s, w.org.Token, vars{"name": "Graduated seats", "recurringInterval": "month",
			"prices": []vars{{"amountType": "seat_based", "seatTiers": json.RawMessage(tiers)}}})
		s := w.subscribe(t, graduated.ID, w.customer.ID, &w.card, 3000, 0, &three)
		got := w.mutate(t, w.org.Token, "updateSubscriptionSeats", vars{"id": s.ID, "seats": 7, "prorationBehavior": "invoice"})
		// Five seats at 1,000 and two at 800, not all seven at the second tier's rate.
		if *got.Seats != 7 || got.Amount != 6600 {
			t.Errorf("seats changed now: seats %v amount %d, want 7 and 6600", got.Seats, got.Amount)
		}
	})

	t.Run("at the next period it waits and the renewal bills the new count", func(t *testing.T) {
		s := w.subscribe(t, seats.ID, w.customer.ID, &w.card, 3000, 0, &three)
		got := w.mutate(t, w.org.Token, "updateSubscriptionSeats", vars{"id": s.ID, "seats": 4, "prorationBehavior": "next_period"})
		if *got.Seats != 3 || got.PendingUpdate == nil || *got.PendingUpdate.Seats != 4 || got.PendingUpdate.ProductID != nil {
			t.Fatalf("scheduled: %+v", got)
		}
		w.advance(t, at(2, 28))
		got = w.get(t, s.ID)
		if *got.Seats != 4 || got.Amount != 4000 || got.PendingUpdate != nil {
			t.Errorf("after the renewal: %+v", got)
		}
		if orders := w.orders(t, s.ID); len(orders) != 1 || orders[0].TotalAmount != 4000 {
			t.Errorf("orders: %+v", orders)
		}
	})

	t.Run("seats outside the tiers, below the assigned seats or unchanged are refused and nothing changes", func(t *testing.T) {
		s := w.subscribe(t, seats.ID, w.customer.ID, &w.card, 3000, 0, &three)
		for i := range 2 {
			w.s.Exec(t, `INSERT INTO customer_seats (organization_id, subscription_id, status, email)
				VALUES ($1, $2, 'pending', $3)`, w.org.ID, s.ID, "member"+string(rune('a'+i))+"@example.com")
		}
		before := w.s.Row(t, "subscriptions", s.ID)
		for _, tc := range []struct {
			seats int
			msg   string
		}{
			{0, "Seats must be between 1 and 10."},
			{11, "Seats must be between 1 and 10."},
			{1, "Seats cannot be fewer than the 2 seats already assigned."},
			{3, "The subscription already has 3 seats."},
		} {
			e := w.mutateError(t, w.org.Token, "updateSubscriptionSeats", vars{"id": s.ID, "seats": tc.seats})
			wantInvalid(t, e, fieldErr{Type: "value_error", Loc: []any{"input", "seats"}, Msg: tc.msg, Input: float64(tc.seats)})
		}
		if w.s.Row(t, "subscriptions", s.ID) != before {
			t.Error("a refused change wrote")
		}
	})

	t.Run("a subscription without a seat-based price has no seats to change", func(t *testing.T) {
		s := w.subscribePlan(t)
		e := w.mutateError(t, w.org.Token, "updateSubscriptionSeats", vars{"id": s.ID, "seats": 2})
		wantError(t, e, "BAD_USER_INPUT", "BadRequest")
	})
}
