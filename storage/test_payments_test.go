package storage_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"till/internal/payment"
	"till/storage"
	"till/storage/storagetest"
)

// TestTheTestProcessorRemembersInTheDatabase runs two processors over one database, as two
// processes of one installation: a card saved through one behaves the same through the
// other, and an idempotency key charges once across both, however many callers race.
func TestTheTestProcessorRemembersInTheDatabase(t *testing.T) {
	db := storagetest.New(t)
	ctx := context.Background()
	one := payment.NewTestProcessorIn(storage.TestPayments{DB: db})
	two := payment.NewTestProcessorIn(storage.TestPayments{DB: db})
	charge := func(p *payment.TestProcessor, method, key string) (payment.Charge, string) {
		t.Helper()
		c, err := p.Charge(ctx, payment.ChargeRequest{Amount: 1000, Currency: "usd", PaymentMethodID: method, IdempotencyKey: key})
		var d *payment.DeclineError
		if errors.As(err, &d) {
			return c, d.DeclineCode
		}
		if err != nil {
			t.Fatal(err)
		}
		return c, ""
	}

	t.Run("a card that stops working stops in every process", func(t *testing.T) {
		m, err := one.SavePaymentMethod(ctx, payment.SaveRequest{Token: payment.TokenChargeCustomerFail})
		if err != nil {
			t.Fatal(err)
		}
		if _, decline := charge(two, m.ProcessorID, "first"); decline != "" {
			t.Fatalf("first charge declined: %s", decline)
		}
		if _, decline := charge(one, m.ProcessorID, "second"); decline != "generic_decline" {
			t.Errorf("second charge through the other process: %q, want generic_decline", decline)
		}
		if _, decline := charge(two, m.ProcessorID, "first"); decline != "" {
			t.Errorf("replaying the first key: %q, want its first outcome", decline)
		}
	})
	t.Run("a method keeps its customer: a charge naming another is refused everywhere and counts nothing", func(t *testing.T) {
		m, err := one.SavePaymentMethod(ctx, payment.SaveRequest{Token: payment.TokenChargeCustomerFail,
			Customer: payment.CustomerRef{TillID: "till-1"}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = two.Charge(ctx, payment.ChargeRequest{Amount: 1000, Currency: "usd", PaymentMethodID: m.ProcessorID,
			ProcessorCustomerID: "cus_test_other", IdempotencyKey: "wrong"})
		if err == nil || payment.IsDecline(err) {
			t.Fatalf("charge naming another customer: %v, want a refusal", err)
		}
		if _, err := two.Charge(ctx, payment.ChargeRequest{Amount: 1000, Currency: "usd", PaymentMethodID: m.ProcessorID,
			ProcessorCustomerID: m.ProcessorCustomerID, IdempotencyKey: "wrong"}); err != nil {
			t.Errorf("the card's first charge, under the refused charge's key: %v", err)
		}
	})
	t.Run("a declined token declines everywhere, and a replay says so again", func(t *testing.T) {
		m, err := two.SavePaymentMethod(ctx, payment.SaveRequest{Token: payment.TokenInsufficientFunds})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []*payment.TestProcessor{one, two, one} {
			if _, decline := charge(p, m.ProcessorID, "poor"); decline != "insufficient_funds" {
				t.Errorf("declined with %q, want insufficient_funds", decline)
			}
		}
	})
	t.Run("racing callers with one key charge once", func(t *testing.T) {
		m, err := one.SavePaymentMethod(ctx, payment.SaveRequest{Token: payment.TokenVisa})
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		ids := map[string]int{}
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := []*payment.TestProcessor{one, two}[i%2]
				c, err := p.Charge(ctx, payment.ChargeRequest{Amount: 500, Currency: "usd", PaymentMethodID: m.ProcessorID, IdempotencyKey: "race"})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				ids[c.ID]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		var charged int
		if err := db.Get(&charged, `SELECT charged FROM test_payment_methods WHERE id = $1`, m.ProcessorID); err != nil {
			t.Fatal(err)
		}
		if len(ids) != 1 || charged != 1 {
			t.Errorf("%d distinct charges, the method charged %d times; want one", len(ids), charged)
		}
	})
	t.Run("racing charges of one method with their own keys are all counted", func(t *testing.T) {
		m, err := one.SavePaymentMethod(ctx, payment.SaveRequest{Token: payment.TokenChargeCustomerFail})
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		paid := 0
		var wg sync.WaitGroup
		for i := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := []*payment.TestProcessor{one, two}[i%2]
				_, err := p.Charge(ctx, payment.ChargeRequest{Amount: 500, Currency: "usd", PaymentMethodID: m.ProcessorID,
					IdempotencyKey: fmt.Sprintf("own-%d", i)})
				if err == nil {
					mu.Lock()
					paid++
					mu.Unlock()
				} else if !payment.IsDecline(err) {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		var charged int
		if err := db.Get(&charged, `SELECT charged FROM test_payment_methods WHERE id = $1`, m.ProcessorID); err != nil {
			t.Fatal(err)
		}
		if paid != 1 || charged != 12 {
			t.Errorf("%d charges paid (want the first only), the method counted %d (want 12)", paid, charged)
		}
	})
}

// TestTestRefundsNeverExceedTheCharge races refunds of one charge through two processors
// over one database: with distinct keys, exactly as many go through as the charge covers;
// with one key, every caller gets the one refund.
func TestTestRefundsNeverExceedTheCharge(t *testing.T) {
	db := storagetest.New(t)
	ctx := context.Background()
	procs := []*payment.TestProcessor{payment.NewTestProcessorIn(storage.TestPayments{DB: db}),
		payment.NewTestProcessorIn(storage.TestPayments{DB: db})}
	m, err := procs[0].SavePaymentMethod(ctx, payment.SaveRequest{Token: payment.TokenVisa})
	if err != nil {
		t.Fatal(err)
	}
	charge, err := procs[1].Charge(ctx, payment.ChargeRequest{Amount: 1000, Currency: "usd", PaymentMethodID: m.ProcessorID, IdempotencyKey: "buy"})
	if err != nil {
		t.Fatal(err)
	}
	refund := func(i int, key string) (payment.Refund, error) {
		return procs[i%2].Refund(ctx, payment.RefundRequest{ChargeID: charge.ID, Amount: 100, Currency: "usd", IdempotencyKey: key})
	}

	var mu sync.Mutex
	var wg sync.WaitGroup
	ids := map[string]bool{}
	for i := range 10 {
		wg.Go(func() {
			r, err := refund(i, "same")
			if err != nil {
				t.Errorf("refund with one key: %v", err)
				return
			}
			mu.Lock()
			ids[r.ID] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(ids) != 1 {
		t.Fatalf("one key made %d refunds", len(ids))
	}

	var succeeded, refused int
	for i := range 30 {
		wg.Go(func() {
			_, err := refund(i, fmt.Sprintf("part-%d", i))
			var r *payment.RefundError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				succeeded++
			case errors.As(err, &r):
				refused++
			default:
				t.Errorf("refund: %v", err)
			}
		})
	}
	wg.Wait()
	if succeeded != 9 || refused != 21 {
		t.Fatalf("%d refunds of 100 went through and %d were refused; the charge of 1,000 had 900 left", succeeded, refused)
	}
}

// TestTheTestProcessorSettlesA3DSPaymentOnceAcrossProcesses has the holder of a card that
// needs 3-D Secure answer through another process than the one that charged, many times at
// once and both ways: one answer settles the payment, every other one reads it, and a
// replay of the charge's key then answers with what the settling gave.
func TestTheTestProcessorSettlesA3DSPaymentOnceAcrossProcesses(t *testing.T) {
	db := storagetest.New(t)
	ctx := context.Background()
	one := payment.NewTestProcessorIn(storage.TestPayments{DB: db})
	two := payment.NewTestProcessorIn(storage.TestPayments{DB: db})
	m, err := one.SavePaymentMethod(ctx, payment.SaveRequest{Token: payment.TokenThreeDSecureRequired})
	if err != nil {
		t.Fatal(err)
	}
	req := payment.ChargeRequest{Amount: 1200, Currency: "usd", PaymentMethodID: m.ProcessorID, IdempotencyKey: "order-1"}
	_, err = one.Charge(ctx, req)
	var action *payment.ActionRequiredError
	if !errors.As(err, &action) {
		t.Fatalf("charge: %v, want an authentication step", err)
	}
	outcomes := make([]payment.IntentOutcome, 16)
	var wg sync.WaitGroup
	for i := range outcomes {
		wg.Go(func() {
			out, err := two.AuthenticateTestPayment(ctx, action.ClientSecret, i%2 == 0)
			if err != nil {
				t.Error(err)
			}
			outcomes[i] = out
		})
	}
	wg.Wait()
	for _, o := range outcomes[1:] {
		if o != outcomes[0] {
			t.Fatalf("answers settled differently: %+v and %+v", outcomes[0], o)
		}
	}
	replay, err := one.Charge(ctx, req)
	switch settled := outcomes[0]; {
	case settled.Succeeded && (err != nil || replay.ID != settled.ChargeID || replay.Amount != 1200):
		t.Errorf("replay after success: %+v, %v; want charge %s", replay, err, settled.ChargeID)
	case !settled.Succeeded && !payment.IsDecline(err):
		t.Errorf("replay after failure: %+v, %v; want a decline", replay, err)
	}
	if _, err := two.AuthenticateTestPayment(ctx, "pi_test_none_secret_none", true); !errors.Is(err, payment.ErrUnknownIntent) {
		t.Errorf("unknown secret: %v, want ErrUnknownIntent", err)
	}
}
