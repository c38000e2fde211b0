package resolvers_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/internal/jobs"
	"till/internal/payment"
	"till/resolvers"
	"till/resolvers/resolverstest"
)

// pendingWorld is a server on the test processor, whose events a test delivers by running
// the job worker.
type pendingWorld struct {
	s   *resolverstest.Server
	org resolverstest.Org
}

// runJobs runs the queued jobs (the processor's events among them) until none is due.
func (w pendingWorld) runJobs(t *testing.T) {
	t.Helper()
	worker := &jobs.Worker{DB: w.s.DB, Handlers: w.s.Resolver.JobHandlers()}
	for range 10 {
		n, err := worker.RunOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// authenticate answers the test processor's 3-D Secure page for the payment waiting under
// secret, as the card holder would, and returns the page's status and answer.
func (w pendingWorld) authenticate(t *testing.T, secret, outcome string) (int, string) {
	t.Helper()
	form := url.Values{"outcome": {outcome}}
	req := httptest.NewRequest(http.MethodPost, resolvers.TestPaymentPath+secret, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	w.s.Resolver.TestPaymentHandler().ServeHTTP(rec, req)
	return rec.Code, strings.TrimSpace(rec.Body.String())
}

// confirm confirms a new checkout of product with token and returns it as confirmed.
func (w pendingWorld) confirm(t *testing.T, product uuid.UUID, email, token string) ckCheckout {
	t.Helper()
	c := ckNewCheckout(t, w.s, w.org.Token, vars{"products": []uuid.UUID{product}, "customerEmail": email})
	var out struct{ ConfirmCheckout ckCheckout }
	w.s.Query(t, w.org.Token, ckConfirm, vars{"in": vars{"id": c.ID, "paymentToken": token}}, &out)
	return out.ConfirmCheckout
}

// processorMetadata is the checkout's payment_processor_metadata as its buyer reads it.
func (w pendingWorld) processorMetadata(t *testing.T, id uuid.UUID) map[string]string {
	t.Helper()
	var raw []byte
	w.s.Get(t, &raw, `SELECT payment_processor_metadata FROM checkouts WHERE id = $1`, id)
	out := map[string]string{}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCheckoutPaymentsThatFinishLater(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	w := pendingWorld{s: s, org: s.NewOrg(t, resolverstest.AllScopes)}
	ben := newBenefit(t, s, w.org.Token, "Access")
	product := createProduct(t, s, w.org.Token, vars{"name": "Ebook", "benefitIds": []uuid.UUID{ben.ID},
		"prices": []vars{ckFixed(2000)}})

	for _, tc := range []struct {
		name, token, waiting string
		outcome              string // the holder's answer on the 3-D Secure page; "" for a bank debit
		paid                 bool
	}{
		{"3-D Secure passed", payment.TokenThreeDSecureRequired, "requires_action", "complete", true},
		{"3-D Secure failed", payment.TokenThreeDSecureRequired, "requires_action", "fail", false},
		{"a bank debit that settles", payment.TokenBankDebit, "processing", "", true},
		{"a bank debit that fails", payment.TokenBankDebitInsufficient, "processing", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			email := strings.ReplaceAll(tc.name, " ", "-") + "@example.com"
			grants := ckCount(t, s, `SELECT count(*) FROM benefit_grants WHERE organization_id = $1`, w.org.ID)
			c := w.confirm(t, product.ID, email, tc.token)
			meta := w.processorMetadata(t, c.ID)
			if c.Status != "confirmed" || meta["intent_status"] != tc.waiting {
				t.Fatalf("confirmed: status %s, metadata %v; want confirmed and %s", c.Status, meta, tc.waiting)
			}
			secret := meta["intent_client_secret"]
			if (tc.outcome != "") != (secret != "") {
				t.Fatalf("client secret %q for a payment that waits for %s", secret, tc.waiting)
			}
			if rows := ckPurchaseRows(t, s, w.org.ID, c.ID); rows.Orders != 0 || rows.Grants != grants {
				t.Fatalf("bought before the payment finished: %+v", rows)
			}
			e := s.QueryError(t, w.org.Token, ckConfirm, vars{"in": vars{"id": c.ID, "paymentToken": payment.TokenVisa}})
			wantError(t, e, "CONFLICT", "NotOpenCheckout")
			w.s.Exec(t, `UPDATE checkouts SET modified_at = now() - interval '1 hour' WHERE id = $1`, c.ID)
			if n, err := s.Resolver.ReopenStaleCheckouts(context.Background(), s.Clock.Now()); err != nil || n != 0 {
				t.Fatalf("a waiting checkout was taken for stale: %d, %v", n, err)
			}
			if tc.outcome != "" {
				code, body := w.authenticate(t, secret, tc.outcome)
				want := map[bool]string{true: `{"status":"succeeded"}`, false: `{"status":"requires_payment_method"}`}[tc.paid]
				if code != http.StatusOK || body != want {
					t.Fatalf("3-D Secure page: %d %s, want 200 %s", code, body, want)
				}
				// The holder answering twice, and the event arriving twice, change nothing more.
				w.authenticate(t, secret, "complete")
			}
			w.runJobs(t)
			got := ckGet(t, s, w.org.Token, c.ID)
			rows := ckPurchaseRows(t, s, w.org.ID, c.ID)
			meta = w.processorMetadata(t, c.ID)
			if tc.paid {
				if got.Status != "succeeded" || rows.Orders != 1 || meta["intent_status"] != "succeeded" {
					t.Fatalf("after the payment: status %s, rows %+v, metadata %v; want succeeded with one order", got.Status, rows, meta)
				}
				if n := ckCount(t, s, `SELECT count(*) FROM payments p JOIN orders o ON o.id = p.order_id
					WHERE o.checkout_id = $1 AND o.status = 'paid' AND p.status = 'succeeded'
					AND p.processor_id LIKE 'ch_test_%'`, c.ID); n != 1 {
					t.Errorf("%d paid orders with the settled charge, want 1", n)
				}
				return
			}
			if got.Status != "open" || rows.Orders != 0 || len(meta) != 0 {
				t.Fatalf("after the failure: status %s, rows %+v, metadata %v; want open, nothing bought", got.Status, rows, meta)
			}
			var out struct{ ConfirmCheckout ckCheckout }
			s.Query(t, w.org.Token, ckConfirm, vars{"in": vars{"id": c.ID, "paymentToken": payment.TokenVisa}}, &out)
			if out.ConfirmCheckout.Status != "succeeded" {
				t.Errorf("another card after the failure: %s, want succeeded", out.ConfirmCheckout.Status)
			}
		})
	}

	t.Run("the 3-D Secure page answers only for a payment that waits", func(t *testing.T) {
		if code, _ := w.authenticate(t, "pi_test_nothing_secret_nothing", "complete"); code != http.StatusNotFound {
			t.Errorf("unknown secret: %d, want 404", code)
		}
		c := w.confirm(t, product.ID, "page@example.com", payment.TokenThreeDSecureRequired)
		secret := w.processorMetadata(t, c.ID)["intent_client_secret"]
		if code, _ := w.authenticate(t, secret, "maybe"); code != http.StatusBadRequest {
			t.Errorf("outcome maybe: %d, want 400", code)
		}
		rec := httptest.NewRecorder()
		s.Resolver.TestPaymentHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, resolvers.TestPaymentPath+secret, nil))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `value="complete"`) {
			t.Errorf("the page: %d %s", rec.Code, rec.Body.String())
		}
		sp, err := payment.NewStripe(payment.StripeConfig{SecretKey: "sk_test_none"})
		if err != nil {
			t.Fatal(err)
		}
		onStripe := resolverstest.NewApp(t, s.DB, func(d *resolvers.Deps) { d.Payments = sp })
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(method, resolvers.TestPaymentPath+secret, strings.NewReader("outcome=complete"))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			onStripe.Resolver.TestPaymentHandler().ServeHTTP(rec, req)
			if rec.Code != http.StatusNotFound {
				t.Errorf("%s on Stripe: %d, want 404: only the test processor has the page", method, rec.Code)
			}
		}
	})

	t.Run("a card whose holder disputes the payment opens a dispute on the order", func(t *testing.T) {
		c := w.confirm(t, product.ID, "dispute@example.com", payment.TokenCreateDispute)
		if c.Status != "succeeded" {
			t.Fatalf("status %s, want succeeded", c.Status)
		}
		w.runJobs(t)
		if n := ckCount(t, s, `SELECT count(*) FROM disputes d JOIN orders o ON o.id = d.order_id
			WHERE o.checkout_id = $1 AND d.status = 'needs_response' AND d.amount = 2000`, c.ID); n != 1 {
			t.Errorf("%d disputes on the order, want 1", n)
		}
	})
}

