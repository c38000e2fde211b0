package resolvers_test

import (
	"testing"
	"time"

	"till/internal/payment"
)

// TestRenewalsPaidByBankDebit renews a subscription whose payment method is a bank debit:
// the renewal leaves the order pending and the subscription active while the debit
// processes, and nothing retries it meanwhile; the processor's event then pays the order, or
// hands it to dunning (past_due, the first retry scheduled) when the debit failed.
func TestRenewalsPaidByBankDebit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, token  string
		order, sub   string // once the debit settled
		payments     []string
		retryPlanned bool
	}{
		{"a debit that settles pays the renewal", payment.TokenBankDebit, "paid", "active",
			[]string{"succeeded - -"}, false},
		{"a debit that fails starts dunning", payment.TokenBankDebitInsufficient, "pending", "past_due",
			[]string{"failed - insufficient_funds"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newRetryWorldAt(t, tc.token)
			st := w.state(t)
			if st.Order != "pending" || st.Subscription != "active" || st.NextAttempt != nil ||
				len(st.Payments) != 1 || st.Payments[0] != "pending - -" {
				t.Fatalf("while the debit processes: %+v, want a pending order, an active subscription, no retry", st)
			}
			w.advance(t, at(3, 10)) // past every dunning retry of a declined card
			if st := w.state(t); st.Order != "pending" || len(st.Payments) != 1 {
				t.Fatalf("dunning touched a processing debit: %+v", st)
			}
			pendingWorld{s: w.s}.runJobs(t)
			st = w.state(t)
			if st.Order != tc.order || st.Subscription != tc.sub || (st.NextAttempt != nil) != tc.retryPlanned ||
				len(st.Payments) != 1 || st.Payments[0] != tc.payments[0] {
				t.Errorf("once settled: %+v; want order %s, subscription %s, payments %v, a retry planned %v",
					st, tc.order, tc.sub, tc.payments, tc.retryPlanned)
			}
			if tc.retryPlanned && !st.NextAttempt.After(at(3, 10).Add(-time.Second)) {
				t.Errorf("retry planned at %s, want after the failure was learned", st.NextAttempt)
			}
		})
	}
}

// newRetryWorldAt is a subscription paid by a method saved from token, renewed once on
// February 28.
func newRetryWorldAt(tb testing.TB, token string) *retryWorld {
	tb.Helper()
	w := &retryWorld{subWorld: newSubWorld(tb, token)}
	w.sub = w.subscribePlan(tb)
	w.advance(tb, at(2, 28))
	w.s.Get(tb, &w.order, `SELECT id FROM orders WHERE subscription_id = $1 AND billing_reason = 'subscription_cycle'`, w.sub.ID)
	return w
}
