package resolvers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
)

// Orders are created by the purchase flow (a succeeded checkout, a subscription renewal)
// inside its transaction, so an order, its items, its numbers and its events commit with
// the purchase or not at all. Numbering is per organization, gapless and race-free: invoice
// numbers <SLUG>-<NNNN> for every order, receipt numbers RCPT-<SLUG>-<NNNN> once it is paid,
// from the organization's counters in order_numbers (at least four digits; the slug
// upper-cased is upstream's default invoice prefix). Both are drawn as the transaction
// commits (see storage.InsertOrder), so the orders a use case holds inside its transaction
// have no numbers yet.

// paidStatuses are the statuses of an order that was paid, refunds or not.
var paidStatuses = map[storage.OrderStatus]bool{storage.OrderStatusPaid: true, storage.OrderStatusPartiallyRefunded: true,
	storage.OrderStatusRefunded: true}

// createOrder stores an order with its items, numbering it in the organization's invoice
// sequence, and emits order.created (and order.paid when created paid).
func (r *Resolver) createOrder(ctx context.Context, tx *sqlx.Tx, spec orderSpec) (*storage.Order, error) {
	if err := checkOrderSpec(spec); err != nil {
		return nil, err
	}
	var subtotal int64
	items := make([]storage.OrderItemWrite, len(spec.Items))
	for i, it := range spec.Items {
		subtotal += it.Amount
		items[i] = storage.OrderItemWrite{Label: it.Label, Amount: it.Amount, TaxAmount: it.TaxAmount,
			Proration: it.Proration, ProductPriceID: it.ProductPriceID}
	}
	if spec.DiscountAmount > subtotal {
		return nil, fmt.Errorf("createOrder: discount %d exceeds the subtotal %d", spec.DiscountAmount, subtotal)
	}
	net := subtotal - spec.DiscountAmount
	// Orders carry the organization's time, so renewals under a test clock are dated in it.
	now, err := r.clockFor(ctx, tx, spec.OrganizationID)
	if err != nil {
		return nil, err
	}
	o, err := storage.InsertOrder(ctx, tx, spec.OrganizationID, now, storage.OrderWrite{
		CustomerID: spec.CustomerID, ProductID: spec.ProductID, DiscountID: spec.DiscountID,
		SubscriptionID: spec.SubscriptionID, CheckoutID: spec.CheckoutID, Status: spec.Status,
		BillingReason: spec.BillingReason, Currency: spec.Currency, SubtotalAmount: subtotal,
		DiscountAmount: spec.DiscountAmount, NetAmount: net, TaxAmount: spec.TaxAmount,
		TotalAmount: net + spec.TaxAmount, BillingName: spec.BillingName, BillingAddress: spec.BillingAddress,
		Description: spec.Description, Seats: spec.Seats, CustomFieldData: spec.CustomFieldData, Metadata: spec.Metadata,
	})
	if err != nil {
		return nil, fmt.Errorf("createOrder: %w", err)
	}
	if len(items) > 0 {
		if _, err := storage.InsertOrderItems(ctx, tx, spec.OrganizationID, o, items); err != nil {
			return nil, fmt.Errorf("createOrder: items: %w", err)
		}
	}
	if err := r.emit(ctx, tx, o.OrganizationID, "order.created", o.ID); err != nil {
		return nil, err
	}
	if o.Status == storage.OrderStatusPaid {
		if err := r.emit(ctx, tx, o.OrganizationID, "order.paid", o.ID); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// checkOrderSpec rejects specs the purchase flow should never build; they are programming
// errors, not input errors, so they are plain errors (a 500 if one ever escapes).
func checkOrderSpec(spec orderSpec) error {
	switch {
	case spec.Status != storage.OrderStatusPending && spec.Status != storage.OrderStatusPaid:
		return fmt.Errorf("createOrder: status %q, want pending or paid", spec.Status)
	case spec.Currency == "":
		return errors.New("createOrder: no currency")
	case spec.DiscountAmount < 0 || spec.TaxAmount < 0:
		return errors.New("createOrder: negative discount or tax")
	}
	switch spec.BillingReason {
	case storage.OrderBillingReasonPurchase, storage.OrderBillingReasonSubscriptionCreate, storage.OrderBillingReasonSubscriptionCycle, storage.OrderBillingReasonSubscriptionUpdate, storage.OrderBillingReasonSubscriptionMeterCycle:
	default:
		return fmt.Errorf("createOrder: billing reason %q", spec.BillingReason)
	}
	return nil
}

// markOrderPaid turns a pending order paid (its receipt number is drawn at commit) and emits
// order.updated and order.paid; an order already paid is returned unchanged.
func (r *Resolver) markOrderPaid(ctx context.Context, tx *sqlx.Tx, orderID uuid.UUID) (*storage.Order, error) {
	o, changed, err := storage.MarkOrderPaid(ctx, tx, orderID, r.Now())
	if err != nil {
		return nil, fmt.Errorf("markOrderPaid: %w", err)
	}
	if !changed {
		if o, err = storage.GetOrderByID(ctx, tx, orderID); err != nil {
			return nil, fmt.Errorf("markOrderPaid: %w", err)
		}
		if !paidStatuses[o.Status] {
			return nil, BadRequest(fmt.Sprintf("Order %s cannot be paid (current status: %s).", o.ID, o.Status))
		}
		return o, nil
	}
	if err := r.emit(ctx, tx, o.OrganizationID, "order.updated", o.ID); err != nil {
		return nil, err
	}
	return o, r.emit(ctx, tx, o.OrganizationID, "order.paid", o.ID)
}

// scheduleOrderPayment records when a pending order's payment will be retried (nil: no
// more retries) and emits order.updated.
func (r *Resolver) scheduleOrderPayment(ctx context.Context, tx *sqlx.Tx, orderID uuid.UUID, next *time.Time) error {
	o, err := storage.SetOrderNextPaymentAttempt(ctx, tx, orderID, r.Now(), next)
	if errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("scheduleOrderPayment: order %s is not a pending order", orderID)
	}
	if err != nil {
		return fmt.Errorf("scheduleOrderPayment: %w", err)
	}
	return r.emit(ctx, tx, o.OrganizationID, "order.updated", o.ID)
}
