package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/internal/jobs"
	"till/resolvers/resolverstest"
	"till/storage"
)

// refundEvent is a Stripe event about a refund's status.
func refundEvent(id, typ, refund, status string, created time.Time) string {
	return fmt.Sprintf(`{"id":%q,"object":"event","type":%q,"created":%d,
		"data":{"object":{"id":%q,"object":"refund","status":%q,"amount":300}}}`, id, typ, created.Unix(), refund, status)
}

// TestStripeRefundEventsSettleRefunds follows refunds that Stripe settles after answering:
// a pending refund counts on its order once Stripe says it succeeded, an older event that
// arrives later does not take it back, a failed one leaves the order as it was, and each
// change is announced.
func TestStripeRefundEventsSettleRefunds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newV1(t)
	o := s.NewOrg(t, "refunds:read orders:read")
	c := s.NewCustomer(t, o.ID, "")
	orderID := s.NewChargedOrder(t, o.ID, c.ID, resolverstest.ChargedOrder{NetAmount: 1000})
	charge, err := storage.SucceededCharge(ctx, s.DB, orderID)
	if err != nil {
		t.Fatal(err)
	}
	pending := func(processorID string) uuid.UUID {
		r, err := storage.InsertRefund(ctx, s.DB, time.Now(), storage.RefundWrite{ID: uuid.New(), OrganizationID: o.ID,
			OrderID: orderID, CustomerID: c.ID, PaymentID: charge.ID, Status: storage.RefundStatusPending,
			Reason: storage.RefundReasonCustomerRequest, Amount: 300, Currency: "usd", Processor: "stripe",
			ProcessorID: processorID})
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	settling, failing := pending("re_settling"), pending("re_failing")
	s.rebuild(t, onStripe(t))
	worker := &jobs.Worker{DB: s.DB, Handlers: s.Resolver.JobHandlers()}
	deliver := func(events ...string) {
		t.Helper()
		for _, e := range events {
			if rec := s.do(t, signed(e, stripeWebhookSecret, time.Now())); rec.Code != http.StatusAccepted {
				t.Fatalf("delivery answered %d %s", rec.Code, rec.Body)
			}
		}
		if _, err := worker.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	deliver(refundEvent("evt_settled", "refund.updated", "re_settling", "succeeded", now),
		refundEvent("evt_failed", "refund.failed", "re_failing", "failed", now),
		refundEvent("evt_elsewhere", "refund.updated", "re_made_on_the_dashboard", "succeeded", now))
	deliver(refundEvent("evt_stale", "refund.updated", "re_settling", "pending", now.Add(-time.Minute)))

	statuses := map[uuid.UUID]string{}
	for _, id := range []uuid.UUID{settling, failing} {
		var status string
		if err := s.DB.Get(&status, `SELECT status FROM refunds WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		statuses[id] = status
	}
	if statuses[settling] != "succeeded" || statuses[failing] != "failed" {
		t.Errorf("statuses: settling %s, failing %s; want succeeded and failed", statuses[settling], statuses[failing])
	}
	var order struct {
		Status   string `db:"status"`
		Refunded int64  `db:"refunded_amount"`
	}
	if err := s.DB.Get(&order, `SELECT status, refunded_amount FROM orders WHERE id = $1`, orderID); err != nil {
		t.Fatal(err)
	}
	if order.Status != "partially_refunded" || order.Refunded != 300 {
		t.Errorf("order %s with %d refunded, want partially_refunded with the settled 300", order.Status, order.Refunded)
	}
	events := map[string]int{}
	rows, err := s.DB.Query(`SELECT type, count(*) FROM domain_events WHERE organization_id = $1
		AND type IN ('refund.updated', 'order.refunded', 'order.updated') GROUP BY type`, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var typ string
		var n int
		if err := rows.Scan(&typ, &n); err != nil {
			t.Fatal(err)
		}
		events[typ] = n
	}
	if want := map[string]int{"refund.updated": 2, "order.refunded": 1, "order.updated": 1}; fmt.Sprint(events) != fmt.Sprint(want) {
		t.Errorf("announced %v, want %v", events, want)
	}
}
