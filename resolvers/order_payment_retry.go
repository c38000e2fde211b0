package resolvers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/internal/payment"
	"till/storage"
)

// The refusals of a manual payment retry, upstream's class names (server/polar/order/service.py).
const (
	codeOrderNotEligibleForRetry    = "OrderNotEligibleForRetry"
	codePaymentAlreadyInProgress    = "PaymentAlreadyInProgress"
	codeManualRetryLimitExceeded    = "ManualRetryLimitExceeded"
	codePaymentRetryValidationError = "PaymentRetryValidationError"
)

// customerRetryLimit is how many retries the customer may make of one order's payment,
// whatever their outcome (upstream's CUSTOMER_RETRY_MAX_ATTEMPTS).
const customerRetryLimit = 5

// retryFailedMessage is upstream's answer when a retry failed for a reason other than the
// card: the processor unreachable, or a fault on the way.
const retryFailedMessage = "Payment failed. Please try again."

// Statuses of a retry's answer, upstream's strings.
const (
	retrySucceeded      = "succeeded"
	retryRequiresAction = "requires_action"
	retryProcessing     = "processing"
	retryFailed         = "failed"
)

// orderPaymentStatus is the latest payment of one of the session customer's orders, as
// upstream's get_payment_status: its status and decline message, no_payment without one.
func (r *Resolver) orderPaymentStatus(ctx context.Context, id uuid.UUID) (*model.OrderPaymentStatus, error) {
	o, err := storage.GetOrder(ctx, r.db, organizations(ctx), portalCustomer(ctx), id)
	if err != nil {
		return nil, notFoundOr(err, "")
	}
	p, err := storage.LatestOrderPayment(ctx, r.db, o.ID)
	if errors.Is(err, storage.ErrNotFound) {
		return &model.OrderPaymentStatus{Status: "no_payment"}, nil
	}
	if err != nil {
		return nil, err
	}
	return &model.OrderPaymentStatus{Status: p.Status, Error: p.DeclineMessage}, nil
}

// retryClaim is a manual retry that holds its order's payment lock: the order as it was
// locked, the saved method to charge (nil for a new card) and the time of the retry.
type retryClaim struct {
	order  *storage.OrderPayment
	method *storage.PaymentMethod
	now    time.Time
}

// portalConfirmOrderPayment retries the payment of one of the session customer's pending
// orders now, as upstream's process_retry_payment: the rules are checked and the order's
// payment lock taken in one transaction (claimRetry), the card charged outside it, and the
// outcome recorded in another (recordRetry). A declined card, or a retry that could not
// reach the processor, answers failed and releases the lock; a card that needs 3-D Secure
// answers requires_action and keeps it, until the intent settles (settleOrderIntent) or the
// lock goes stale.
func (r *Resolver) portalConfirmOrderPayment(ctx context.Context, id uuid.UUID, in model.PortalOrderConfirmPaymentInput) (*model.OrderPaymentConfirmation, error) {
	c, err := r.claimRetry(ctx, auth.FromContext(ctx).CustomerID, id, in)
	if err != nil {
		return nil, err
	}
	out, err := r.chargeRetry(ctx, c, in.ConfirmationTokenID)
	if err != nil {
		if rerr := storage.SetOrderPaymentLock(context.WithoutCancel(ctx), r.db, c.order.ID, nil); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, err
	}
	return out, nil
}

