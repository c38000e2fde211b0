package resolvers

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/payment"
	"till/storage"
)

// Refund errors carry upstream's class names (server/polar/refund/service.py).
const (
	codeRefundedAlready                      = "RefundedAlready"
	codeRefundDisputedPayment                = "RefundDisputedPayment"
	codeRefundUnknownPayment                 = "RefundUnknownPayment"
	codeRevokeSubscriptionBenefitsProhibited = "RevokeSubscriptionBenefitsProhibited"
	// codeRefundError is a refusal of the processor that upstream does not name (it lets
	// the processor's exception through as a server error): the order's state and the
	// processor's disagree, which the caller must hear about rather than see as a fault.
	codeRefundError = "RefundError"
)

// refundSorts whitelists the sorting of GET /v1/refunds/.
var refundSorts = storage.RefundSortColumns

// refund reads one refund of the caller's organizations.
func (r *Resolver) refund(ctx context.Context, id uuid.UUID) (*storage.Refund, error) {
	ref, err := storage.GetRefund(ctx, r.db, organizations(ctx), id)
	return ref, notFoundOr(err, "")
}

// refundsPage lists the organizations' refunds with upstream's filters and sorting.
func (r *Resolver) refundsPage(ctx context.Context, a listArgs, f *model.RefundFilter) (*model.RefundPage, error) {
	w, sorts, err := a.windowAndSorts(refundSorts)
	if err != nil {
		return nil, err
	}
	p, err := storage.ListRefunds(ctx, r.db, organizations(ctx), refundFilterOf(f), sorts, w)
	if err != nil {
		return nil, cursorErr(err, a)
	}
	record(ctx, p.Items)
	return &model.RefundPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}

// orderRefunds is Order.refunds: a window of each order's refunds of the level, in one
// statement.
func (r *Resolver) orderRefunds(ctx context.Context, o *storage.Order, a listArgs, f *model.RefundFilter) (*model.RefundPage, error) {
	p, w, err := relatedWindow(ctx, r.db, "Order.refunds", o, func(o *storage.Order) uuid.UUID { return o.ID },
		a, refundSorts, refundFilterOf(f), storage.RefundWindowsByOrders)
	if err != nil {
		return nil, err
	}
	return &model.RefundPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}

// refundFilterOf turns the GraphQL filter into the storage one.
func refundFilterOf(f *model.RefundFilter) storage.RefundListFilter {
	if f == nil {
		return storage.RefundListFilter{}
	}
	return storage.RefundListFilter{IDs: f.ID, OrganizationIDs: f.OrganizationID, OrderIDs: f.OrderID,
		SubscriptionIDs: f.SubscriptionID, CustomerIDs: f.CustomerID, ExternalCustomerIDs: f.ExternalCustomerID,
		Succeeded: f.Succeeded}
}

// createRefund is upstream's RefundService.user_create and create. The order row stays
// locked from the first check to the commit, so concurrent refunds of one order take turns
// and each checks the amount against what the ones before it left: together they never
// give back more than the order's refundable amount. The processor is called inside that
// transaction with an idempotency key derived from the refund's id, chosen before the call,
// so a retried call refunds at most once. A succeeded refund adds to the order's refunded
// amounts and status in the same transaction; refund.created, then order.updated and
// order.refunded are recorded, as upstream sends them.
func (r *Resolver) createRefund(ctx context.Context, in model.RefundCreateInput) (*storage.Refund, error) {
	if err := checkRefundInput(in); err != nil {
		return nil, err
	}
	revoke := in.RevokeBenefits != nil && *in.RevokeBenefits
	id := uuid.New()
	var out *storage.Refund
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		o, err := storage.LockOrder(ctx, tx, organizations(ctx), nil, in.OrderID)
		if errors.Is(err, storage.ErrNotFound) {
			return Invalid("value_error", "Order not found", in.OrderID.String(), "input", "orderId")
		} else if err != nil {
			return err
		}
		if o.Status == storage.OrderStatusRefunded {
			return refundedAlready(o)
		}
		if revoke && o.SubscriptionID != nil {
			return &Error{Code: codeRevokeSubscriptionBenefitsProhibited,
				Detail: "Subscription benefits can only be revoked upon cancellation"}
		}
		amount := int64(in.Amount)
		tax, ok := refundTax(o, amount)
		if !ok {
			return Invalid("value_error", "Refund amount exceeds refundable amount", in.Amount, "input", "amount")
		}
		charge, err := storage.SucceededCharge(ctx, tx, o.ID)
		if errors.Is(err, storage.ErrNotFound) {
			return &Error{Code: codeRefundUnknownPayment, Detail: "Refund issued for unknown order: " + o.ID.String()}
		} else if err != nil {
			return err
		}
		made, err := storage.CountOrderRefunds(ctx, tx, o.ID)
		if err != nil {
			return err
		}
		// The key names the order's next refund and its amount, not the new refund's id: a
		// request retried after a lost answer or a failed commit (nothing of it stored) asks
		// again for the same refund, and the processor answers the one it already made.
		key := fmt.Sprintf("refund_%s_%d_%d", o.ID, made, amount+tax)
		done, err := r.payments.Refund(ctx, payment.RefundRequest{ChargeID: charge.ProcessorID, Amount: amount + tax,
			Currency: o.Currency, IdempotencyKey: key, Reason: processorReason(in.Reason)})
		if err != nil {
			return refundRefused(o, err)
		}
		if out, err = storage.InsertRefund(ctx, tx, r.Now(), storage.RefundWrite{ID: id, OrganizationID: o.OrganizationID,
			OrderID: o.ID, SubscriptionID: o.SubscriptionID, CustomerID: o.CustomerID, PaymentID: charge.ID,
			Status: storage.RefundStatus(done.Status), Reason: in.Reason, Amount: amount, TaxAmount: tax,
			Currency: o.Currency, Comment: in.Comment, RevokeBenefits: revoke, Processor: charge.Processor,
			ProcessorID: done.ID, Metadata: in.Metadata}); err != nil {
			return err
		}
		return r.refunded(ctx, tx, o, out)
	})
	return out, err
}

