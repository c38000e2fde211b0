package payment

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/stripe/stripe-go/v86"
)

// The translation of Stripe's errors into this package's: a refused card is a
// *DeclineError, a payment awaiting authentication an *ActionRequiredError, a refused
// refund a *RefundError, a fault on the way or on Stripe's side wraps ErrUnavailable, and
// anything else (a bad key, a request Stripe finds malformed) is a plain error whose text
// names Stripe's code and request id for the operator.

// chargeError maps the failure of a request that moves money or verifies a card.
func chargeError(ctx context.Context, op string, err error) error {
	var se *stripe.Error
	if errors.As(err, &se) && se.Type == stripe.ErrorTypeCard {
		if pi := se.PaymentIntent; pi != nil && pi.Status == stripe.PaymentIntentStatusRequiresAction {
			return &ActionRequiredError{PaymentIntentID: pi.ID, ClientSecret: pi.ClientSecret}
		}
		if si := se.SetupIntent; si != nil && si.Status == stripe.SetupIntentStatusRequiresAction {
			return &ActionRequiredError{SetupIntentID: si.ID, ClientSecret: si.ClientSecret}
		}
		return declineOf(se)
	}
	return stripeFault(ctx, op, err)
}

// declineOf is the decline Stripe reported; a missing report is a generic decline.
func declineOf(se *stripe.Error) *DeclineError {
	d := &DeclineError{Code: "card_declined", DeclineCode: "generic_decline", Message: declineMessageGeneric}
	if se == nil {
		return d
	}
	if se.Code != "" {
		d.Code = string(se.Code)
	}
	if se.DeclineCode != "" {
		d.DeclineCode = string(se.DeclineCode)
	} else if se.Code != "" {
		d.DeclineCode = string(se.Code)
	}
	if se.Msg != "" {
		d.Message = se.Msg
	}
	return d
}

// isInvalidRequest reports whether Stripe refused the request for what it asked
// (a token or a charge it does not know, an amount beyond what is left), as opposed
// to who asked (401, 403) or how often (429).
func isInvalidRequest(err error) bool {
	var se *stripe.Error
	if !errors.As(err, &se) || se.Type != stripe.ErrorTypeInvalidRequest {
		return false
	}
	switch se.HTTPStatusCode {
	case http.StatusBadRequest, http.StatusPaymentRequired, http.StatusNotFound:
		return true
	}
	return false
}

// refusalOf is the refund refusal an invalid request stands for, under Stripe's code
// (charge_already_refunded, amount_too_large, charge_disputed, resource_missing, …).
func refusalOf(err error) *RefundError {
	var se *stripe.Error
	errors.As(err, &se)
	code := string(se.Code)
	if code == "" {
		code = string(se.Type)
	}
	return &RefundError{Code: code, Message: se.Msg}
}

// stripeMessage is Stripe's message for an error it answered, else the error's text.
func stripeMessage(err error) string {
	var se *stripe.Error
	if errors.As(err, &se) && se.Msg != "" {
		return se.Msg
	}
	return err.Error()
}

// stripeFault describes a failure that is neither a decline nor a refusal. The Stripe
// error is described, not wrapped, so that no Stripe type leaves this package.
func stripeFault(ctx context.Context, op string, err error) error {
	var se *stripe.Error
	if !errors.As(err, &se) {
		if ctx.Err() != nil {
			return fmt.Errorf("stripe: %s: %w", op, ctx.Err())
		}
		return fmt.Errorf("%w: stripe: %s: %v", ErrUnavailable, op, err)
	}
	what := fmt.Sprintf("%s (%s", se.Msg, se.Type)
	if se.Code != "" {
		what += " " + string(se.Code)
	}
	what += fmt.Sprintf(", HTTP %d, request %s)", se.HTTPStatusCode, se.RequestID)
	if se.HTTPStatusCode >= http.StatusInternalServerError || se.HTTPStatusCode == http.StatusTooManyRequests ||
		se.Code == stripe.ErrorCodeLockTimeout {
		return fmt.Errorf("%w: stripe: %s: %s", ErrUnavailable, op, what)
	}
	return fmt.Errorf("stripe: %s: %s", op, what)
}