// claimRetry checks a retry against upstream's rules, in upstream's order, and takes the
// order's payment lock; a refusal takes nothing.
func (r *Resolver) claimRetry(ctx context.Context, customerID, id uuid.UUID, in model.PortalOrderConfirmPaymentInput) (*retryClaim, error) {
	cur, err := storage.GetOrder(ctx, r.db, organizations(ctx), &customerID, id)
	if err != nil {
		return nil, notFoundOr(err, "")
	}
	c := &retryClaim{}
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		if c.now, err = r.clockFor(ctx, tx, cur.OrganizationID); err != nil {
			return err
		}
		o, _, err := r.lockOrderPayment(ctx, tx, storage.OrderPaymentKey{ID: id, Orgs: organizations(ctx), CustomerID: &customerID},
			cur.SubscriptionID, c.now)
		if err != nil {
			return notFoundOr(err, "")
		}
		notEligible := &Error{Code: codeOrderNotEligibleForRetry, Detail: fmt.Sprintf("Order %s is not eligible for payment retry.", o.ID)}
		switch {
		case o.Status != storage.OrderStatusPending, o.NextPaymentAttemptAt == nil, o.SubscriptionID == nil:
			return notEligible
		case o.PaymentLocked:
			return &Error{Code: codePaymentAlreadyInProgress, Detail: fmt.Sprintf("Payment for order %s is already in progress", o.ID)}
		case in.ConfirmationTokenID == nil && in.PaymentMethodID == nil:
			return &Error{Code: codePaymentRetryValidationError, Detail: "Either confirmation_token_id or payment_method_id must be provided"}
		case in.ConfirmationTokenID != nil && in.PaymentMethodID != nil:
			return &Error{Code: codePaymentRetryValidationError, Detail: "Only one of confirmation_token_id or payment_method_id can be provided"}
		case o.CustomerRetries >= customerRetryLimit:
			return &Error{Code: codeManualRetryLimitExceeded,
				Detail: fmt.Sprintf("Maximum number of manual payment retry attempts has been reached for order %s.", o.ID)}
		}
		if in.PaymentMethodID != nil {
			c.method, err = storage.GetCustomerPaymentMethod(ctx, tx, o.CustomerID, *in.PaymentMethodID)
			if errors.Is(err, storage.ErrNotFound) {
				return &Error{Code: codePaymentRetryValidationError, Detail: "Payment method does not belong to customer"}
			}
			if err != nil {
				return err
			}
		}
		c.order = o
		return storage.SetOrderPaymentLock(ctx, tx, o.ID, &c.now)
	})
	return c, err
}

// chargeRetry charges the claimed order's due amount to the saved method, or to the card
// behind token, and records the outcome. It errs only when the outcome cannot be recorded;
// the caller then releases the lock, and the next retry charges under the same key, so a
// payment the processor took is never taken twice.
func (r *Resolver) chargeRetry(ctx context.Context, c *retryClaim, token *string) (*model.OrderPaymentConfirmation, error) {
	o := c.order
	var saved *payment.Method
	var req payment.ChargeRequest
	if c.method != nil {
		req = chargeRequest(c.method, o.DueAmount, o.Currency, "", o.Description)
	} else {
		cust, err := storage.GetCustomer(ctx, r.db, []uuid.UUID{o.OrganizationID}, o.CustomerID)
		if err != nil {
			return nil, err
		}
		ref, err := processorCustomer(ctx, r.db, cust)
		if err != nil {
			return nil, err
		}
		m, err := r.payments.SavePaymentMethod(ctx, payment.SaveRequest{Token: *token, Customer: ref})
		if err != nil {
			return r.retryRefused(ctx, o, err, *token)
		}
		saved = &m
		req = payment.ChargeRequest{Amount: o.DueAmount, Currency: o.Currency, PaymentMethodID: m.ProcessorID,
			ProcessorCustomerID: m.ProcessorCustomerID, MethodType: m.Type, Description: o.Description}
	}
	processorID := req.PaymentMethodID
	attempt := storage.ChargeAttempt{OrganizationID: o.OrganizationID, CustomerID: o.CustomerID, OrderID: o.ID,
		Processor: r.payments.Name(), Amount: o.DueAmount, Currency: o.Currency, Status: retrySucceeded,
		Trigger: renewalPtr(storage.PaymentTriggerRetryCustomer)}
	out := &model.OrderPaymentConfirmation{Status: retrySucceeded}
	if o.DueAmount > 0 {
		key := fmt.Sprintf("order:%s:customer-retry:%d:%s", o.ID, o.CustomerAttempts, processorID)
		req.IdempotencyKey = key
		ch, err := r.payments.Charge(ctx, req)
		var decline *payment.DeclineError
		var action *payment.ActionRequiredError
		switch {
		case errors.As(err, &decline):
			attempt.Status, out.Status, out.Error = retryFailed, retryFailed, &decline.Message
			attempt.DeclineReason, attempt.DeclineMessage = &decline.DeclineCode, &decline.Message
			saved = nil // upstream keeps a new card only once it paid, or may still pay
		case errors.As(err, &action) && action.PaymentIntentID != "":
			attempt.Status, attempt.IntentID = "pending", &action.PaymentIntentID
			out.Status, out.ClientSecret = retryRequiresAction, &action.ClientSecret
		case err != nil:
			return r.retryRefused(ctx, o, err, processorID)
		case ch.Processing:
			// A bank debit pays the order only once it settles: the attempt waits with its
			// intent, under the lock, for the processor's event (settleOrderIntent).
			attempt.Status, attempt.IntentID = "pending", &ch.IntentID
			out.Status = retryProcessing
		default:
			attempt.ProcessorID = &ch.ID
		}
	}
	return out, r.recordRetry(ctx, c, attempt, saved, out.Status == retryProcessing)
}

