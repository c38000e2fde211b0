package payment_test

import (
	"context"
	"net/http"
	"testing"

	"till/internal/payment"
)

// TestCloseDispute: both processors concede a dispute; Stripe's through its close call.
func TestCloseDispute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sp, rp := startStripeMock(t)
	for _, tt := range []struct {
		name   string
		closer payment.DisputeCloser
		check  func(t *testing.T, d payment.Dispute)
	}{
		{"stripe closes it with its close call", sp, func(t *testing.T, d payment.Dispute) {
			sent := rp.Requests()
			if len(sent) == 0 || sent[len(sent)-1].Method != http.MethodPost || sent[len(sent)-1].Path != "/v1/disputes/dp_1/close" {
				t.Errorf("requests %+v, want POST /v1/disputes/dp_1/close last", sent)
			}
			if d.ID == "" || d.Status == "" || d.Currency == "" {
				t.Errorf("dispute %+v lacks what stripe-mock answered", d)
			}
		}},
		{"the test processor concedes it as lost", payment.NewTestProcessor(), func(t *testing.T, d payment.Dispute) {
			if d.ID != "dp_1" || d.Status != "lost" {
				t.Errorf("dispute %+v, want dp_1 lost", d)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.closer.CloseDispute(ctx, "dp_1")
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, d)
		})
	}
}
