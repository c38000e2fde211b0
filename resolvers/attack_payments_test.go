package resolvers_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/internal/payment"
	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/storage"
	"till/storage/storagetest"
)

// TestASettledPaymentAlwaysBuysWhatWasPaidFor: two buyers confirm checkouts sharing a
// discount's last redemption with cards that need 3-D Secure; neither redeems it while
// waiting, and both holders then pass 3-D Secure, so both are charged. The second
// settlement must not leave money taken with nothing bought and its event retried.
func TestASettledPaymentAlwaysBuysWhatWasPaidFor(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	w := pendingWorld{s: s, org: s.NewOrg(t, resolverstest.AllScopes)}
	product := createProduct(t, s, w.org.Token, vars{"name": "Ebook", "prices": []vars{ckFixed(2000)}})
	last := ckDiscount(t, s, w.org.Token, vars{"name": "Last one", "type": "fixed", "amount": 500,
		"duration": "once", "maxRedemptions": 1})
	var ids []uuid.UUID
	for _, email := range []string{"a@example.com", "b@example.com"} {
		c := ckNewCheckout(t, s, w.org.Token, vars{"products": []uuid.UUID{product.ID}, "discountId": last,
			"customerEmail": email})
		var out struct{ ConfirmCheckout ckCheckout }
		s.Query(t, w.org.Token, ckConfirm, vars{"in": vars{"id": c.ID, "paymentToken": payment.TokenThreeDSecureRequired}}, &out)
		if out.ConfirmCheckout.Status != "confirmed" {
			t.Fatalf("%s: %s, want confirmed", email, out.ConfirmCheckout.Status)
		}
		ids = append(ids, c.ID)
	}
	for _, id := range ids {
		secret := w.processorMetadata(t, id)["intent_client_secret"]
		if code, body := w.authenticate(t, secret, "complete"); code != http.StatusOK {
			t.Fatalf("3-D Secure page: %d %s", code, body)
		}
	}
	w.runJobs(t)
	for _, id := range ids {
		st := ckGet(t, s, w.org.Token, id).Status
		orders := ckCount(t, s, `SELECT count(*) FROM orders WHERE checkout_id = $1`, id)
		if st != "succeeded" || orders != 1 {
			t.Errorf("checkout %s paid by its holder: status %s with %d orders, want succeeded with one", id, st, orders)
		}
	}
	if n := ckCount(t, s, `SELECT count(*) FROM jobs WHERE kind = $1 AND state <> 'completed'`, resolvers.JobStripeEvent); n != 0 {
		var errs []byte
		s.Get(t, &errs, `SELECT errors FROM jobs WHERE kind = 'stripe.event' AND state <> 'completed' LIMIT 1`)
		t.Errorf("%d payment events left unapplied, retried: %s", n, errs)
	}
}

// TestTheThreeDSecurePageRefusesOddSecrets: a client secret that is not text is not found,
// as any secret no payment waits under, rather than an internal error; the processor keeps
// its memory in PostgreSQL, as till serve runs it.
func TestTheThreeDSecurePageRefusesOddSecrets(t *testing.T) {
	t.Parallel()
	db := storagetest.New(t)
	s := resolverstest.NewWithDB(t, db, func(d *resolvers.Deps) {
		d.Payments = payment.NewTestProcessorIn(storage.TestPayments{DB: db})
	})
	for _, secret := range []string{"%ff", "pi_%00_secret_x", "%c3%28"} {
		form := url.Values{"outcome": {"complete"}}
		req := httptest.NewRequest(http.MethodPost, resolvers.TestPaymentPath+secret, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		s.Resolver.TestPaymentHandler().ServeHTTP(rec, req)
		if rec.Code != http.StatusNotFound {
			t.Errorf("secret %q: %d %s, want 404", secret, rec.Code, strings.TrimSpace(rec.Body.String()))
		}
	}
}

// TestAPortalRetryByBankDebitPaysOnlyWhenTheDebitSettles: a customer retrying a past-due
// renewal from the portal with a bank account that will bounce must not get the order paid
// and the subscription active before the debit settles, nor keep them once it fails.
func TestAPortalRetryByBankDebitPaysOnlyWhenTheDebitSettles(t *testing.T) {
	t.Parallel()
	w := newRetryWorld(t, payment.TokenChargeDeclined)
	got, refusal := w.confirm(t, vars{"confirmationTokenId": payment.TokenBankDebitInsufficient})
	if refusal != "" {
		t.Fatalf("retry refused: %s", refusal)
	}
	st := w.state(t)
	if got.Status == "succeeded" || st.Order == "paid" || st.Subscription == "active" {
		t.Errorf("while the debit processes: answer %s, %+v; want the order pending and the subscription past_due", got.Status, st)
	}
	if got.Status != "processing" || st.NextAttempt != nil {
		t.Errorf("while the debit processes: answer %s, next dunning attempt %v; want processing and none", got.Status, st.NextAttempt)
	}
	pendingWorld{s: w.s}.runJobs(t)
	if st := w.state(t); st.Order != "pending" || st.Subscription != "past_due" || st.NextAttempt == nil || st.Locked {
		t.Errorf("after the debit bounced: %+v, want the order pending, the subscription past_due, dunning resumed", st)
	}
}
