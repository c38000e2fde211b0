package resolvers_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"till/internal/jobs"
	"till/internal/payment"
	"till/resolvers"
	"till/resolvers/resolverstest"
)

// ckProcessor counts the charges and the payment-token saves that reach the processor. While
// lose is above zero, a charge goes through but its answer is lost, as when the network
// fails after the processor took the money.
type ckProcessor struct {
	payment.Processor
	charges, saves, lose atomic.Int64
	taken                sync.Map // the idempotency key of every charge that took money, by charge id
}

func (p *ckProcessor) SavePaymentMethod(ctx context.Context, req payment.SaveRequest) (payment.Method, error) {
	p.saves.Add(1)
	return p.Processor.SavePaymentMethod(ctx, req)
}

func (p *ckProcessor) Charge(ctx context.Context, req payment.ChargeRequest) (payment.Charge, error) {
	p.charges.Add(1)
	c, err := p.Processor.Charge(ctx, req)
	if err == nil {
		p.taken.Store(c.ID, req.IdempotencyKey)
	}
	if err == nil && p.lose.Add(-1) >= 0 {
		return payment.Charge{}, payment.ErrUnavailable
	}
	return c, err
}

// ckServer is a test server whose processor counts charges.
func ckServer(t *testing.T) (*resolverstest.Server, *ckProcessor) {
	t.Helper()
	var p *ckProcessor
	s := resolverstest.New(t, func(d *resolvers.Deps) {
		p = &ckProcessor{Processor: d.Payments}
		d.Payments = p
	})
	return s, p
}

// ckRows counts what a confirmation may have created for a checkout.
type ckRows struct{ Orders, Subscriptions, Customers, Methods, Redemptions, Grants int }

func ckPurchaseRows(t *testing.T, s *resolverstest.Server, orgID, checkoutID uuid.UUID) ckRows {
	t.Helper()
	return ckRows{
		Orders:        ckCount(t, s, `SELECT count(*) FROM orders WHERE checkout_id = $1`, checkoutID),
		Subscriptions: ckCount(t, s, `SELECT count(*) FROM subscriptions WHERE checkout_id = $1`, checkoutID),
		Customers:     ckCount(t, s, `SELECT count(*) FROM customers WHERE organization_id = $1`, orgID),
		Methods:       ckCount(t, s, `SELECT count(*) FROM payment_methods WHERE organization_id = $1`, orgID),
		Redemptions:   ckCount(t, s, `SELECT count(*) FROM discount_redemptions WHERE checkout_id = $1`, checkoutID),
		Grants:        ckCount(t, s, `SELECT count(*) FROM benefit_grants WHERE organization_id = $1`, orgID),
	}
}

