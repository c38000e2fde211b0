package resolvers_test

import (
	"sync"
	"testing"
)

// TestCreateRefundRace refunds one order from many goroutines at once: however the calls
// interleave, the refunds never give back more than the order took, every refund that
// answered succeeded is stored and counted on the order, and the calls that lost the race
// are refused as upstream refuses them.
func TestCreateRefundRace(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		net, tax, amount  int64
		calls             int
		wantOK            int
		wantStatus        string
		wantRefundedTotal int64
	}{
		{name: "thirty-three refunds of 30 fit in 1000, the rest are refused", net: 1000, amount: 30, calls: 50,
			wantOK: 33, wantStatus: "partially_refunded", wantRefundedTotal: 990},
		{name: "ten refunds of 100 refund a taxed order in full, the rest are refused", net: 1000, tax: 200, amount: 100,
			calls: 30, wantOK: 10, wantStatus: "refunded", wantRefundedTotal: 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newRefundWorld(t)
			id := w.order(t, tt.net, tt.tax)
			var (
				wg      sync.WaitGroup
				mu      sync.Mutex
				ok      int
				reasons = map[string]int{}
			)
			for range tt.calls {
				wg.Go(func() {
					resp := w.s.Do(t, w.org.Token, createRefundDoc, vars{"in": vars{"orderId": id, "reason": "other", "amount": tt.amount}})
					mu.Lock()
					defer mu.Unlock()
					if len(resp.Errors) == 0 {
						ok++
						return
					}
					reasons[resp.Errors[0].Extensions.Reason]++
				})
			}
			wg.Wait()
			for reason := range reasons {
				if reason != "PolarRequestValidationError" && reason != "RefundedAlready" {
					t.Errorf("a losing call failed with %s, want the amount refused or RefundedAlready (%v)", reason, reasons)
				}
			}
			if ok != tt.wantOK {
				t.Errorf("%d refunds succeeded, want %d (refusals %v)", ok, tt.wantOK, reasons)
			}
			var stored struct {
				N   int   `db:"n"`
				Sum int64 `db:"sum"`
				Tax int64 `db:"tax"`
			}
			w.s.Get(t, &stored, `SELECT count(*) AS n, coalesce(sum(amount), 0) AS sum, coalesce(sum(tax_amount), 0) AS tax
				FROM refunds WHERE order_id = $1`, id)
			got := w.orderState(t, id)
			if stored.N != ok || stored.Sum != tt.wantRefundedTotal || got.RefundedAmount != stored.Sum ||
				got.RefundedTaxAmount != stored.Tax || got.Status != tt.wantStatus {
				t.Errorf("stored %d refunds of %d (tax %d); order %+v; want %d refunds of %d, order %s",
					stored.N, stored.Sum, stored.Tax, got, ok, tt.wantRefundedTotal, tt.wantStatus)
			}
			if got.RefundedAmount > tt.net || got.RefundedTaxAmount > tt.tax {
				t.Errorf("refunded %d + %d tax of an order of %d + %d", got.RefundedAmount, got.RefundedTaxAmount, tt.net, tt.tax)
			}
			if n := len(w.processor.requests()); n != ok {
				t.Errorf("the processor was asked for %d refunds, want one per stored refund (%d)", n, ok)
			}
		})
	}
}
