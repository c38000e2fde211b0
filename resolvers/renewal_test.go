package resolvers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/internal/payment"
	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/storage"
)

// at is a date of the tests' year at noon UTC, the time of day the clocks start at.
func at(month time.Month, d int) time.Time { return time.Date(2030, month, d, 12, 0, 0, 0, time.UTC) }

func TestSubscriptionPeriodsKeepTheBillingDay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		origin, start time.Time
		interval      storage.Interval
		count         int
		want          time.Time
	}{
		{"January 31 plus a month is February 28", at(1, 31), at(1, 31), "month", 1, at(2, 28)},
		{"in a leap year it is February 29", time.Date(2028, 1, 31, 9, 0, 0, 0, time.UTC), time.Date(2028, 1, 31, 9, 0, 0, 0, time.UTC),
			"month", 1, time.Date(2028, 2, 29, 9, 0, 0, 0, time.UTC)},
		{"the day clamped in February comes back in March", at(1, 31), at(2, 28), "month", 1, at(3, 31)},
		{"March 31 plus a month is April 30", at(3, 31), at(3, 31), "month", 1, at(4, 30)},
		{"a mid-month day stays", at(1, 15), at(1, 15), "month", 1, at(2, 15)},
		{"three months from November 30 is February 28", at(11, 30), at(11, 30), "month", 3,
			time.Date(2031, 2, 28, 12, 0, 0, 0, time.UTC)},
		{"a year from February 29 is February 28", time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC),
			time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC), "year", 1, time.Date(2029, 2, 28, 0, 0, 0, 0, time.UTC)},
		{"a week is seven days", at(1, 31), at(1, 31), "week", 1, at(2, 7)},
		{"two days are two days", at(12, 31), at(12, 31), "day", 2, time.Date(2031, 1, 2, 12, 0, 0, 0, time.UTC)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := resolvers.SubscriptionPeriodEnd(tc.origin, tc.start, tc.interval, tc.count); !got.Equal(tc.want) {
				t.Errorf("period end = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestCreateSubscription(t *testing.T) {
	t.Parallel()
	w := newSubWorld(t, payment.TokenVisa)

	t.Run("without a trial it is active for a first period from the clock's now", func(t *testing.T) {
		s := w.subscribePlan(t)
		if s.Status != "active" || !s.StartedAt.Equal(subBase) || !s.CurrentPeriodStart.Equal(subBase) ||
			!s.CurrentPeriodEnd.Equal(at(2, 28)) || s.TrialStart != nil || s.TrialEnd != nil ||
			s.CurrentMeterPeriodStart != nil || len(s.Prices) != 1 || s.Prices[0].ID != w.plan.Prices[0].ID {
			t.Errorf("created: %+v", s)
		}
		if diff := cmp.Diff([]string{"subscription.created", "subscription.active"}, w.events(t, s.ID)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]uuid.UUID{w.benefit.ID}, w.grantedBenefits(t, s.ID)); diff != "" {
			t.Errorf("granted benefits (-want +got):\n%s", diff)
		}
	})

	t.Run("with a trial it is trialing until the trial end, which ends the first period", func(t *testing.T) {
		s := w.subscribe(t, w.plan.ID, w.customer.ID, &w.card, 1000, days(14), nil)
		end := subBase.Add(days(14))
		if s.Status != "trialing" || !s.TrialStart.Equal(subBase) || !s.TrialEnd.Equal(end) ||
			!s.CurrentPeriodEnd.Equal(end) {
			t.Errorf("created: %+v", s)
		}
		if !eventsContain(w.events(t, s.ID), "subscription.created", "subscription.active") {
			t.Errorf("events: %v", w.events(t, s.ID))
		}
	})

	t.Run("a metered price gives the subscription a meter period", func(t *testing.T) {
		var meterID uuid.UUID
		w.s.Get(t, &meterID, `INSERT INTO meters (organization_id, name, filter, aggregation)
			VALUES ($1, 'API calls', '{"conjunction": "and", "clauses": []}', '{"func": "count"}') RETURNING id`, w.org.ID)
		metered := createProduct(t, w.s, w.org.Token, vars{"name": "Usage plan", "recurringInterval": "month",
			"prices": []vars{{"amountType": "fixed", "priceAmount": 500},
				{"amountType": "metered_unit", "unitAmount": "0.5", "meterId": meterID}}})
		s := w.subscribe(t, metered.ID, w.customer.ID, &w.card, 500, 0, nil)
		if s.CurrentMeterPeriodStart == nil || !s.CurrentMeterPeriodStart.Equal(s.CurrentPeriodStart) ||
			!s.CurrentMeterPeriodEnd.Equal(s.CurrentPeriodEnd) || len(s.Prices) != 2 {
			t.Errorf("metered subscription: %+v", s)
		}
	})

	t.Run("a one-time product cannot be subscribed to", func(t *testing.T) {
		once := w.s.NewProduct(t, w.org.ID, "Ebook")
		p, err := storage.GetProduct(context.Background(), w.s.DB, []uuid.UUID{w.org.ID}, once.ID)
		if err != nil {
			t.Fatal(err)
		}
		_, err = w.s.Resolver.CreateSubscriptionForTest(context.Background(), resolvers.SubscriptionSpec{
			OrganizationID: w.org.ID, CustomerID: w.customer.ID, Product: p, Amount: 1000, Currency: "usd"})
		if err == nil {
			t.Fatal("subscribed to a one-time product")
		}
	})
}

func TestRenewalsWithTestClocks(t *testing.T) {
	t.Parallel()

	t.Run("each period end creates a paid cycle order and starts the next period", func(t *testing.T) {
		w := newSubWorld(t, payment.TokenVisa)
		s := w.subscribePlan(t)
		if n := w.advance(t, at(2, 28).Add(-time.Second)); n != 0 {
			t.Errorf("%d renewals before the period end", n)
		}
		if n := w.advance(t, at(2, 28)); n != 1 {
			t.Errorf("%d renewals at the period end, want 1", n)
		}
		got := w.get(t, s.ID)
		if got.Status != "active" || !got.CurrentPeriodStart.Equal(at(2, 28)) || !got.CurrentPeriodEnd.Equal(at(3, 31)) {
			t.Errorf("after the first renewal: %+v", got)
		}
		want := []subOrder{{BillingReason: "subscription_cycle", Status: "paid", TotalAmount: 1000, PaidPayments: 1}}
		if diff := cmp.Diff(want, w.orders(t, s.ID)); diff != "" {
			t.Errorf("orders (-want +got):\n%s", diff)
		}
		// Jumping four periods ahead renews each period at its own end.
		if n := w.advance(t, at(7, 1)); n != 4 {
			t.Errorf("%d renewals over four periods, want 4", n)
		}
		got = w.get(t, s.ID)
		if !got.CurrentPeriodStart.Equal(at(6, 30)) || !got.CurrentPeriodEnd.Equal(at(7, 31)) {
			t.Errorf("after five renewals: period %s – %s", got.CurrentPeriodStart, got.CurrentPeriodEnd)
		}
		if orders := w.orders(t, s.ID); len(orders) != 5 {
			t.Errorf("%d orders after five renewals", len(orders))
		}
		if !eventsContain(w.events(t, s.ID), "subscription.cycled", "subscription.updated") {
			t.Errorf("events: %v", w.events(t, s.ID))
		}
	})

	t.Run("renewals an advance left undone are finished by any process once the advance is stale", func(t *testing.T) {
		w := newSubWorld(t, payment.TokenVisa)
		s := w.subscribePlan(t)
		// The clock moved past two period ends and its process died before renewing.
		w.s.Exec(t, `UPDATE test_clocks SET frozen_at = $2, modified_at = now() WHERE organization_id = $1`, w.org.ID, at(4, 1))
		if n, err := w.s.Resolver.RenewStrandedTestClocks(t.Context()); err != nil || n != 0 {
			t.Fatalf("renewed %d (%v) while the advance may still be running, want 0", n, err)
		}
		w.s.Exec(t, `UPDATE test_clocks SET modified_at = now() - interval '1 minute' WHERE organization_id = $1`, w.org.ID)
		if n, err := w.s.Resolver.RenewStrandedTestClocks(t.Context()); err != nil || n != 2 {
			t.Fatalf("renewed %d (%v), want the 2 period ends", n, err)
		}
		got := w.get(t, s.ID)
		if !got.CurrentPeriodStart.Equal(at(3, 31)) || len(w.orders(t, s.ID)) != 2 {
			t.Errorf("after the stranded renewals: period from %s, %d orders", got.CurrentPeriodStart, len(w.orders(t, s.ID)))
		}
		if n, err := w.s.Resolver.RenewStrandedTestClocks(t.Context()); err != nil || n != 0 {
			t.Errorf("a second pass renewed %d (%v)", n, err)
		}
	})

	t.Run("a card that stops working goes past_due, is retried after 2, 4 and 7 days, then unpaid", func(t *testing.T) {
		w := newSubWorld(t, payment.TokenChargeCustomerFail)
		s := w.subscribePlan(t)
		// The checkout charged the card once already; from now on it declines.
		w.chargeOnce(t, w.card)
		w.advance(t, at(2, 28))
		got := w.get(t, s.ID)
		if got.Status != "past_due" || got.PastDueAt == nil || !got.PastDueAt.Equal(at(2, 28)) ||
			!got.CurrentPeriodStart.Equal(at(2, 28)) {
			t.Fatalf("after a declined renewal: %+v", got)
		}
		retryAt := at(3, 2)
		want := []subOrder{{BillingReason: "subscription_cycle", Status: "pending", TotalAmount: 1000,
			NextPaymentAttemptAt: &retryAt, FailedPayments: 1}}
		if diff := cmp.Diff(want, w.orders(t, s.ID)); diff != "" {
			t.Errorf("orders (-want +got):\n%s", diff)
		}
		if len(w.grantedBenefits(t, s.ID)) != 1 {
			t.Error("a past_due subscription lost its benefits")
		}
		for i, step := range []struct {
			to, next time.Time
		}{{at(3, 2), at(3, 6)}, {at(3, 6), at(3, 13)}} {
			w.advance(t, step.to)
			next := step.next
			want[0].NextPaymentAttemptAt, want[0].FailedPayments = &next, i+2
			if diff := cmp.Diff(want, w.orders(t, s.ID)); diff != "" {
				t.Errorf("orders after retry %d (-want +got):\n%s", i+1, diff)
			}
			if got := w.get(t, s.ID); got.Status != "past_due" {
				t.Errorf("status after retry %d: %s", i+1, got.Status)
			}
		}
		w.advance(t, at(3, 13))
		got = w.get(t, s.ID)
		if got.Status != "unpaid" || got.EndedAt == nil || !got.EndedAt.Equal(at(3, 13)) {
			t.Errorf("after the last retry: %+v", got)
		}
		want[0].NextPaymentAttemptAt, want[0].FailedPayments = nil, 4
		if diff := cmp.Diff(want, w.orders(t, s.ID)); diff != "" {
			t.Errorf("orders after the last retry (-want +got):\n%s", diff)
		}
		if got := w.grantedBenefits(t, s.ID); len(got) != 0 {
			t.Errorf("an unpaid subscription keeps its benefits: %v", got)
		}
		if !eventsContain(w.events(t, s.ID), "subscription.past_due", "subscription.revoked") {
			t.Errorf("events: %v", w.events(t, s.ID))
		}
		// Nothing is due any more: the period end of an unpaid subscription renews nothing.
		if n := w.advance(t, at(5, 1)); n != 0 {
			t.Errorf("%d renewals of an unpaid subscription", n)
		}
	})

	t.Run("a card whose issuer wants authentication off session goes past_due, not into endless retries", func(t *testing.T) {
		w := newSubWorld(t, payment.TokenVisa)
		s := w.subscribePlan(t)
		strict := w.saveCard(t, w.customer.ID, payment.TokenThreeDSecureRequired)
		w.s.Exec(t, `UPDATE subscriptions SET payment_method_id = $2 WHERE id = $1`, s.ID, strict)
		w.advance(t, at(2, 28))
		if got := w.get(t, s.ID); got.Status != "past_due" {
			t.Fatalf("after a renewal that needed the holder: %s, want past_due", got.Status)
		}
		var reasons string
		w.s.Get(t, &reasons, `SELECT coalesce(string_agg(status || ' ' || coalesce(decline_reason, ''), ', '), '')
			FROM payments WHERE payment_method_id = $1`, strict)
		if reasons != "failed authentication_required" {
			t.Errorf("attempts %q, want one failed with authentication_required", reasons)
		}
	})

	t.Run("a jump past every retry leaves the same history as living through it", func(t *testing.T) {
		w := newSubWorld(t, payment.TokenChargeDeclined)
		s := w.subscribePlan(t)
		if n := w.advance(t, at(3, 20)); n != 4 {
			t.Errorf("%d renewal steps, want 4 (the cycle and three retries, the last one ending it)", n)
		}
		got := w.get(t, s.ID)
		if got.Status != "unpaid" || !got.EndedAt.Equal(at(3, 13)) || !got.PastDueAt.Equal(at(2, 28)) {
			t.Errorf("after the jump: %+v", got)
		}
	})

	t.Run("a retry that succeeds makes the subscription active again", func(t *testing.T) {
		w := newSubWorld(t, payment.TokenChargeDeclined)
		s := w.subscribePlan(t)
		w.advance(t, at(2, 28))
		// The customer replaces the card.
		visa := w.saveCard(t, w.customer.ID, payment.TokenVisa)
		w.s.Exec(t, `UPDATE subscriptions SET payment_method_id = $2 WHERE id = $1`, s.ID, visa)
		w.advance(t, at(3, 2))
		got := w.get(t, s.ID)
		if got.Status != "active" || got.PastDueAt != nil || !got.CurrentPeriodEnd.Equal(at(3, 31)) {
			t.Errorf("after the successful retry: %+v", got)
		}
		want := []subOrder{{BillingReason: "subscription_cycle", Status: "paid", TotalAmount: 1000, FailedPayments: 1,
			PaidPayments: 1}}
		if diff := cmp.Diff(want, w.orders(t, s.ID)); diff != "" {
			t.Errorf("orders (-want +got):\n%s", diff)
		}
		events := w.events(t, s.ID)
		if events[len(events)-1] != "subscription.active" {
			t.Errorf("last event %s, want subscription.active", events[len(events)-1])
		}
	})

	t.Run("a cancellation at period end takes effect at the boundary", func(t *testing.T) {
		w := newSubWorld(t, payment.TokenVisa)
		s := w.subscribePlan(t)
		w.mutate(t, w.org.Token, "cancelSubscription", vars{"id": s.ID})
		w.advance(t, at(2, 27))
		if got := w.get(t, s.ID); got.Status != "active" {
			t.Errorf("status before the period end: %s", got.Status)
		}
		if n := w.advance(t, at(3, 5)); n != 1 {
			t.Errorf("%d renewal steps, want 1", n)
		}
		got := w.get(t, s.ID)
		if got.Status != "canceled" || got.EndedAt == nil || !got.EndedAt.Equal(at(2, 28)) {
			t.Errorf("after the period end: %+v", got)
		}
		if orders := w.orders(t, s.ID); len(orders) != 0 {
			t.Errorf("a canceled subscription was billed: %+v", orders)
		}
		if len(w.grantedBenefits(t, s.ID)) != 0 {
			t.Error("a canceled subscription keeps its benefits")
		}
		events := w.events(t, s.ID)
		if events[len(events)-1] != "subscription.revoked" {
			t.Errorf("events: %v", events)
		}
	})

	t.Run("a trial ends with the first charge", func(t *testing.T) {
		w := newSubWorld(t, payment.TokenVisa)
		s := w.subscribe(t, w.plan.ID, w.customer.ID, &w.card, 1000, days(14), nil)
		trialEnd := subBase.Add(days(14)) // February 14
		w.advance(t, trialEnd)
		got := w.get(t, s.ID)
		if got.Status != "active" || !got.CurrentPeriodStart.Equal(trialEnd) || !got.CurrentPeriodEnd.Equal(at(3, 14)) {
			t.Errorf("after the trial: %+v", got)
		}
		want := []subOrder{{BillingReason: "subscription_cycle", Status: "paid", TotalAmount: 1000, PaidPayments: 1}}
		if diff := cmp.Diff(want, w.orders(t, s.ID)); diff != "" {
			t.Errorf("orders (-want +got):\n%s", diff)
		}
	})

	t.Run("a pause takes effect at the boundary and a resume charges a new period", func(t *testing.T) {
		w := newSubWorld(t, payment.TokenVisa)
		s := w.subscribePlan(t)
		w.mutate(t, w.org.Token, "pauseSubscription", vars{"id": s.ID})
		w.advance(t, at(3, 10))
		got := w.get(t, s.ID)
		if got.Status != "paused" || got.PausedAt == nil || !got.PausedAt.Equal(at(2, 28)) || got.PauseAtPeriodEnd {
			t.Errorf("after the period end: %+v", got)
		}
		if len(w.orders(t, s.ID)) != 0 || len(w.grantedBenefits(t, s.ID)) != 0 {
			t.Error("a paused subscription was billed or keeps its benefits")
		}
		got = w.mutate(t, w.org.Token, "resumeSubscription", vars{"id": s.ID})
		if got.Status != "active" || !got.CurrentPeriodStart.Equal(at(3, 10)) || !got.CurrentPeriodEnd.Equal(at(4, 10)) {
			t.Errorf("resumed: %+v", got)
		}
		if orders := w.orders(t, s.ID); len(orders) != 1 || orders[0].Status != "paid" {
			t.Errorf("orders after resume: %+v", orders)
		}
	})

	t.Run("the background loop leaves organizations on a test clock alone", func(t *testing.T) {
		w := newSubWorld(t, payment.TokenVisa)
		s := w.subscribePlan(t)
		n, err := w.s.Resolver.RenewDue(context.Background(), nil, at(12, 31), 100)
		if err != nil || n != 0 {
			t.Errorf("RenewDue(nil) = %d, %v; want 0", n, err)
		}
		if got := w.get(t, s.ID); !got.CurrentPeriodEnd.Equal(at(2, 28)) {
			t.Errorf("renewed by the background loop: %+v", got)
		}
	})
}

func TestAdvanceTestClock(t *testing.T) {
	t.Parallel()
	w := newSubWorld(t, payment.TokenVisa)
	advance := `mutation($input: AdvanceTestClockInput!) { advanceTestClock(input: $input) { renewals testClock { frozenAt } } }`

	t.Run("the clock only moves forward", func(t *testing.T) {
		for _, to := range []time.Time{subBase, subBase.Add(-time.Hour)} {
			e := w.s.QueryError(t, w.org.Token, advance, vars{"input": vars{"to": to}})
			wantInvalid(t, e, fieldErr{Type: "value_error", Loc: []any{"input", "to"},
				Msg:   "The test clock only moves forward: the time must be after 2030-01-31T12:00:00Z.",
				Input: to.Format(time.RFC3339)})
		}
	})

	t.Run("organizations in live mode have no test clock", func(t *testing.T) {
		live := w.s.NewOrg(t, resolverstest.AllScopes)
		w.s.Exec(t, `UPDATE organizations SET processor_mode = 'live' WHERE id = $1`, live.ID)
		e := w.s.QueryError(t, live.Token, advance, vars{"input": vars{"to": subBase.AddDate(1, 0, 0)}})
		wantError(t, e, "BAD_USER_INPUT", "BadRequest")
		var clocks int
		w.s.Get(t, &clocks, `SELECT count(*) FROM test_clocks WHERE organization_id = $1`, live.ID)
		if clocks != 0 {
			t.Error("a live organization got a test clock")
		}
	})

	t.Run("another organization's clock cannot be moved", func(t *testing.T) {
		stranger := w.s.NewOrg(t, resolverstest.AllScopes)
		e := w.s.QueryError(t, stranger.Token, advance, vars{"input": vars{"organizationId": w.org.ID, "to": subBase.AddDate(1, 0, 0)}})
		wantInvalid(t, e, fieldErr{Type: "value_error", Loc: []any{"input", "organizationId"},
			Msg: "Organization not found.", Input: w.org.ID.String()})
	})

	t.Run("an organization without a clock reads none", func(t *testing.T) {
		fresh := w.s.NewOrg(t, resolverstest.AllScopes)
		var out struct{ TestClock *struct{ FrozenAt time.Time } }
		w.s.Query(t, fresh.Token, `{ testClock { frozenAt } }`, nil, &out)
		if out.TestClock != nil {
			t.Errorf("testClock = %+v, want null", out.TestClock)
		}
	})
}

// chargeOnce charges a saved card once at the processor, as the checkout that sold the
// subscription did.
func (w *subWorld) chargeOnce(tb testing.TB, methodID uuid.UUID) {
	tb.Helper()
	var processorID string
	w.s.Get(tb, &processorID, `SELECT processor_id FROM payment_methods WHERE id = $1`, methodID)
	if _, err := w.s.Deps.Payments.Charge(context.Background(), payment.ChargeRequest{Amount: 1000, Currency: "usd",
		PaymentMethodID: processorID, IdempotencyKey: uuid.NewString()}); err != nil {
		tb.Fatalf("first charge: %v", err)
	}
}

// TestCheckoutToRenewal follows a subscription from the checkout that sells it to its first
// renewals: the checkout charges a card that stops working after one charge, creates the
// subscription in its transaction, and the renewal a month later declines and goes past_due.
func TestCheckoutToRenewal(t *testing.T) {
	t.Parallel()
	w := newSubWorld(t, payment.TokenVisa)
	buyer := w.s.NewCustomer(t, w.org.ID, "")
	var created struct{ CreateCheckout struct{ ID uuid.UUID } }
	w.s.Query(t, w.org.Token, `mutation($p: UUID!, $c: UUID!) { createCheckout(input: {products: [$p], customerId: $c}) { id } }`,
		vars{"p": w.plan.ID, "c": buyer.ID}, &created)
	var confirmed struct {
		ConfirmCheckout struct {
			Status         string
			SubscriptionID *uuid.UUID
		}
	}
	w.s.Query(t, w.org.Token, `mutation($id: UUID!) { confirmCheckout(input: {id: $id, paymentToken: "tok_chargeCustomerFail"}) {
		status subscriptionId } }`, vars{"id": created.CreateCheckout.ID}, &confirmed)
	if confirmed.ConfirmCheckout.Status != "succeeded" || confirmed.ConfirmCheckout.SubscriptionID == nil {
		t.Fatalf("confirmed checkout: %+v", confirmed.ConfirmCheckout)
	}
	id := *confirmed.ConfirmCheckout.SubscriptionID
	s := w.get(t, id)
	if s.Status != "active" || !s.StartedAt.Equal(subBase) || !s.CurrentPeriodEnd.Equal(at(2, 28)) {
		t.Fatalf("the checkout's subscription: %+v", s)
	}
	w.advance(t, at(2, 28))
	if got := w.get(t, id); got.Status != "past_due" || !got.PastDueAt.Equal(at(2, 28)) {
		t.Errorf("after the declined renewal: %+v", got)
	}
	reasons := []string{}
	for _, o := range w.orders(t, id) {
		reasons = append(reasons, o.BillingReason+"/"+o.Status)
	}
	if diff := cmp.Diff([]string{"subscription_create/paid", "subscription_cycle/pending"}, reasons); diff != "" {
		t.Errorf("orders (-want +got):\n%s", diff)
	}
}

// TestOneBrokenRenewalDoesNotHoldUpTheOthers injects a fault into one subscription's cycle
// order and checks that the others still renew and the fault is reported.
func TestOneBrokenRenewalDoesNotHoldUpTheOthers(t *testing.T) {
	t.Parallel()
	w := newSubWorld(t, payment.TokenVisa)
	broken, healthy := w.subscribePlan(t), w.subscribePlan(t)
	w.s.Exec(t, `CREATE FUNCTION refuse_order() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'injected fault'; END $$`)
	w.s.Exec(t, `CREATE TRIGGER refuse_order BEFORE INSERT ON orders FOR EACH ROW
		WHEN (NEW.subscription_id = '`+broken.ID.String()+`') EXECUTE FUNCTION refuse_order()`)

	n, err := w.s.Resolver.RenewDue(context.Background(), &w.org.ID, at(2, 28), 100)
	if n != 1 || err == nil || !strings.Contains(err.Error(), broken.ID.String()) {
		t.Fatalf("RenewDue = %d, %v; want 1 renewal and an error naming %s", n, err, broken.ID)
	}
	if orders := w.orders(t, healthy.ID); len(orders) != 1 {
		t.Errorf("the healthy subscription has %d cycle orders, want 1", len(orders))
	}
	if orders := w.orders(t, broken.ID); len(orders) != 0 {
		t.Errorf("the broken subscription has %d cycle orders, want none", len(orders))
	}
	if got := w.get(t, broken.ID); got.Status != "active" || !got.CurrentPeriodEnd.Equal(at(2, 28)) {
		t.Errorf("the broken subscription changed: %+v", got)
	}
}

// TestCycleOrdersCarryTheTestClocksTime: an order made by a renewal under a test clock is
// dated in the organization's time, not the machine's.
func TestCycleOrdersCarryTheTestClocksTime(t *testing.T) {
	t.Parallel()
	w := newSubWorld(t, payment.TokenVisa)
	s := w.subscribePlan(t)
	w.advance(t, at(2, 28))
	var created time.Time
	w.s.Get(t, &created, `SELECT created_at FROM orders WHERE subscription_id = $1 AND billing_reason = 'subscription_cycle'`, s.ID)
	if !created.Equal(at(2, 28)) {
		t.Errorf("cycle order created at %s, want the clock's %s", created, at(2, 28))
	}
}