func TestConfirmCheckout(t *testing.T) {
	t.Parallel()
	s, proc := ckServer(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	tok := org.Token
	ben := newBenefit(t, s, tok, "Access")
	oneTime := createProduct(t, s, tok, vars{"name": "Ebook", "benefitIds": []uuid.UUID{ben.ID}, "prices": []vars{ckFixed(2000)}})
	monthly := ckProduct(t, s, tok, "Monthly", "month", ckFixed(900))
	trial := createProduct(t, s, tok, vars{"name": "Trial", "recurringInterval": "month", "trialInterval": "day",
		"trialIntervalCount": 14, "prices": []vars{ckFixed(900)}})
	seats := ckProduct(t, s, tok, "Team", "month", ckSeats("", vars{"minSeats": 2, "maxSeats": 10, "pricePerSeat": 500}))

	t.Run("a one-time purchase creates a customer, a saved card, a paid order and the grants", func(t *testing.T) {
		c := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{oneTime.ID}, "customerMetadata": vars{"plan": "pro"}})
		var out struct{ ConfirmCheckout ckCheckout }
		s.Query(t, "", ckConfirm, vars{"in": vars{"clientSecret": c.ClientSecret, "paymentToken": "tok_visa",
			"customerEmail": "buyer@example.com", "customerName": "Buyer"}}, &out)
		got := out.ConfirmCheckout
		if got.Status != "succeeded" || got.CustomerID == nil || got.PaymentMethodType == nil || *got.PaymentMethodType != "card" {
			t.Fatalf("confirmed checkout: status %s customer %v method type %v", got.Status, got.CustomerID, got.PaymentMethodType)
		}
		rows := ckPurchaseRows(t, s, org.ID, c.ID)
		if rows.Orders != 1 || rows.Subscriptions != 0 || rows.Methods != 1 || rows.Grants != 1 {
			t.Errorf("rows = %+v, want one order, one method, one grant", rows)
		}
		var order struct {
			Status        string `db:"status"`
			BillingReason string `db:"billing_reason"`
			Total         int64  `db:"total_amount"`
		}
		s.Get(t, &order, `SELECT status, billing_reason, total_amount FROM orders WHERE checkout_id = $1`, c.ID)
		if order.Status != "paid" || order.BillingReason != "purchase" || order.Total != 2000 {
			t.Errorf("order = %+v, want paid purchase of 2000", order)
		}
		if n := ckCount(t, s, `SELECT count(*) FROM payments p JOIN orders o ON o.id = p.order_id
			WHERE o.checkout_id = $1 AND p.status = 'succeeded' AND p.amount = 2000 AND p.processor_id IS NOT NULL`, c.ID); n != 1 {
			t.Errorf("%d recorded payments for the order, want 1", n)
		}
		var cust struct {
			Email   string     `db:"email"`
			Meta    string     `db:"metadata"`
			Default *uuid.UUID `db:"default_payment_method_id"`
		}
		s.Get(t, &cust, `SELECT email, metadata::text AS metadata, default_payment_method_id FROM customers WHERE id = $1`, *got.CustomerID)
		if cust.Email != "buyer@example.com" || !strings.Contains(cust.Meta, `"plan": "pro"`) || cust.Default == nil {
			t.Errorf("customer = %+v, want the buyer with metadata and a default card", cust)
		}
		events := ckCount(t, s, `SELECT count(*) FROM domain_events WHERE object_id = $1 AND type LIKE 'checkout.%'`, c.ID)
		if events != 3 { // created, updated (confirmed), updated (succeeded)
			t.Errorf("%d checkout events, want 3", events)
		}
	})

	t.Run("a subscription purchase with a trial charges nothing and starts trialing", func(t *testing.T) {
		before := proc.charges.Load()
		c := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{trial.ID}, "customerEmail": "trial@example.com"})
		var out struct{ ConfirmCheckout ckCheckout }
		s.Query(t, tok, ckConfirm, vars{"in": vars{"id": c.ID, "paymentToken": "tok_mastercard"}}, &out)
		got := out.ConfirmCheckout
		if got.Status != "succeeded" || got.SubscriptionID == nil {
			t.Fatalf("status %s subscription %v", got.Status, got.SubscriptionID)
		}
		var status string
		var reason string
		s.Get(t, &status, `SELECT status FROM subscriptions WHERE id = $1`, *got.SubscriptionID)
		s.Get(t, &reason, `SELECT billing_reason FROM orders WHERE checkout_id = $1`, c.ID)
		if status != "trialing" || reason != "subscription_create" || proc.charges.Load() != before {
			t.Errorf("subscription %s, order %s, charges %d; want trialing, subscription_create, none",
				status, reason, proc.charges.Load()-before)
		}
	})

	t.Run("a seat-based subscription purchase charges price times seats", func(t *testing.T) {
		c := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{seats.ID}, "seats": 3, "customerEmail": "team@example.com"})
		var out struct{ ConfirmCheckout ckCheckout }
		s.Query(t, tok, ckConfirm, vars{"in": vars{"id": c.ID, "paymentToken": "tok_visa", "seats": 4}}, &out)
		var total, subSeats int
		s.Get(t, &total, `SELECT total_amount FROM orders WHERE checkout_id = $1`, c.ID)
		s.Get(t, &subSeats, `SELECT seats FROM subscriptions WHERE checkout_id = $1`, c.ID)
		if out.ConfirmCheckout.TotalAmount != 2000 || total != 2000 || subSeats != 4 {
			t.Errorf("checkout total %d, order total %d, seats %d; want 2000, 2000, 4", out.ConfirmCheckout.TotalAmount, total, subSeats)
		}
	})

	for _, tc := range []struct{ token, decline string }{
		{payment.TokenChargeDeclined, "generic_decline"},
		{payment.TokenInsufficientFunds, "insufficient_funds"},
	} {
		t.Run("a declined card ("+tc.decline+") fails the checkout and creates nothing else", func(t *testing.T) {
			disc := ckDiscount(t, s, tok, vars{"name": "Ten", "type": "percentage", "basisPoints": 1000, "duration": "forever"})
			c := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{monthly.ID}, "discountId": disc,
				"customerEmail": "declined-" + tc.decline + "@example.com"})
			before := ckPurchaseRows(t, s, org.ID, c.ID)
			e := s.QueryError(t, tok, ckConfirm, vars{"in": vars{"id": c.ID, "paymentToken": tc.token}})
			wantError(t, e, "BAD_USER_INPUT", "PaymentError")
			if !strings.Contains(e.Message, tc.decline) {
				t.Errorf("message %q does not name the decline code %s", e.Message, tc.decline)
			}
			if after := ckPurchaseRows(t, s, org.ID, c.ID); after != before {
				t.Errorf("rows changed: before %+v, after %+v", before, after)
			}
			if got := ckGet(t, s, tok, c.ID); got.Status != "failed" || got.CustomerID != nil {
				t.Errorf("status %s customer %v, want failed with no customer", got.Status, got.CustomerID)
			}
			var redemptions int
			s.Get(t, &redemptions, `SELECT redemptions_count FROM discounts WHERE id = $1`, disc)
			if redemptions != 0 {
				t.Errorf("discount redeemed %d times by a declined purchase", redemptions)
			}
			e = s.QueryError(t, tok, ckConfirm, vars{"in": vars{"id": c.ID, "paymentToken": "tok_visa"}})
			wantError(t, e, "CONFLICT", "NotOpenCheckout")
		})
	}

	t.Run("an answer lost after the charge went through: Till asks again with the same key and the buyer pays once", func(t *testing.T) {
		c := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{oneTime.ID}, "customerEmail": "outage@example.com"})
		proc.lose.Store(1)
		defer proc.lose.Store(0)
		var out struct{ ConfirmCheckout ckCheckout }
		s.Query(t, tok, ckConfirm, vars{"in": vars{"id": c.ID, "paymentToken": payment.TokenVisa}}, &out)
		if out.ConfirmCheckout.Status != "confirmed" {
			t.Fatalf("after the lost answer: %s, want confirmed while Till asks again", out.ConfirmCheckout.Status)
		}
		// The buyer retries with another card while the processor still loses answers: Till
		// asks for the first charge again, not a second one, and says it could not tell.
		saves := proc.saves.Load()
		proc.lose.Store(1)
		e := s.QueryError(t, tok, ckConfirm, vars{"in": vars{"id": c.ID, "paymentToken": payment.TokenMastercard}})
		wantError(t, e, "BAD_USER_INPUT", "PaymentError")
		if proc.saves.Load() != saves {
			t.Errorf("the retry saved its card: %d saves, want %d", proc.saves.Load(), saves)
		}
		if got := ckGet(t, s, tok, c.ID); got.Status != "confirmed" {
			t.Fatalf("after the second lost answer: %s, want confirmed", got.Status)
		}
		s.Exec(t, `UPDATE jobs SET scheduled_at = now() WHERE kind = $1`, resolvers.JobCheckoutCharge)
		worker := &jobs.Worker{DB: s.DB, Handlers: s.Resolver.JobHandlers()}
		if _, err := worker.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := ckGet(t, s, tok, c.ID); got.Status != "succeeded" {
			t.Fatalf("after asking again: %s, want succeeded", got.Status)
		}
		charges := 0
		proc.taken.Range(func(_, key any) bool {
			if strings.HasPrefix(key.(string), c.ID.String()) {
				charges++
			}
			return true
		})
		if charges != 1 {
			t.Errorf("the processor took %d charges for the checkout, want the one the lost answer took", charges)
		}
		if rows := ckPurchaseRows(t, s, org.ID, c.ID); rows.Orders != 1 {
			t.Errorf("rows %+v, want one order", rows)
		}
	})

	t.Run("confirmations that cannot proceed change nothing", func(t *testing.T) {
		exhausted := ckDiscount(t, s, tok, vars{"name": "Once", "type": "fixed", "amount": 100, "duration": "once", "maxRedemptions": 1})
		withDiscount := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{oneTime.ID}, "discountId": exhausted,
			"customerEmail": "x1@example.com"})
		s.Exec(t, `UPDATE discounts SET redemptions_count = 1 WHERE id = $1`, exhausted)
		expired := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{oneTime.ID}, "customerEmail": "x2@example.com"})
		s.Exec(t, `UPDATE checkouts SET expires_at = now() - interval '1 minute' WHERE id = $1`, expired.ID)
		team := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{seats.ID}, "seats": 2, "customerEmail": "x3@example.com"})
		noEmail := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{oneTime.ID}})
		for _, tc := range []struct {
			name   string
			id     uuid.UUID
			in     vars
			code   string
			reason string
		}{
			{"an exhausted discount", withDiscount.ID, vars{"paymentToken": "tok_visa"}, "BAD_USER_INPUT", "PolarRequestValidationError"},
			{"an expired checkout", expired.ID, vars{"paymentToken": "tok_visa"}, "CONFLICT", "ExpiredCheckoutError"},
			{"seats above the tiers", team.ID, vars{"paymentToken": "tok_visa", "seats": 11}, "BAD_USER_INPUT", "PolarRequestValidationError"},
			{"no payment token for a paid checkout", team.ID, vars{}, "BAD_USER_INPUT", "PolarRequestValidationError"},
			{"an unknown payment token", team.ID, vars{"paymentToken": "tok_nope"}, "BAD_USER_INPUT", "PolarRequestValidationError"},
			{"no customer email", noEmail.ID, vars{"paymentToken": "tok_visa"}, "BAD_USER_INPUT", "PolarRequestValidationError"},
		} {
			before := ckPurchaseRows(t, s, org.ID, tc.id)
			charges := proc.charges.Load()
			stored := ckGet(t, s, tok, tc.id)
			tc.in["id"] = tc.id
			e := s.QueryError(t, tok, ckConfirm, vars{"in": tc.in})
			if e.Extensions.Code != tc.code || e.Extensions.Reason != tc.reason {
				t.Errorf("%s: %s (%s) %q, want %s (%s)", tc.name, e.Extensions.Code, e.Extensions.Reason, e.Message, tc.code, tc.reason)
			}
			after := ckGet(t, s, tok, tc.id)
			if rows := ckPurchaseRows(t, s, org.ID, tc.id); rows != before || after.Status != stored.Status ||
				after.Amount != stored.Amount || proc.charges.Load() != charges {
				t.Errorf("%s changed something: rows %+v → %+v, status %s → %s", tc.name, before, rows, stored.Status, after.Status)
			}
		}
	})

	t.Run("confirming twice creates one order and then says the checkout is not open", func(t *testing.T) {
		c := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{oneTime.ID}, "customerEmail": "twice@example.com"})
		s.Query(t, tok, ckConfirm, vars{"in": vars{"id": c.ID, "paymentToken": "tok_visa"}}, nil)
		e := s.QueryError(t, tok, ckConfirm, vars{"in": vars{"id": c.ID, "paymentToken": "tok_visa"}})
		wantError(t, e, "CONFLICT", "NotOpenCheckout")
		if n := ckCount(t, s, `SELECT count(*) FROM orders WHERE checkout_id = $1`, c.ID); n != 1 {
			t.Errorf("%d orders, want 1", n)
		}
	})

	t.Run("twenty concurrent confirmations create one order and charge once", func(t *testing.T) {
		c := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{oneTime.ID}, "customerEmail": "race@example.com"})
		before := proc.charges.Load()
		var mu sync.Mutex
		outcomes := map[string]int{}
		race(20, func(int) {
			res := s.Do(t, tok, ckConfirm, vars{"in": vars{"id": c.ID, "paymentToken": "tok_visa"}})
			code := "ok"
			if len(res.Errors) > 0 {
				code = res.Errors[0].Extensions.Code + " " + res.Errors[0].Extensions.Reason
			}
			mu.Lock()
			outcomes[code]++
			mu.Unlock()
		})
		if outcomes["ok"] != 1 || outcomes["CONFLICT NotOpenCheckout"] != 19 {
			t.Errorf("outcomes = %v, want 1 ok and 19 CONFLICT NotOpenCheckout", outcomes)
		}
		if n := ckCount(t, s, `SELECT count(*) FROM orders WHERE checkout_id = $1`, c.ID); n != 1 {
			t.Errorf("%d orders, want 1", n)
		}
		if n := proc.charges.Load() - before; n != 1 {
			t.Errorf("%d charges, want 1", n)
		}
	})

	t.Run("two buyers racing for a discount's last redemption: one pays, the other is told and not charged", func(t *testing.T) {
		last := ckDiscount(t, s, tok, vars{"name": "Last one", "type": "fixed", "amount": 500, "duration": "once", "maxRedemptions": 1})
		first := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{oneTime.ID}, "discountId": last, "customerEmail": "r1@example.com"})
		second := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{oneTime.ID}, "discountId": last, "customerEmail": "r2@example.com"})
		before := proc.charges.Load()
		var mu sync.Mutex
		outcomes := map[string]int{}
		race(2, func(i int) {
			id := []uuid.UUID{first.ID, second.ID}[i]
			res := s.Do(t, tok, ckConfirm, vars{"in": vars{"id": id, "paymentToken": "tok_visa"}})
			code := "ok"
			if len(res.Errors) > 0 {
				code = res.Errors[0].Extensions.Code + " " + res.Errors[0].Extensions.Reason + ": " + res.Errors[0].Message
			}
			mu.Lock()
			outcomes[code]++
			mu.Unlock()
		})
		if outcomes["ok"] != 1 || outcomes["BAD_USER_INPUT PolarRequestValidationError: Discount is no longer redeemable."] != 1 {
			t.Errorf("outcomes = %v", outcomes)
		}
		if n := proc.charges.Load() - before; n != 1 {
			t.Errorf("%d charges, want 1", n)
		}
		statuses := []string{ckGet(t, s, tok, first.ID).Status, ckGet(t, s, tok, second.ID).Status}
		if !(statuses[0] == "succeeded" && statuses[1] == "open" || statuses[0] == "open" && statuses[1] == "succeeded") {
			t.Errorf("statuses = %v, want one succeeded and one back to open", statuses)
		}
	})

	t.Run("the buyer's page reads the checkout by client secret without a token", func(t *testing.T) {
		c := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{oneTime.ID}})
		var out struct{ CheckoutByClientSecret ckCheckout }
		s.Query(t, "", `query($s: String!) { checkoutByClientSecret(clientSecret: $s) { id status amount } }`,
			vars{"s": c.ClientSecret}, &out)
		if out.CheckoutByClientSecret.ID != c.ID || out.CheckoutByClientSecret.Amount != 2000 {
			t.Errorf("by secret = %+v", out.CheckoutByClientSecret)
		}
		e := s.QueryError(t, "", `query { checkoutByClientSecret(clientSecret: "till_c_nope") { id } }`, nil)
		wantError(t, e, "NOT_FOUND", "ResourceNotFound")
	})

	t.Run("a saved payment method of the customer pays", func(t *testing.T) {
		cust := s.NewCustomer(t, org.ID, "")
		var saved struct{ SavePaymentMethod struct{ ID uuid.UUID } }
		s.Query(t, tok, `mutation($in: PaymentMethodSaveInput!) { savePaymentMethod(input: $in) { id } }`,
			vars{"in": vars{"customerId": cust.ID, "token": "tok_visa"}}, &saved)
		c := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{oneTime.ID}, "customerId": cust.ID})
		var out struct{ ConfirmCheckout ckCheckout }
		s.Query(t, tok, ckConfirm, vars{"in": vars{"id": c.ID, "paymentMethodId": saved.SavePaymentMethod.ID}}, &out)
		if out.ConfirmCheckout.Status != "succeeded" || *out.ConfirmCheckout.CustomerID != cust.ID {
			t.Errorf("status %s customer %v", out.ConfirmCheckout.Status, out.ConfirmCheckout.CustomerID)
		}
		other := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{oneTime.ID}, "customerEmail": "else@example.com"})
		e := s.QueryError(t, tok, ckConfirm, vars{"in": vars{"id": other.ID, "paymentMethodId": saved.SavePaymentMethod.ID}})
		if e.Extensions.Code != "BAD_USER_INPUT" || e.Extensions.Reason != "PolarRequestValidationError" || e.Message != "Payment method does not exist." {
			t.Errorf("someone else's method: %s %q", e.Extensions.Code, e.Message)
		}
	})

	t.Run("confirming by id needs checkouts:write", func(t *testing.T) {
		c := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{oneTime.ID}, "customerEmail": "scope@example.com"})
		reader := s.NewToken(t, org.ID, "checkouts:read")
		e := s.QueryError(t, reader, ckConfirm, vars{"in": vars{"id": c.ID, "paymentToken": "tok_visa"}})
		wantError(t, e, "FORBIDDEN", "insufficient_scope")
		e = s.QueryError(t, "", ckConfirm, vars{"in": vars{"id": c.ID, "paymentToken": "tok_visa"}})
		wantError(t, e, "UNAUTHENTICATED", "Unauthorized")
	})
}
