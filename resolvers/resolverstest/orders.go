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

// SaveCard saves the card behind a processor test token (payment.TokenVisa, …) for a
// customer through the savePaymentMethod contract, and returns the saved method.
func (a *App) SaveCard(tb testing.TB, orgID, customerID uuid.UUID, token string) uuid.UUID {
	tb.Helper()
	var out struct{ SavePaymentMethod struct{ ID uuid.UUID } }
	a.Run(tb, orgID, `mutation($c: UUID!, $t: String!) { savePaymentMethod(input: {customerId: $c, token: $t}) { id } }`,
		Vars{"c": customerID, "t": token}, &out)
	return out.SavePaymentMethod.ID
}

// NewDunningOrder stores a monthly subscription of a product for 1000 usd that charges the
// card behind token, and renews it, its period having just ended: a declining card
// (payment.TokenChargeDeclined) leaves it past_due with its cycle order pending and
// retried by dunning, as a declined renewal leaves them. It returns the subscription and
// that order.
func (a *App) NewDunningOrder(tb testing.TB, orgID, customerID, productID uuid.UUID, token string) (subscriptionID, orderID uuid.UUID) {
	tb.Helper()
	ctx := context.Background()
	card := a.SaveCard(tb, orgID, customerID, token)
	now := a.Clock.Now()
	start := now.AddDate(0, -1, 0)
	sub, err := storage.CreateSubscription(ctx, a.DB, orgID, start, storage.SubscriptionWrite{
		CustomerID: customerID, ProductID: productID, PaymentMethodID: &card, Status: "active", Amount: 1000,
		Currency: "usd", RecurringInterval: "month", RecurringIntervalCount: 1, CurrentPeriodStart: start,
		CurrentPeriodEnd: now.Add(-time.Minute), StartedAt: &start})
	if err != nil {
		tb.Fatalf("storing a subscription: %v", err)
	}
	if _, err := a.Resolver.RenewDue(ctx, &orgID, now, 1); err != nil {
		tb.Fatalf("renewing: %v", err)
	}
	a.Get(tb, &orderID, `SELECT id FROM orders WHERE subscription_id = $1 AND status = 'pending'`, sub.ID)
	return sub.ID, orderID
}
