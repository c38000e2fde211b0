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

// codeDisputeNotOpen is upstream's DisputeNotOpenError (server/polar/dispute/service.py).
const codeDisputeNotOpen = "DisputeNotOpenError"

// disputeSorts whitelists the sorting of GET /v1/disputes/.
var disputeSorts = storage.DisputeSortColumns

// dispute reads one dispute of the caller's organizations.
func (r *Resolver) dispute(ctx context.Context, id uuid.UUID) (*storage.Dispute, error) {
	d, err := storage.GetDispute(ctx, r.db, organizations(ctx), id)
	return d, notFoundOr(err, "")
}

// disputesPage lists the organizations' disputes with upstream's filters and sorting.
func (r *Resolver) disputesPage(ctx context.Context, a listArgs, f *model.DisputeFilter) (*model.DisputePage, error) {
	w, sorts, err := a.windowAndSorts(disputeSorts)
	if err != nil {
		return nil, err
	}
	p, err := storage.ListDisputes(ctx, r.db, organizations(ctx), disputeFilterOf(f), sorts, w)
	if err != nil {
		return nil, cursorErr(err, a)
	}
	record(ctx, p.Items)
	return &model.DisputePage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}

// orderDisputes is Order.disputes: a window of each order's disputes of the level, in one
// statement.
func (r *Resolver) orderDisputes(ctx context.Context, o *storage.Order, a listArgs, f *model.DisputeFilter) (*model.DisputePage, error) {
	p, w, err := relatedWindow(ctx, r.db, "Order.disputes", o, func(o *storage.Order) uuid.UUID { return o.ID },
		a, disputeSorts, disputeFilterOf(f), storage.DisputeWindowsByOrders)
	if err != nil {
		return nil, err
	}
	return &model.DisputePage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}

// disputeFilterOf turns the GraphQL filter into the storage one.
func disputeFilterOf(f *model.DisputeFilter) storage.DisputeListFilter {
	if f == nil {
		return storage.DisputeListFilter{}
	}
	return storage.DisputeListFilter{OrganizationIDs: f.OrganizationID, OrderIDs: f.OrderID, Statuses: f.Status}
}

// acceptDispute is upstream's DisputeService.accept: only a dispute that needs a response
// can be conceded; the processor closes it, and its answer is recorded as an event about
// the dispute would be. The dispute stays locked from the check to the commit, so two
// acceptances close it once.
func (r *Resolver) acceptDispute(ctx context.Context, id uuid.UUID) (*storage.Dispute, error) {
	var out *storage.Dispute
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		d, err := storage.LockDispute(ctx, tx, organizations(ctx), id)
		if err != nil {
			return notFoundOr(err, "")
		}
		if d.Status != storage.DisputeStatusNeedsResponse {
			return &Error{Code: codeDisputeNotOpen, Detail: fmt.Sprintf("Dispute %s is not awaiting a response.", d.ID)}
		}
		closer, ok := r.payments.(payment.DisputeCloser)
		if !ok || r.payments.Name() != d.Processor {
			return &Error{Code: CodePaymentError, Detail: fmt.Sprintf(
				"Dispute %s was opened at %s, which does not take this organization's payments now.", d.ID, d.Processor)}
		}
		closed, err := closer.CloseDispute(ctx, d.ProcessorID)
		if errors.Is(err, payment.ErrUnavailable) {
			return &Error{Code: CodePaymentError, Detail: "The payment processor could not be reached. Please try again."}
		} else if err != nil {
			return fmt.Errorf("accepting dispute %s: %w", d.ID, err)
		}
		out, err = r.updateDispute(ctx, tx, d, closed)
		return err
	})
	return out, err
}

// disputeStatusOf is upstream's DisputeStatus.from_stripe: Stripe's early warnings count
// as the dispute they announce, and a warning that closed is prevented. ok is false for a
// status Stripe may add later.
func disputeStatusOf(stripeStatus string) (storage.DisputeStatus, bool) {
	switch stripeStatus {
	case "lost":
		return storage.DisputeStatusLost, true
	case "needs_response", "warning_needs_response":
		return storage.DisputeStatusNeedsResponse, true
	case "under_review", "warning_under_review":
		return storage.DisputeStatusUnderReview, true
	case "won":
		return storage.DisputeStatusWon, true
	case "warning_closed", "prevented":
		return storage.DisputeStatusPrevented, true
	}
	return "", false
}

