package resolverstest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/internal/payment"
	"till/storage"
)

// ChargedOrder describes a paid order whose payment the application's processor took.
type ChargedOrder struct {
	ProductID      *uuid.UUID
	SubscriptionID *uuid.UUID // set: a subscription's first order; nil: a one-time purchase
	NetAmount      int64
	TaxAmount      int64
}

// NewChargedOrder stores a paid usd order as a purchase leaves it, its charge included: a
// card saved at the processor is charged the order's total and the charge recorded as the
// order's payment, so refunds of the order reach the processor as a real one's would.
func (a *App) NewChargedOrder(tb testing.TB, orgID, customerID uuid.UUID, spec ChargedOrder) uuid.UUID {
	tb.Helper()
	ctx := context.Background()
	total := spec.NetAmount + spec.TaxAmount
	method, err := a.Deps.Payments.SavePaymentMethod(ctx, payment.SaveRequest{Token: payment.TokenVisa,
		Customer: payment.CustomerRef{TillID: customerID.String()}})
	if err != nil {
		tb.Fatalf("saving a test card: %v", err)
	}
	charge, err := a.Deps.Payments.Charge(ctx, payment.ChargeRequest{Amount: total, Currency: "usd",
		PaymentMethodID: method.ProcessorID, ProcessorCustomerID: method.ProcessorCustomerID, IdempotencyKey: uuid.NewString()})
	if err != nil {
		tb.Fatalf("charging a test card: %v", err)
	}
	reason := storage.OrderBillingReasonPurchase
	if spec.SubscriptionID != nil {
		reason = storage.OrderBillingReasonSubscriptionCreate
	}
	o, err := storage.InsertOrder(ctx, a.DB, orgID, time.Now(), storage.OrderWrite{CustomerID: customerID,
		ProductID: spec.ProductID, SubscriptionID: spec.SubscriptionID, Status: storage.OrderStatusPaid,
		BillingReason: reason, Currency: "usd", SubtotalAmount: spec.NetAmount, NetAmount: spec.NetAmount,
		TaxAmount: spec.TaxAmount, TotalAmount: total})
	if err != nil {
		tb.Fatalf("storing a paid order: %v", err)
	}
	if err := storage.RecordChargeAttempt(ctx, a.DB, time.Now(), storage.ChargeAttempt{OrganizationID: orgID,
		CustomerID: customerID, OrderID: o.ID, Processor: a.Deps.Payments.Name(), ProcessorID: &charge.ID,
		Status: "succeeded", Amount: total, Currency: "usd"}); err != nil {
		tb.Fatalf("recording the order's charge: %v", err)
	}
	return o.ID
}
