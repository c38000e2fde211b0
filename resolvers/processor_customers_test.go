package resolvers_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// processorRecords reads the processor record kept on a customer and the distinct records
// its methods were saved to.
func processorRecords(tb testing.TB, s *resolverstest.Server, customerID uuid.UUID) (kept string, methods []string) {
	tb.Helper()
	s.Get(tb, &kept, `SELECT coalesce(processor_customer_id, '') FROM customers WHERE id = $1`, customerID)
	if err := s.DB.Select(&methods, `SELECT DISTINCT coalesce(processor_customer_id, '') FROM payment_methods
		WHERE customer_id = $1`, customerID); err != nil {
		tb.Fatal(err)
	}
	return kept, methods
}

func TestConcurrentSavesShareTheCustomersProcessorRecord(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	c := s.NewCustomer(t, org.ID, "")
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if err := s.Do(t, org.Token, ckSaveMethod, vars{"in": vars{"customerId": c.ID, "token": "tok_visa"}}).Decode(nil); err != nil {
				t.Errorf("save: %v", err)
			}
		})
	}
	wg.Wait()
	kept, methods := processorRecords(t, s, c.ID)
	if !strings.HasPrefix(kept, "cus_test_") || len(methods) != 1 || methods[0] != kept {
		t.Errorf("customer keeps %q, its methods are saved to %v; want one record for all", kept, methods)
	}
	if n := ckCount(t, s, `SELECT count(*) FROM payment_methods WHERE customer_id = $1`, c.ID); n != 10 {
		t.Errorf("%d methods saved, want 10", n)
	}
}

func TestStripeCustomersAgainstStripeMock(t *testing.T) {
	t.Parallel()
	withStripe, proxy := resolverstest.WithStripeMock(t)
	s := resolverstest.New(t, withStripe)
	org := s.NewOrg(t, resolverstest.AllScopes)

	t.Run("two cards of one customer are saved to the one Stripe customer the first created", func(t *testing.T) {
		before := len(proxy.RequestsTo("POST /v1/customers"))
		c := s.NewCustomer(t, org.ID, "")
		s.Query(t, org.Token, ckSaveMethod, vars{"in": vars{"customerId": c.ID, "token": "tok_visa"}}, nil)
		session := s.NewCustomerSession(t, org.ID, c.ID)
		s.Query(t, session, `mutation { portalSavePaymentMethod(input: {token: "tok_mastercard"}) { id } }`, nil, nil)
		created := proxy.RequestsTo("POST /v1/customers")[before:]
		kept, methods := processorRecords(t, s, c.ID)
		if len(created) != 1 || created[0].Form.Get("metadata[till_customer_id]") != c.ID.String() ||
			created[0].Form.Get("email") != *c.Email {
			t.Fatalf("customers created: %+v, want one for %s", created, c.ID)
		}
		if !strings.HasPrefix(kept, "cus_") || len(methods) != 1 || methods[0] != kept {
			t.Errorf("customer keeps %q, its methods are saved to %v", kept, methods)
		}
		intents := proxy.RequestsTo("POST /v1/setup_intents")
		for _, si := range intents[len(intents)-2:] {
			if si.Form.Get("customer") != kept {
				t.Errorf("a card was set up on %q, not %q", si.Form.Get("customer"), kept)
			}
		}
	})

	t.Run("a new buyer's Stripe customer is kept on the customer the checkout creates, and a later checkout of that email charges it", func(t *testing.T) {
		ebook := ckProduct(t, s, org.Token, "Ebook "+uuid.NewString()[:6], "", ckFixed(2000))
		email := "buyer-" + uuid.NewString()[:8] + "@example.com"
		buy := func(t *testing.T) uuid.UUID {
			t.Helper()
			c := ckNewCheckout(t, s, org.Token, vars{"products": []uuid.UUID{ebook.ID}})
			var out struct{ ConfirmCheckout ckCheckout }
			s.Query(t, "", ckConfirm, vars{"in": vars{"clientSecret": c.ClientSecret, "customerEmail": email,
				"paymentToken": "tok_visa"}}, &out)
			if out.ConfirmCheckout.Status != "succeeded" || out.ConfirmCheckout.CustomerID == nil {
				t.Fatalf("confirmed: %+v", out.ConfirmCheckout)
			}
			return *out.ConfirmCheckout.CustomerID
		}
		before := len(proxy.RequestsTo("POST /v1/customers"))
		first := buy(t)
		if second := buy(t); second != first {
			t.Fatalf("the second checkout bought for %s, not %s", second, first)
		}
		created := proxy.RequestsTo("POST /v1/customers")[before:]
		kept, methods := processorRecords(t, s, first)
		if len(created) != 1 || created[0].Form.Get("email") != email || !strings.HasPrefix(kept, "cus_") ||
			len(methods) != 1 || methods[0] != kept {
			t.Fatalf("customers created %+v; the customer keeps %q, its cards are saved to %v", created, kept, methods)
		}
		charges := proxy.RequestsTo("POST /v1/payment_intents")
		for _, pi := range charges[len(charges)-2:] {
			if pi.Form.Get("customer") != kept {
				t.Errorf("a charge names customer %q, not %q", pi.Form.Get("customer"), kept)
			}
		}
	})
}
