package resolvers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"till/internal/payment"
)

// retryWorld is a subscription whose first renewal (February 28) failed on the card the
// world was made with: it is past_due and its cycle order pending, retried by dunning on
// March 2. portal is the customer's session.
type retryWorld struct {
	*subWorld
	sub    subView
	order  uuid.UUID
	portal string
}

func newRetryWorld(tb testing.TB, cardToken string) *retryWorld {
	tb.Helper()
	w := &retryWorld{subWorld: newSubWorld(tb, cardToken)}
	w.sub = w.subscribePlan(tb)
	w.advance(tb, at(2, 28))
	w.s.Get(tb, &w.order, `SELECT id FROM orders WHERE subscription_id = $1 AND status = 'pending'`, w.sub.ID)
	w.portal = w.s.NewCustomerSession(tb, w.org.ID, w.customer.ID)
	return w
}

// confirmDoc retries an order's payment from the portal.
const confirmDoc = `mutation($id: UUID!, $in: PortalOrderConfirmPaymentInput!) {
	portalConfirmOrderPayment(id: $id, input: $in) { status clientSecret error } }`

// confirmation is a retry's answer.
type confirmation struct {
	Status       string  `json:"status"`
	ClientSecret *string `json:"clientSecret"`
	Error        *string `json:"error"`
}

// confirm retries the world's order with in and returns the answer, or the reason of the
// refusal.
func (w *retryWorld) confirm(tb testing.TB, in vars) (confirmation, string) {
	tb.Helper()
	res := w.s.Do(tb, w.portal, confirmDoc, vars{"id": w.order, "in": in})
	if len(res.Errors) > 0 {
		return confirmation{}, res.Errors[0].Extensions.Reason
	}
	var out struct{ PortalConfirmOrderPayment confirmation }
	if err := res.Decode(&out); err != nil {
		tb.Fatal(err)
	}
	return out.PortalConfirmOrderPayment, ""
}

// state is what the tests compare of the world after a retry.
type retryState struct {
	Order        string
	NextAttempt  *time.Time
	Subscription string
	Locked       bool
	// Payments lists the order's payments, oldest first: status, trigger and decline code.
	Payments []string
}

func (w *retryWorld) state(tb testing.TB) retryState {
	tb.Helper()
	var st retryState
	w.s.Get(tb, &st.Order, `SELECT status FROM orders WHERE id = $1`, w.order)
	w.s.Get(tb, &st.NextAttempt, `SELECT next_payment_attempt_at FROM orders WHERE id = $1`, w.order)
	w.s.Get(tb, &st.Locked, `SELECT payment_lock_acquired_at IS NOT NULL FROM orders WHERE id = $1`, w.order)
	st.Subscription = w.get(tb, w.sub.ID).Status
	if err := w.s.DB.Select(&st.Payments, `SELECT status || ' ' || coalesce(trigger, '-') || ' ' || coalesce(decline_reason, '-')
		FROM payments WHERE order_id = $1 ORDER BY created_at, id`, w.order); err != nil {
		tb.Fatal(err)
	}
	return st
}

// declinedRenewal is the payment the declined renewal left on the order.
const declinedRenewal = "failed - generic_decline"