// takeDispute records the processor's word on a dispute (upstream's upsert_from_stripe):
// a dispute not seen before is opened on the order its charge paid, in that order's
// organization; a known one takes the processor's details, and its status unless it was
// closed already, so a late event never reopens a settled dispute. A charge Till did not
// make is left alone.
func (r *Resolver) takeDispute(ctx context.Context, tx *sqlx.Tx, processor string, pd payment.Dispute) error {
	d, err := storage.LockDisputeAtProcessor(ctx, tx, processor, pd.ID)
	if errors.Is(err, storage.ErrNotFound) {
		var done bool
		if done, err = r.openDispute(ctx, tx, processor, pd); err != nil || done {
			return err
		}
		// Opened meanwhile by a delivery of another event about it: update that one.
		d, err = storage.LockDisputeAtProcessor(ctx, tx, processor, pd.ID)
	}
	if errors.Is(err, storage.ErrNotFound) {
		return nil // a charge of no order of Till's
	}
	if err != nil {
		return err
	}
	_, err = r.updateDispute(ctx, tx, d, pd)
	return err
}

// openDispute stores a new dispute of the order the charge paid, splitting the disputed
// total into amount and tax as upstream's Order.calculate_refunded_tax_from_total does. It
// reports done false when the dispute exists already or no order of Till's was charged;
// a status Till does not know is done with, unrecorded.
func (r *Resolver) openDispute(ctx context.Context, tx *sqlx.Tx, processor string, pd payment.Dispute) (done bool, err error) {
	status, ok := disputeStatusOf(pd.Status)
	if !ok {
		return true, nil // nothing Till can record
	}
	c, err := storage.ChargeAtProcessor(ctx, tx, processor, pd.ChargeID)
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	amount, tax := disputedTax(&c.Order, pd.Amount)
	d, opened, err := storage.InsertDispute(ctx, tx, r.Now(), storage.DisputeWrite{OrganizationID: c.OrganizationID,
		OrderID: c.ID, PaymentID: c.PaymentID, CustomerID: c.CustomerID, Status: status, Amount: amount, TaxAmount: tax,
		Currency: pd.Currency, Reason: optional(pd.Reason), EvidenceDueBy: pd.EvidenceDueBy, PastDue: pd.PastDue,
		Processor: processor, ProcessorID: pd.ID})
	if err != nil || !opened {
		return opened, err
	}
	return true, r.disputeResolved(ctx, tx, d)
}

// updateDispute takes the processor's newer word onto a stored dispute. A dispute that
// becomes resolved here has what it disputed revoked.
func (r *Resolver) updateDispute(ctx context.Context, tx *sqlx.Tx, d *storage.Dispute, pd payment.Dispute) (*storage.Dispute, error) {
	u := storage.DisputeUpdate{Status: d.Status, Reason: d.Reason, EvidenceDueBy: pd.EvidenceDueBy, PastDue: pd.PastDue}
	if pd.Reason != "" {
		u.Reason = &pd.Reason
	}
	if status, ok := disputeStatusOf(pd.Status); ok && !d.Closed() {
		u.Status = status
	}
	was := d.Resolved()
	out, err := storage.UpdateDispute(ctx, tx, d.ID, u, r.Now())
	if err != nil || was || !out.Resolved() {
		return out, err
	}
	return out, r.disputeResolved(ctx, tx, out)
}

// disputeResolved is upstream's _revoke, run once when a dispute is won or lost: a
// subscription's order ends the subscription now, a one-time purchase has its benefits
// revoked. A dispute still open changes nothing.
func (r *Resolver) disputeResolved(ctx context.Context, tx *sqlx.Tx, d *storage.Dispute) error {
	if !d.Resolved() {
		return nil
	}
	orgs := []uuid.UUID{d.OrganizationID}
	o, err := storage.LockOrder(ctx, tx, orgs, nil, d.OrderID)
	if err != nil {
		return err
	}
	if o.SubscriptionID != nil {
		s, err := storage.LockSubscription(ctx, tx, orgs, nil, *o.SubscriptionID)
		if err != nil || subscriptionEnded[s.Status] {
			return err
		}
		now, err := r.clockFor(ctx, tx, s.OrganizationID)
		if err != nil {
			return err
		}
		_, err = r.endSubscription(ctx, tx, s, now, now, nil, nil)
		return err
	}
	if o.ProductID == nil {
		return nil
	}
	return r.revokeBenefits(ctx, tx, grantScope{OrganizationID: o.OrganizationID, CustomerID: o.CustomerID,
		ProductID: *o.ProductID, OrderID: &o.ID})
}

// disputedTax splits a disputed total (taxes included) as upstream's
// Order.calculate_refunded_tax_from_total: all that is left when it disputes all that is
// left, else the order's tax share of it rounded half to even, never more than the tax left.
func disputedTax(o *storage.Order, total int64) (amount, tax int64) {
	left, taxLeft := int64(refundableAmount(o)), int64(refundableTaxAmount(o))
	switch {
	case total == left+taxLeft:
		return left, taxLeft
	case o.TaxAmount <= 0 || o.TotalAmount <= 0:
		return total, 0
	}
	tax = min(int64(math.Abs(math.RoundToEven(float64(o.TaxAmount*total)/float64(o.TotalAmount)))), taxLeft)
	return total - tax, tax
}
