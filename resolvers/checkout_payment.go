package resolvers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/jobs"
	"till/internal/payment"
	"till/storage"
)

// paymentWaiting is a checkout charge that finishes later: the card holder must pass 3-D
// Secure on the processor's page (requires_action), or a bank debit is processing.
type paymentWaiting struct {
	intentID, clientSecret, status string
}

func (w *paymentWaiting) Error() string { return "payment " + w.intentID + " is " + w.status }

// chargeCheckout charges the checkout's total to pm under the checkout's current key.
func (r *Resolver) chargeCheckout(ctx context.Context, tx *sqlx.Tx, c *storage.Checkout, pm *storage.PaymentMethod, description string) (*payment.Charge, error) {
	key, err := storage.CheckoutChargeKey(ctx, tx, c.ID)
	if err != nil {
		return nil, err
	}
	charge, err := r.payments.Charge(ctx, chargeRequest(pm, c.TotalAmount, c.Currency, key, description))
	var action *payment.ActionRequiredError
	switch {
	case errors.As(err, &action):
		return nil, &paymentWaiting{intentID: action.PaymentIntentID, clientSecret: action.ClientSecret, status: "requires_action"}
	case err != nil:
		return nil, err
	case charge.Processing:
		return nil, &paymentWaiting{intentID: charge.IntentID, status: "processing"}
	}
	return &charge, nil
}

// awaitCheckoutPayment leaves the confirmed checkout waiting for w's intent, with what its
// settling needs, and answers it: the buyer's page finishes the payment with the client
// secret, or waits for the bank.
func (r *Resolver) awaitCheckoutPayment(ctx context.Context, conf *confirmation, w *paymentWaiting) (*storage.Checkout, error) {
	var out *storage.Checkout
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		c := conf.checkout
		if err := storage.SetCheckoutPendingPayment(ctx, tx, c.ID, storage.PendingPayment{IntentID: w.intentID,
			Method: conf.method, MethodID: conf.methodID, Trialing: conf.trialing}, w.clientSecret, w.status); err != nil {
			return err
		}
		if w.intentID == "" {
			key := JobCheckoutCharge + ":" + c.ID.String()
			at := time.Now().Add(checkoutChargeRetry)
			if _, _, err := storage.InsertJob(ctx, tx, storage.JobInsert{Kind: JobCheckoutCharge, OrganizationID: &c.OrganizationID,
				Args: checkoutChargeArgs{CheckoutID: c.ID}, UniqueKey: &key, ScheduledAt: &at}); err != nil {
				return err
			}
		}
		var err error
		if out, err = storage.GetCheckout(ctx, tx, []uuid.UUID{c.OrganizationID}, c.ID, r.Now()); err != nil {
			return err
		}
		return r.emit(ctx, tx, c.OrganizationID, "checkout.updated", c.ID)
	})
	return out, err
}

// JobCheckoutCharge asks the processor again for a checkout charge whose outcome is unknown.
const JobCheckoutCharge = "checkout.charge"

// checkoutChargeRetry is how long after an unanswered charge Till first asks again; the job
// worker's backoff spaces the later attempts.
const checkoutChargeRetry = 2 * time.Second

type checkoutChargeArgs struct {
	CheckoutID uuid.UUID `json:"checkout_id"`
}

// retryCheckoutChargeJob replays the charge of a checkout the processor did not answer;
// still unreachable, the job fails and is retried after the worker's backoff.
func (r *Resolver) retryCheckoutChargeJob(ctx context.Context, _ *sqlx.Tx, job *storage.Job) error {
	var args checkoutChargeArgs
	if err := jobs.DecodeArgs(job, &args); err != nil {
		return err
	}
	if job.OrganizationID == nil {
		return jobs.Discard(errors.New("a checkout charge job names no organization"))
	}
	c, err := storage.GetCheckout(ctx, r.db, []uuid.UUID{*job.OrganizationID}, args.CheckoutID, r.Now())
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var answered *Error
	if _, _, err = r.retryUnansweredCharge(ctx, c); errors.As(err, &answered) {
		return nil // the buyer's answer (a decline), which the checkout now shows
	}
	return err
}

// retryUnansweredCharge replays the charge of confirmed checkout c that the processor did
// not answer, with the same key and payment method: the processor answers the first outcome
// if the charge went through, or charges now, and the checkout is answered as a first
// confirmation is. ok is false when c waits for no such charge; a processor still
// unreachable is payment.ErrUnavailable, the checkout unchanged.
func (r *Resolver) retryUnansweredCharge(ctx context.Context, c *storage.Checkout) (out *storage.Checkout, ok bool, err error) {
	if c.Status != storage.CheckoutStatusConfirmed {
		return nil, false, nil
	}
	p, err := storage.CheckoutPendingPayment(ctx, r.db, c.ID)
	if err != nil || p == nil || p.IntentID != "" {
		return nil, false, err
	}
	conf := &confirmation{checkout: c, method: p.Method, methodID: p.MethodID, trialing: p.Trialing}
	out, err = r.completeCheckout(ctx, conf)
	if errors.Is(err, payment.ErrUnavailable) {
		return nil, true, err
	}
	out, err = r.answerCharge(ctx, conf, out, err)
	return out, true, err
}