func TestPortalConfirmOrderPayment(t *testing.T) {
	t.Parallel()
	retryAt := at(3, 2)
	declined, insufficient := "Your card was declined.", "Your card has insufficient funds."
	tests := []struct {
		name string
		// in builds the input in the world, which it may arrange first.
		in         func(t *testing.T, w *retryWorld) vars
		want       confirmation
		wantReason string
		wantState  retryState
		// wantCardSaved says whether the customer has one more saved card afterwards.
		wantCardSaved bool
	}{
		{name: "a new card pays the order and the subscription is active again",
			in:            func(*testing.T, *retryWorld) vars { return vars{"confirmationTokenId": payment.TokenVisa} },
			want:          confirmation{Status: "succeeded"},
			wantState:     retryState{Order: "paid", Subscription: "active", Payments: []string{declinedRenewal, "succeeded retry_customer -"}},
			wantCardSaved: true},
		{name: "a saved card pays the order too",
			in: func(t *testing.T, w *retryWorld) vars {
				return vars{"paymentMethodId": w.saveCard(t, w.customer.ID, payment.TokenMastercard)}
			},
			want:      confirmation{Status: "succeeded"},
			wantState: retryState{Order: "paid", Subscription: "active", Payments: []string{declinedRenewal, "succeeded retry_customer -"}}},
		{name: "a declined saved card answers failed and leaves dunning as it was",
			in:   func(_ *testing.T, w *retryWorld) vars { return vars{"paymentMethodId": w.card} },
			want: confirmation{Status: "failed", Error: &declined},
			wantState: retryState{Order: "pending", NextAttempt: &retryAt, Subscription: "past_due",
				Payments: []string{declinedRenewal, "failed retry_customer generic_decline"}}},
		{name: "a declined new card answers failed and is not kept",
			in:   func(*testing.T, *retryWorld) vars { return vars{"confirmationTokenId": payment.TokenInsufficientFunds} },
			want: confirmation{Status: "failed", Error: &insufficient},
			wantState: retryState{Order: "pending", NextAttempt: &retryAt, Subscription: "past_due",
				Payments: []string{declinedRenewal, "failed retry_customer insufficient_funds"}}},
		{name: "a token the processor does not know answers failed, recording nothing",
			in:   func(*testing.T, *retryWorld) vars { return vars{"confirmationTokenId": "tok_bogus"} },
			want: confirmation{Status: "failed", Error: ptrTo("No such token: 'tok_bogus'")},
			wantState: retryState{Order: "pending", NextAttempt: &retryAt, Subscription: "past_due",
				Payments: []string{declinedRenewal}}},
		{name: "a card that needs 3-D Secure answers requires_action and keeps the order locked",
			in: func(*testing.T, *retryWorld) vars {
				return vars{"confirmationTokenId": payment.TokenThreeDSecureRequired}
			},
			want: confirmation{Status: "requires_action", ClientSecret: ptrTo("")},
			wantState: retryState{Order: "pending", NextAttempt: &retryAt, Subscription: "past_due", Locked: true,
				Payments: []string{declinedRenewal, "pending retry_customer -"}},
			wantCardSaved: true},
		{name: "neither a card nor a token is refused",
			in:         func(*testing.T, *retryWorld) vars { return vars{} },
			wantReason: "PaymentRetryValidationError",
			wantState:  retryState{Order: "pending", NextAttempt: &retryAt, Subscription: "past_due", Payments: []string{declinedRenewal}}},
		{name: "both a card and a token are refused",
			in: func(_ *testing.T, w *retryWorld) vars {
				return vars{"paymentMethodId": w.card, "confirmationTokenId": payment.TokenVisa}
			},
			wantReason: "PaymentRetryValidationError",
			wantState:  retryState{Order: "pending", NextAttempt: &retryAt, Subscription: "past_due", Payments: []string{declinedRenewal}}},
		{name: "another customer's card is refused",
			in: func(t *testing.T, w *retryWorld) vars {
				other := w.s.NewCustomer(t, w.org.ID, "")
				return vars{"paymentMethodId": w.saveCard(t, other.ID, payment.TokenVisa)}
			},
			wantReason: "PaymentRetryValidationError",
			wantState:  retryState{Order: "pending", NextAttempt: &retryAt, Subscription: "past_due", Payments: []string{declinedRenewal}}},
		{name: "an order dunning no longer retries is not eligible",
			in: func(t *testing.T, w *retryWorld) vars {
				w.s.Exec(t, `UPDATE orders SET next_payment_attempt_at = NULL WHERE id = $1`, w.order)
				return vars{"confirmationTokenId": payment.TokenVisa}
			},
			wantReason: "OrderNotEligibleForRetry",
			wantState:  retryState{Order: "pending", Subscription: "past_due", Payments: []string{declinedRenewal}}},
		{name: "a retry under way refuses another",
			in: func(t *testing.T, w *retryWorld) vars {
				w.s.Exec(t, `UPDATE orders SET payment_lock_acquired_at = $2 WHERE id = $1`, w.order, at(2, 28).Add(-30*time.Minute))
				return vars{"confirmationTokenId": payment.TokenVisa}
			},
			wantReason: "PaymentAlreadyInProgress",
			wantState:  retryState{Order: "pending", NextAttempt: &retryAt, Subscription: "past_due", Locked: true, Payments: []string{declinedRenewal}}},
		{name: "a lock older than an hour is stale and holds nothing",
			in: func(t *testing.T, w *retryWorld) vars {
				w.s.Exec(t, `UPDATE orders SET payment_lock_acquired_at = $2 WHERE id = $1`, w.order, at(2, 28).Add(-time.Hour))
				return vars{"confirmationTokenId": payment.TokenVisa}
			},
			want:          confirmation{Status: "succeeded"},
			wantState:     retryState{Order: "paid", Subscription: "active", Payments: []string{declinedRenewal, "succeeded retry_customer -"}},
			wantCardSaved: true},
		{name: "five retries that reached an outcome are the most an order gets",
			in: func(t *testing.T, w *retryWorld) vars {
				for range 5 {
					if got, reason := w.confirm(t, vars{"paymentMethodId": w.card}); got.Status != "failed" {
						t.Fatalf("a declined retry answered %+v (%s)", got, reason)
					}
				}
				return vars{"confirmationTokenId": payment.TokenVisa}
			},
			wantReason: "ManualRetryLimitExceeded",
			wantState: retryState{Order: "pending", NextAttempt: &retryAt, Subscription: "past_due", Payments: []string{declinedRenewal,
				"failed retry_customer generic_decline", "failed retry_customer generic_decline", "failed retry_customer generic_decline",
				"failed retry_customer generic_decline", "failed retry_customer generic_decline"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newRetryWorld(t, payment.TokenChargeDeclined)
			in := tt.in(t, w)
			cards := w.savedCards(t)
			got, reason := w.confirm(t, in)
			if reason != tt.wantReason {
				t.Fatalf("refusal %q, want %q (answer %+v)", reason, tt.wantReason, got)
			}
			if got.ClientSecret != nil && tt.want.ClientSecret != nil && *got.ClientSecret != "" {
				got.ClientSecret = ptrTo("") // the secret is the processor's; that there is one is what counts
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantState, w.state(t)); diff != "" {
				t.Errorf("afterwards (-want +got):\n%s", diff)
			}
			if saved := w.savedCards(t) - cards; saved != map[bool]int{true: 1}[tt.wantCardSaved] {
				t.Errorf("%d cards saved for the customer", saved)
			}
		})
	}
}

// savedCards counts the customer's saved payment methods.
func (w *retryWorld) savedCards(tb testing.TB) int {
	tb.Helper()
	var n int
	w.s.Get(tb, &n, `SELECT count(*) FROM payment_methods WHERE customer_id = $1 AND deleted_at IS NULL`, w.customer.ID)
	return n
}

func ptrTo[T any](v T) *T { return &v }

func TestPortalConfirmOrderPaymentEffects(t *testing.T) {
	t.Parallel()

	t.Run("a paid retry records what a paid dunning retry records, and the card becomes the subscription's", func(t *testing.T) {
		w := newRetryWorld(t, payment.TokenChargeDeclined)
		before := len(w.events(t, w.sub.ID))
		if got, reason := w.confirm(t, vars{"confirmationTokenId": payment.TokenVisa}); got.Status != "succeeded" {
			t.Fatalf("answer %+v (%s)", got, reason)
		}
		if diff := cmp.Diff([]string{"subscription.updated", "subscription.active"}, w.events(t, w.sub.ID)[before:]); diff != "" {
			t.Errorf("subscription events (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"order.created", "order.updated", "order.updated", "order.paid"}, w.events(t, w.order)); diff != "" {
			t.Errorf("order events (-want +got):\n%s", diff)
		}
		var method, paidWith uuid.UUID
		w.s.Get(t, &method, `SELECT payment_method_id FROM subscriptions WHERE id = $1`, w.sub.ID)
		w.s.Get(t, &paidWith, `SELECT payment_method_id FROM payments WHERE order_id = $1 AND status = 'succeeded'`, w.order)
		if method != paidWith || method == w.card {
			t.Errorf("the subscription charges %s, the retry paid with %s (the old card %s)", method, paidWith, w.card)
		}
		if n := w.advance(t, at(3, 31)); n != 1 {
			t.Errorf("%d renewal steps after the retry, want the next period end only", n)
		}
		if got := w.get(t, w.sub.ID); got.Status != "active" {
			t.Errorf("the next renewal charged the new card and left the subscription %s", got.Status)
		}
	})

	t.Run("declined retries neither shorten nor move dunning", func(t *testing.T) {
		w := newRetryWorld(t, payment.TokenChargeDeclined)
		for range 3 {
			w.confirm(t, vars{"paymentMethodId": w.card})
		}
		w.advance(t, at(3, 2))
		want := []subOrder{{BillingReason: "subscription_cycle", Status: "pending", TotalAmount: 1000,
			NextPaymentAttemptAt: ptrTo(at(3, 6)), FailedPayments: 5}}
		if diff := cmp.Diff(want, w.orders(t, w.sub.ID)); diff != "" {
			t.Errorf("orders after the first dunning retry (-want +got):\n%s", diff)
		}
	})

	t.Run("dunning waits while the customer authenticates, and goes on once the lock is stale", func(t *testing.T) {
		w := newRetryWorld(t, payment.TokenChargeDeclined)
		w.advance(t, at(3, 2).Add(-30*time.Minute))
		if got, _ := w.confirm(t, vars{"confirmationTokenId": payment.TokenThreeDSecureRequired}); got.Status != "requires_action" {
			t.Fatalf("answer %+v", got)
		}
		if n := w.advance(t, at(3, 2)); n != 0 {
			t.Errorf("%d renewal steps while the retry holds the order", n)
		}
		if got := w.state(t).Payments; len(got) != 2 {
			t.Errorf("payments while the retry holds the order: %v", got)
		}
		if n := w.advance(t, at(3, 2).Add(time.Hour)); n != 1 {
			t.Errorf("%d renewal steps once the lock is stale, want the retry", n)
		}
		if got := w.state(t); got.Order != "pending" || !got.NextAttempt.Equal(at(3, 6)) {
			t.Errorf("after the dunning retry: %+v", got)
		}
	})

	t.Run("the payment status is the latest payment with an outcome, as upstream keeps none while the customer authenticates", func(t *testing.T) {
		w := newRetryWorld(t, payment.TokenChargeDeclined)
		status := func() (string, *string) {
			var out struct {
				Me struct {
					OrderPaymentStatus struct {
						Status string
						Error  *string
					}
				}
			}
			w.s.Query(t, w.portal, `query($id: UUID!) { me { orderPaymentStatus(id: $id) { status error } } }`, vars{"id": w.order}, &out)
			return out.Me.OrderPaymentStatus.Status, out.Me.OrderPaymentStatus.Error
		}
		if s, e := status(); s != "failed" || e == nil || *e != "Your card was declined." {
			t.Errorf("after the declined renewal: %s %v", s, e)
		}
		w.confirm(t, vars{"confirmationTokenId": payment.TokenThreeDSecureRequired})
		if s, _ := status(); s != "failed" {
			t.Errorf("while the customer authenticates: %s", s)
		}
		w.s.Exec(t, `UPDATE orders SET payment_lock_acquired_at = NULL WHERE id = $1`, w.order)
		w.confirm(t, vars{"confirmationTokenId": payment.TokenVisa})
		if s, e := status(); s != "succeeded" || e != nil {
			t.Errorf("after the paid retry: %s %v", s, e)
		}
		other := w.s.NewPaidOrder(t, w.org.ID, w.customer.ID, w.plan.ID, nil)
		w.order = other
		if s, e := status(); s != "no_payment" || e != nil {
			t.Errorf("an order without payments: %s %v", s, e)
		}
	})
}

func TestSettleOrderIntent(t *testing.T) {
	t.Parallel()
	// A renewal charged a card whose issuer wants the holder to authenticate: the attempt
	// failed with the intent recorded.
	renewal := func(t *testing.T) (*retryWorld, string) {
		w := newRetryWorld(t, payment.TokenThreeDSecureRequired)
		var intent string
		w.s.Get(t, &intent, `SELECT coalesce(intent_id, '') FROM payments WHERE order_id = $1`, w.order)
		return w, intent
	}
	// The customer retried a declined renewal with such a card from the portal.
	manual := func(t *testing.T) (*retryWorld, string) {
		w := newRetryWorld(t, payment.TokenChargeDeclined)
		if got, reason := w.confirm(t, vars{"confirmationTokenId": payment.TokenThreeDSecureRequired}); got.Status != "requires_action" {
			t.Fatalf("answer %+v (%s)", got, reason)
		}
		var intent string
		w.s.Get(t, &intent, `SELECT intent_id FROM payments WHERE order_id = $1 AND status = 'pending'`, w.order)
		return w, intent
	}
	paidEvents := [][]string{{"subscription.updated", "subscription.active"}, {"order.updated", "order.paid"}}
	tests := []struct {
		name    string
		waiting func(*testing.T) (*retryWorld, string)
		outcome payment.IntentOutcome // IntentID "" is the waiting intent
		// wantHandled is what the first and the repeated call report.
		wantHandled [2]bool
		wantOrder   string
		wantSub     string
		wantPayment string // the waiting payment afterwards: status and charge or decline code
		wantLocked  bool
		wantEvents  [][]string // of the subscription, then of the order, over both calls
	}{
		{name: "a renewal the holder authenticated after all is paid, once", waiting: renewal,
			outcome:     payment.IntentOutcome{ChargeID: "ch_later", Amount: 1000, Currency: "usd", Succeeded: true},
			wantHandled: [2]bool{true, false}, wantOrder: "paid", wantSub: "active", wantPayment: "succeeded ch_later",
			wantEvents: paidEvents},
		{name: "a renewal whose authentication failed stays with dunning", waiting: renewal,
			outcome:     payment.IntentOutcome{DeclineCode: "authentication_failed", Message: "Authentication failed."},
			wantHandled: [2]bool{true, true}, wantOrder: "pending", wantSub: "past_due", wantPayment: "failed authentication_failed",
			wantEvents: [][]string{{}, {}}},
		{name: "a manual retry the customer authenticated pays the order, once, and releases the lock", waiting: manual,
			outcome:     payment.IntentOutcome{ChargeID: "ch_3ds", Amount: 1000, Currency: "usd", Succeeded: true},
			wantHandled: [2]bool{true, false}, wantOrder: "paid", wantSub: "active", wantPayment: "succeeded ch_3ds",
			wantEvents: paidEvents},
		{name: "an intent that paid without a charge is named by the intent", waiting: manual,
			outcome:     payment.IntentOutcome{Amount: 1000, Currency: "usd", Succeeded: true},
			wantHandled: [2]bool{true, false}, wantOrder: "paid", wantSub: "active", wantPayment: "succeeded pi_",
			wantEvents: paidEvents},
		{name: "a manual retry the customer abandoned releases the lock and leaves the order pending", waiting: manual,
			outcome:     payment.IntentOutcome{DeclineCode: "payment_intent_authentication_failure", Message: "Authentication failed."},
			wantHandled: [2]bool{true, true}, wantOrder: "pending", wantSub: "past_due",
			wantPayment: "failed payment_intent_authentication_failure", wantEvents: [][]string{{}, {}}},
		{name: "an intent no order waits on is not handled", waiting: manual,
			outcome:     payment.IntentOutcome{IntentID: "pi_unknown", ChargeID: "ch_x", Succeeded: true},
			wantHandled: [2]bool{false, false}, wantOrder: "pending", wantSub: "past_due", wantPayment: "pending -",
			wantLocked: true, wantEvents: [][]string{{}, {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, intent := tt.waiting(t)
			if intent == "" {
				t.Fatal("no intent recorded for the waiting payment")
			}
			in := tt.outcome
			if in.IntentID == "" {
				in.IntentID = intent
			}
			subBefore, orderBefore := len(w.events(t, w.sub.ID)), len(w.events(t, w.order))
			for i, want := range tt.wantHandled {
				handled, err := w.s.Resolver.SettleOrderIntentForTest(t.Context(), "stripe", in)
				if err != nil || handled != want {
					t.Fatalf("call %d: handled %v (%v), want %v", i+1, handled, err, want)
				}
			}
			st := w.state(t)
			var paid string
			w.s.Get(t, &paid, `SELECT status || ' ' || coalesce(processor_id, decline_reason, '-') FROM payments
				WHERE order_id = $1 AND intent_id = $2`, w.order, intent)
			if st.Order != tt.wantOrder || st.Subscription != tt.wantSub || st.Locked != tt.wantLocked ||
				!strings.HasPrefix(paid, tt.wantPayment) {
				t.Errorf("afterwards: order %s, subscription %s, payment %q, locked %v; want %s, %s, %q, %v",
					st.Order, st.Subscription, paid, st.Locked, tt.wantOrder, tt.wantSub, tt.wantPayment, tt.wantLocked)
			}
			got := [][]string{w.events(t, w.sub.ID)[subBefore:], w.events(t, w.order)[orderBefore:]}
			if diff := cmp.Diff(tt.wantEvents, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("events over both calls (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("an outcome for an order that is no longer pending is not handled", func(t *testing.T) {
		t.Parallel()
		w, intent := manual(t)
		w.s.Exec(t, `UPDATE orders SET status = 'void' WHERE id = $1`, w.order)
		handled, err := w.s.Resolver.SettleOrderIntentForTest(t.Context(), "stripe", payment.IntentOutcome{IntentID: intent, Succeeded: true})
		if err != nil || handled {
			t.Errorf("handled %v (%v)", handled, err)
		}
	})
}