// TestARenewalTheCustomerAuthenticatesFromThePortal: a renewal whose card asks for 3-D
// Secure leaves the subscription past_due; the customer retries from the portal with such
// a card, answers the test processor's page, and the processor's event pays the order and
// makes the subscription active again, once however often the answer comes.
func TestARenewalTheCustomerAuthenticatesFromThePortal(t *testing.T) {
	t.Parallel()
	w := newRetryWorld(t, payment.TokenThreeDSecureRequired)
	if st := w.state(t); st.Order != "pending" || st.Subscription != "past_due" {
		t.Fatalf("after the renewal: %+v, want pending and past_due", st)
	}
	got, refusal := w.confirm(t, vars{"confirmationTokenId": payment.TokenThreeDSecureRequired})
	if refusal != "" || got.Status != "requires_action" || got.ClientSecret == nil {
		t.Fatalf("retry: %+v %s, want requires_action with a client secret", got, refusal)
	}
	page := pendingWorld{s: w.s}
	for range 2 {
		if code, body := page.authenticate(t, *got.ClientSecret, "complete"); code != http.StatusOK {
			t.Fatalf("3-D Secure page: %d %s", code, body)
		}
	}
	page.runJobs(t)
	st := w.state(t)
	if st.Order != "paid" || st.Subscription != "active" || st.Locked {
		t.Errorf("after the customer authenticated: %+v, want the order paid and the subscription active", st)
	}
	var paid int
	w.s.Get(t, &paid, `SELECT count(*) FROM payments WHERE order_id = $1 AND status = 'succeeded'`, w.order)
	if paid != 1 {
		t.Errorf("%d succeeded payments of the order, want 1", paid)
	}
}

