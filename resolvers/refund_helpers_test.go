package resolvers_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/uuid"

	"till/internal/payment"
	"till/resolvers"
	"till/resolvers/resolverstest"
)

// refundWorld is one organization with a customer, a one-time product and a subscription,
// whose paid orders the tests refund; its processor records every refund it is asked for.
type refundWorld struct {
	s         *resolverstest.Server
	org       resolverstest.Org
	customer  customer
	product   product
	sub       uuid.UUID
	processor *recordingProcessor
}

func newRefundWorld(tb testing.TB) *refundWorld {
	tb.Helper()
	rec := &recordingProcessor{Processor: payment.NewTestProcessor()}
	s := resolverstest.New(tb, func(d *resolvers.Deps) { d.Payments = rec })
	org := s.NewOrg(tb, resolverstest.AllScopes)
	w := &refundWorld{s: s, org: org, processor: rec, customer: s.NewCustomer(tb, org.ID, "ext-refunded")}
	w.product = s.NewProduct(tb, org.ID, "Ebook")
	plan := createProduct(tb, s, org.Token, vars{"name": "Plan", "recurringInterval": "month",
		"prices": []vars{{"amountType": "fixed", "priceAmount": 1000}}})
	w.sub = s.NewSubscription(tb, org.ID, w.customer.ID, plan.ID, nil)
	return w
}

// order stores a paid one-time purchase of net and tax, charged through the processor.
func (w *refundWorld) order(tb testing.TB, net, tax int64) uuid.UUID {
	tb.Helper()
	return w.s.NewChargedOrder(tb, w.org.ID, w.customer.ID, resolverstest.ChargedOrder{ProductID: &w.product.ID,
		NetAmount: net, TaxAmount: tax})
}

// refundFields selects what the tests compare on a refund.
const refundFields = `id status reason amount taxAmount currency orderId subscriptionId customerId organizationId
	revokeBenefits metadata dispute { id }`

// createRefundDoc creates a refund with the input $in.
const createRefundDoc = `mutation($in: RefundCreateInput!) { createRefund(input: $in) { ` + refundFields + ` } }`

// refundOut is a refund as the tests read it.
type refundOut struct {
	ID             uuid.UUID      `json:"id"`
	Status         string         `json:"status"`
	Reason         string         `json:"reason"`
	Amount         int64          `json:"amount"`
	TaxAmount      int64          `json:"taxAmount"`
	Currency       string         `json:"currency"`
	OrderID        uuid.UUID      `json:"orderId"`
	SubscriptionID *uuid.UUID     `json:"subscriptionId"`
	CustomerID     uuid.UUID      `json:"customerId"`
	OrganizationID uuid.UUID      `json:"organizationId"`
	RevokeBenefits bool           `json:"revokeBenefits"`
	Metadata       map[string]any `json:"metadata"`
	Dispute        *struct{}      `json:"dispute"`
}

// refund creates a refund and fails the test if that fails.
func (w *refundWorld) refund(tb testing.TB, in vars) refundOut {
	tb.Helper()
	var out struct{ CreateRefund refundOut }
	w.s.Query(tb, w.org.Token, createRefundDoc, vars{"in": in}, &out)
	return out.CreateRefund
}

// orderRefunds is what an order says of its refunds.
type orderRefunds struct {
	Status              string `json:"status"`
	RefundedAmount      int64  `json:"refundedAmount"`
	RefundedTaxAmount   int64  `json:"refundedTaxAmount"`
	RefundableAmount    int64  `json:"refundableAmount"`
	RefundableTaxAmount int64  `json:"refundableTaxAmount"`
}

// orderState reads what an order says of its refunds.
func (w *refundWorld) orderState(tb testing.TB, id uuid.UUID) orderRefunds {
	tb.Helper()
	var out struct{ Order orderRefunds }
	w.s.Query(tb, w.org.Token, `query($id: UUID!) { order(id: $id) { status refundedAmount refundedTaxAmount
		refundableAmount refundableTaxAmount } }`, vars{"id": id}, &out)
	return out.Order
}

// recordingProcessor is the test processor, remembering the refunds it was asked for and
// the ids of those it made, refusing them all with refuse when it is set, and losing the
// answer of the next one it makes when lose is set (the network failing after the refund).
type recordingProcessor struct {
	payment.Processor
	mu      sync.Mutex
	refunds []payment.RefundRequest
	made    []string
	refuse  *payment.RefundError
	lose    bool
}

// Refund implements payment.Processor.
func (p *recordingProcessor) Refund(ctx context.Context, req payment.RefundRequest) (payment.Refund, error) {
	p.mu.Lock()
	p.refunds = append(p.refunds, req)
	refuse := p.refuse
	p.mu.Unlock()
	if refuse != nil {
		return payment.Refund{}, refuse
	}
	out, err := p.Processor.Refund(ctx, req)
	if err != nil {
		return out, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.made = append(p.made, out.ID)
	if p.lose {
		p.lose = false
		return payment.Refund{}, payment.ErrUnavailable
	}
	return out, nil
}

// requests returns the refunds asked for so far.
func (p *recordingProcessor) requests() []payment.RefundRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]payment.RefundRequest(nil), p.refunds...)
}

// refusing makes every later refund fail with e (nil: none).
func (p *recordingProcessor) refusing(e *payment.RefundError) {
	p.mu.Lock()
	p.refuse = e
	p.mu.Unlock()
}

// chargedSubscriptionOrder is a paid 1000 order of the world's subscription.
func chargedSubscriptionOrder(w *refundWorld) resolverstest.ChargedOrder {
	return resolverstest.ChargedOrder{SubscriptionID: &w.sub, NetAmount: 1000}
}

// chargedPurchase is a paid 1000 one-time purchase of a product.
func chargedPurchase(productID uuid.UUID) resolverstest.ChargedOrder {
	return resolverstest.ChargedOrder{ProductID: &productID, NetAmount: 1000}
}

// grantOrder grants an order's benefits to the world's customer.
func grantOrder(tb testing.TB, w *refundWorld, orderID, productID uuid.UUID) {
	tb.Helper()
	scope := resolvers.GrantScope{OrganizationID: w.org.ID, CustomerID: w.customer.ID, ProductID: productID, OrderID: &orderID}
	if err := w.s.Resolver.GrantBenefits(context.Background(), scope); err != nil {
		tb.Fatalf("granting the order's benefits: %v", err)
	}
}