// retryRefused answers a retry that never reached a decision at the processor (an unknown
// token, the processor unreachable or failing) as upstream answers it: failed, with the
// lock released and nothing recorded.
func (r *Resolver) retryRefused(ctx context.Context, o *storage.OrderPayment, err error, what string) (*model.OrderPaymentConfirmation, error) {
	r.logger.WarnContext(ctx, "order payment retry failed", "order", o.ID, "payment", what, "error", err)
	msg := retryFailedMessage
	var decline *payment.DeclineError
	switch {
	case errors.Is(err, payment.ErrInvalidToken):
		msg = fmt.Sprintf("No such token: '%s'", what)
	case errors.As(err, &decline):
		msg = decline.Message
	}
	if err := storage.SetOrderPaymentLock(context.WithoutCancel(ctx), r.db, o.ID, nil); err != nil {
		return nil, err
	}
	return &model.OrderPaymentConfirmation{Status: retryFailed, Error: &msg}, nil
}

// recordRetry stores a retry's outcome: the new card (saved as the portal saves cards), the
// attempt, and for a payment that went through the order paid as a dunning retry pays it.
// The lock is released unless the payment waits for the customer.
func (r *Resolver) recordRetry(ctx context.Context, c *retryClaim, attempt storage.ChargeAttempt, saved *payment.Method,
	debit bool) error {
	ctx = context.WithoutCancel(ctx) // the processor has answered: what it did is kept, whoever still listens
	return storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		o, s, err := r.lockOrderPayment(ctx, tx, storage.OrderPaymentKey{ID: c.order.ID}, c.order.SubscriptionID, c.now)
		if err != nil {
			return err
		}
		if c.method != nil {
			attempt.PaymentMethodID = &c.method.ID
		} else if saved != nil {
			cust, err := storage.GetCustomer(ctx, tx, []uuid.UUID{o.OrganizationID}, o.CustomerID)
			if err != nil {
				return err
			}
			pm, err := r.storeMethod(ctx, tx, cust, *saved, false)
			if err != nil {
				return err
			}
			attempt.PaymentMethodID = &pm.ID
		}
		if err := storage.RecordChargeAttempt(ctx, tx, c.now, attempt); err != nil {
			return err
		}
		switch attempt.Status {
		case retrySucceeded:
			return r.orderPaidByRetry(ctx, tx, o.ID, s, c.now, attempt.PaymentMethodID)
		case retryFailed:
			return storage.SetOrderPaymentLock(ctx, tx, o.ID, nil)
		}
		if debit {
			// A debit takes days, past any lock: dunning stops until it settles, and a
			// failure hands the order back to it (bankDebitFailed).
			return r.scheduleOrderPayment(ctx, tx, o.ID, nil)
		}
		return nil
	})
}