// TestAPaymentForAPurchaseRefusedAfterItSettledIsGivenBack: the customer a waiting checkout
// was for is deleted while its holder authenticates; the purchase can no longer be made, so
// the settled payment is refunded, once, and the checkout fails instead of retrying forever.
func TestAPaymentForAPurchaseRefusedAfterItSettledIsGivenBack(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	w := pendingWorld{s: s, org: s.NewOrg(t, resolverstest.AllScopes)}
	product := createProduct(t, s, w.org.Token, vars{"name": "Ebook", "prices": []vars{ckFixed(2000)}})
	cust := s.NewCustomer(t, w.org.ID, "")
	c := ckNewCheckout(t, s, w.org.Token, vars{"products": []uuid.UUID{product.ID}, "customerId": cust.ID})
	var out struct{ ConfirmCheckout ckCheckout }
	s.Query(t, w.org.Token, ckConfirm, vars{"in": vars{"id": c.ID, "paymentToken": payment.TokenThreeDSecureRequired}}, &out)
	if out.ConfirmCheckout.Status != "confirmed" {
		t.Fatalf("confirmed: %s", out.ConfirmCheckout.Status)
	}
	s.Query(t, w.org.Token, `mutation($id: UUID!) { deleteCustomer(id: $id) { id } }`, vars{"id": cust.ID}, nil)
	if code, body := w.authenticate(t, w.processorMetadata(t, c.ID)["intent_client_secret"], "complete"); code != http.StatusOK {
		t.Fatalf("3-D Secure page: %d %s", code, body)
	}
	w.runJobs(t)
	if st := ckGet(t, s, w.org.Token, c.ID).Status; st != "failed" {
		t.Errorf("checkout %s, want failed", st)
	}
	if n := ckCount(t, s, `SELECT count(*) FROM orders WHERE checkout_id = $1`, c.ID); n != 0 {
		t.Errorf("%d orders, want none", n)
	}
	if n := ckCount(t, s, `SELECT count(*) FROM jobs WHERE kind = $1 AND state <> 'completed'`, resolvers.JobStripeEvent); n != 0 {
		t.Errorf("%d payment events left to retry, want none", n)
	}
	// The charge was given back: refunding it again is refused as fully refunded.
	var charge string
	s.Get(t, &charge, `SELECT payload -> 'data' -> 'object' ->> 'latest_charge' FROM processor_events
		WHERE type = 'payment_intent.succeeded'`)
	_, err := s.Deps.Payments.Refund(context.Background(), payment.RefundRequest{ChargeID: charge, Amount: 1, Currency: "usd"})
	var refusal *payment.RefundError
	if !errors.As(err, &refusal) || refusal.Code != "charge_already_refunded" {
		t.Errorf("refunding the charge again: %v, want charge_already_refunded", err)
	}
}