// confirmUnanswered answers a buyer who confirms again a checkout whose charge the
// processor did not answer: rather than a conflict, the first charge is asked for again
// (never a second one with the new details), which settles the checkout or, with the
// processor still unreachable, says so. ok is false for any other checkout, which the
// confirmation then handles as usual.
func (r *Resolver) confirmUnanswered(ctx context.Context, id *uuid.UUID, secret *string) (*storage.Checkout, bool, error) {
	var c *storage.Checkout
	var err error
	if id != nil {
		c, err = storage.GetCheckout(ctx, r.db, organizations(ctx), *id, r.Now())
	} else {
		c, err = storage.GetCheckoutByClientSecret(ctx, r.db, *secret, r.Now())
	}
	if err != nil {
		return nil, false, nil // refused as usual by the confirmation
	}
	out, ok, err := r.retryUnansweredCharge(ctx, c)
	if errors.Is(err, payment.ErrUnavailable) {
		err = &Error{Code: CodePaymentError, Detail: "The payment processor could not be reached. Please try again."}
	}
	return out, ok, err
}

// settleCheckoutIntent applies the final outcome of the payment a confirmed checkout waits
// for: paid, it completes the purchase with the money taken, as upstream's handle_success;
// failed, it reopens the checkout for another payment method, as upstream's
// handle_failure, and the next charge takes a key of its own. handled is false when no
// checkout waits for the intent. A second outcome for one intent finds nothing waiting.
func (r *Resolver) settleCheckoutIntent(ctx context.Context, tx *sqlx.Tx, in payment.IntentOutcome) (handled bool, err error) {
	c, p, err := storage.LockCheckoutByPendingIntent(ctx, tx, in.IntentID, r.Now())
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if c.Status != storage.CheckoutStatusConfirmed {
		return true, storage.EndCheckoutPendingPayment(ctx, tx, c.ID, false)
	}
	if in.Succeeded {
		conf := &confirmation{checkout: c, method: p.Method, methodID: p.MethodID, trialing: p.Trialing}
		if err := storage.Savepoint(ctx, tx, "settle_checkout"); err != nil {
			return true, err
		}
		_, err := r.fulfilCheckout(ctx, tx, c, conf, &payment.Charge{ID: in.ChargeID, Amount: in.Amount})
		var refused *Error
		if !errors.As(err, &refused) {
			return true, err
		}
		if err := storage.RollbackToSavepoint(ctx, tx, "settle_checkout"); err != nil {
			return true, err
		}
		return true, r.refundUnbought(ctx, tx, c, in, refused)
	}
	if _, err := storage.SetCheckoutStatus(ctx, tx, c.ID, storage.CheckoutStatusConfirmed, storage.CheckoutStatusOpen); err != nil {
		return true, err
	}
	if err := storage.EndCheckoutPendingPayment(ctx, tx, c.ID, false); err != nil {
		return true, err
	}
	if err := storage.EndCheckoutChargeAttempt(ctx, tx, c.ID); err != nil {
		return true, err
	}
	return true, r.emit(ctx, tx, c.OrganizationID, "checkout.updated", c.ID)
}

// refundUnbought gives back a payment that settled for a checkout a rule then refused to
// complete (its price archived while the buyer authenticated, say), so that no buyer pays
// for nothing, and fails the checkout. The refund's key is the checkout's, so a retry of
// the event refunds once.
func (r *Resolver) refundUnbought(ctx context.Context, tx *sqlx.Tx, c *storage.Checkout, in payment.IntentOutcome, why *Error) error {
	r.logger.WarnContext(ctx, "checkout: refunding a payment for a purchase refused after it settled",
		"checkout", c.ID, "charge", in.ChargeID, "reason", why.Detail)
	if _, err := r.payments.Refund(ctx, payment.RefundRequest{ChargeID: in.ChargeID, Amount: in.Amount, Currency: in.Currency,
		IdempotencyKey: "checkout_" + c.ID.String() + "_unbought", Reason: "requested_by_customer"}); err != nil {
		return err
	}
	if _, err := storage.SetCheckoutStatus(ctx, tx, c.ID, storage.CheckoutStatusConfirmed, storage.CheckoutStatusFailed); err != nil {
		return err
	}
	if err := storage.EndCheckoutPendingPayment(ctx, tx, c.ID, false); err != nil {
		return err
	}
	return r.emit(ctx, tx, c.OrganizationID, "checkout.updated", c.ID)
}

// saveRefusal is the answer to a processor that would not save a payment method: the card
// was declined, its issuer wants the holder to authenticate before it can be kept for
// later, or the processor could not be reached. Other errors pass unchanged.
func saveRefusal(err error) error {
	var decline *payment.DeclineError
	var action *payment.ActionRequiredError
	switch {
	case errors.As(err, &decline):
		return &Error{Code: CodePaymentError, Detail: fmt.Sprintf(
			"The payment method was declined: %s (%s). Please try again with a different payment method.",
			decline.Message, decline.DeclineCode)}
	case errors.As(err, &action):
		return &Error{Code: CodePaymentError, Detail: "The card issuer requires authentication (3-D Secure) to save " +
			"this payment method. Please try again with a different payment method."}
	case errors.Is(err, payment.ErrUnavailable):
		return &Error{Code: CodePaymentError, Detail: "The payment processor could not be reached. Please try again."}
	}
	return err
}