// refunded records what follows a stored refund (upstream's _on_created and
// _on_succeeded): refund.created; once it succeeded, the order's refunded amounts and
// status with order.updated and order.refunded; and the order's benefits revoked when the
// refund asks for it.
func (r *Resolver) refunded(ctx context.Context, tx *sqlx.Tx, o *storage.Order, ref *storage.Refund) error {
	if err := r.emit(ctx, tx, ref.OrganizationID, "refund.created", ref.ID); err != nil {
		return err
	}
	if ref.Status == storage.RefundStatusSucceeded {
		if err := r.countRefund(ctx, tx, ref); err != nil {
			return err
		}
	}
	if ref.RevokeBenefits && o.ProductID != nil {
		return r.revokeBenefits(ctx, tx, grantScope{OrganizationID: o.OrganizationID, CustomerID: o.CustomerID,
			ProductID: *o.ProductID, OrderID: &o.ID})
	}
	return nil
}

// countRefund adds a succeeded refund to its order, whose row the caller has locked, and
// announces the order's change: order.updated, then order.refunded, as upstream.
func (r *Resolver) countRefund(ctx context.Context, tx *sqlx.Tx, ref *storage.Refund) error {
	if _, err := storage.AddOrderRefund(ctx, tx, ref.OrderID, ref.Amount, ref.TaxAmount, r.Now()); err != nil {
		return err
	}
	for _, typ := range []string{"order.updated", "order.refunded"} {
		if err := r.emit(ctx, tx, ref.OrganizationID, typ, ref.OrderID); err != nil {
			return err
		}
	}
	return nil
}

// checkRefundInput validates what RefundCreate's schema validates before upstream's
// endpoint runs: an amount of at least 1, a reason a caller may give, and the metadata
// limits.
func checkRefundInput(in model.RefundCreateInput) error {
	if in.Amount < 1 {
		e := Invalid("greater_than", "Input should be greater than 0", in.Amount, "input", "amount")
		e.Errors[0].Ctx = map[string]any{"gt": 0}
		return e
	}
	if in.Reason == storage.RefundReasonDisputePrevention {
		return Invalid("literal_error", "Input should be 'duplicate', 'fraudulent', 'customer_request', "+
			"'service_disruption', 'satisfaction_guarantee' or 'other'", string(in.Reason), "input", "reason")
	}
	return checkMetadata(in.Metadata, "input", "metadata")
}

// refundTax is the tax a refund of amount (before taxes) gives back, as upstream's
// Order.calculate_refunded_tax_from_subtotal computes it: all the tax left when the
// refund takes all that is left, else the order's tax rate applied to the amount, rounded
// half to even as Python rounds, never more than the tax left. It reports false when
// amount exceeds what is left to refund (upstream's RefundAmountTooHigh).
func refundTax(o *storage.Order, amount int64) (int64, bool) {
	left, taxLeft := int64(refundableAmount(o)), int64(refundableTaxAmount(o))
	switch {
	case amount > left:
		return 0, false
	case amount == left:
		return taxLeft, true
	case o.TaxAmount <= 0 || o.NetAmount <= 0:
		return 0, true
	}
	ratio := float64(o.TaxAmount) / float64(o.NetAmount)
	return min(int64(math.RoundToEven(float64(amount)*ratio)), taxLeft), true
}

// processorReason is upstream's RefundReason.to_stripe: duplicate goes through as is, every
// other reason as requested_by_customer, so a seller's fraudulent never blocks a customer
// at the processor.
func processorReason(reason storage.RefundReason) string {
	if reason == storage.RefundReasonDuplicate {
		return "duplicate"
	}
	return "requested_by_customer"
}

// refundedAlready is upstream's RefundedAlready.
func refundedAlready(o *storage.Order) *Error {
	return &Error{Code: codeRefundedAlready, Detail: "Order is already fully refunded: " + o.ID.String()}
}

// refundRefused maps a refusal of the processor to the error upstream answers for it. The
// processor unreachable is RefundError too, a conflict to retry: the retry asks for the same
// refund under the same key, so it never refunds twice.
func refundRefused(o *storage.Order, err error) error {
	if errors.Is(err, payment.ErrUnavailable) {
		return &Error{Code: codeRefundError, Detail: "The payment processor could not be reached. Please try again.",
			Cause: "processor_unavailable"}
	}
	var refusal *payment.RefundError
	if !errors.As(err, &refusal) {
		return fmt.Errorf("refunding order %s: %w", o.ID, err)
	}
	switch refusal.Code {
	case "charge_already_refunded":
		return refundedAlready(o)
	case "charge_disputed":
		return &Error{Code: codeRefundDisputedPayment,
			Detail: "Refund cannot be issued for order with disputed payment: " + o.ID.String()}
	}
	return &Error{Code: codeRefundError, Detail: fmt.Sprintf("The payment processor refused the refund (%s): %s",
		refusal.Code, refusal.Message), Cause: refusal.Code}
}
