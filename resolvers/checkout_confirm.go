package resolvers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/payment"
	"till/storage"
)

// Confirming a checkout runs in two transactions around the state machine
// open → confirmed → succeeded | failed:
//
//  1. Under the checkout's row lock: re-check it is open, store the buyer's details, re-price
//     it, check everything the purchase needs, and mark it confirmed. A concurrent or repeated
//     confirm waits for the lock and then finds it not open, so only one confirm proceeds.
//  2. Under the lock again: resolve or create the customer, save the payment method, create
//     the subscription or order and grants, redeem the discount, then charge, and mark it
//     succeeded. Everything is one transaction, so a declined charge rolls all of it back;
//     the checkout alone is then marked failed. The charge comes last so no rule can fail
//     after money moved; its idempotency key is the checkout id, so a retry after a fault
//     never charges twice. Any other failure puts the checkout back to open.
//
// A payment that cannot finish during the request (the card holder must pass 3-D Secure, a
// bank debit settles in days) rolls step 2 back too, and the checkout stays confirmed,
// waiting for the processor's word: the buyer's page gets the intent's client secret and
// status in payment_processor_metadata, as upstream shows them, and the processor's event
// then runs step 2 again with the money taken, or reopens the checkout.

// confirmation carries what step 1 checked to step 2.
type confirmation struct {
	checkout *storage.Checkout
	method   *payment.Method // saved at the processor from the payment token
	methodID *uuid.UUID      // an already saved method of the customer
	trialing bool
}

// confirmCheckout confirms and pays a checkout, by id (organization token) or client secret.
func (r *Resolver) confirmCheckout(ctx context.Context, in model.CheckoutConfirmInput) (*storage.Checkout, error) {
	switch {
	case in.ID != nil:
		if err := checkScope(ctx, []model.Scope{model.ScopeCheckoutsWrite}, false); err != nil {
			return nil, err
		}
		var err error
		if ctx, err = r.checkRole(ctx, model.PermissionSalesManage); err != nil {
			return nil, err
		}
	case in.ClientSecret == nil:
		return nil, Invalid("missing", "Field required", nil, "input", "id")
	}
	if out, ok, err := r.confirmUnanswered(ctx, in.ID, in.ClientSecret); ok {
		return out, err
	}
	conf := &confirmation{methodID: in.PaymentMethodID}
	if in.PaymentToken != nil {
		// Saving the token is a call to the processor: a request for no open checkout is
		// refused before it costs one. Step 1 checks again under the row lock, which is not
		// held across the processor call.
		c, err := r.openCheckout(ctx, in.ID, in.ClientSecret)
		if err != nil {
			return nil, err
		}
		if conf.method, err = r.saveCheckoutToken(ctx, c, in); err != nil {
			return nil, err
		}
	}
	ch := checkoutChanges{productID: in.ProductID, productPriceID: in.ProductPriceID, amount: in.Amount, seats: in.Seats,
		email: given(in.CustomerEmail), name: given(in.CustomerName), billingName: given(in.CustomerBillingName),
		taxID: given(in.CustomerTaxID), billingAddress: given(in.CustomerBillingAddress), isBusiness: in.IsBusinessCustomer,
		discountCode: given(in.DiscountCode), customFieldData: in.CustomFieldData}
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		c, err := r.lockOpenCheckout(ctx, tx, in.ID, in.ClientSecret)
		if err != nil {
			return err
		}
		if c, err = r.changeCheckout(ctx, tx, c, ch); err != nil {
			return err
		}
		if err := r.checkConfirmable(ctx, tx, c, conf); err != nil {
			return err
		}
		if _, err := storage.SetCheckoutStatus(ctx, tx, c.ID, storage.CheckoutStatusOpen,
			storage.CheckoutStatusConfirmed); err != nil {
			return err
		}
		conf.checkout = c
		return r.emit(ctx, tx, c.OrganizationID, "checkout.updated", c.ID)
	})
	if err != nil {
		return nil, err
	}
	out, err := r.completeCheckout(ctx, conf)
	return r.answerCharge(ctx, conf, out, err)
}

// answerCharge answers a confirmation whose step 2 ended with err: the checkout it
// completed; or, for a payment that waits for the buyer or the bank, the checkout left
// confirmed for the processor to settle; or, when the processor could not be reached, the
// checkout left confirmed while Till asks it again, with the same idempotency key and
// payment method, until it answers (so the buyer is charged at most once, and a retry
// with another card never meets the first charge's key); a declined charge fails the
// checkout; anything else reopens it.
func (r *Resolver) answerCharge(ctx context.Context, conf *confirmation, out *storage.Checkout, err error) (*storage.Checkout, error) {
	if err == nil {
		return out, nil
	}
	var waiting *paymentWaiting
	switch {
	case errors.As(err, &waiting):
		return r.awaitCheckoutPayment(ctx, conf, waiting)
	case errors.Is(err, payment.ErrUnavailable):
		return r.awaitCheckoutPayment(ctx, conf, &paymentWaiting{status: "processing"})
	}
	next := storage.CheckoutStatusOpen
	var decline *payment.DeclineError
	if errors.As(err, &decline) {
		next = storage.CheckoutStatusFailed
		err = &Error{Code: CodePaymentError, Detail: fmt.Sprintf(
			"The payment failed: %s (%s). Please try again with a different payment method.", decline.Message, decline.DeclineCode)}
	}
	if ferr := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		moved, err := storage.SetCheckoutStatus(ctx, tx, conf.checkout.ID, storage.CheckoutStatusConfirmed, next)
		if err != nil || !moved {
			return err
		}
		if err := storage.EndCheckoutPendingPayment(ctx, tx, conf.checkout.ID, false); err != nil {
			return err
		}
		return r.emit(ctx, tx, conf.checkout.OrganizationID, "checkout.updated", conf.checkout.ID)
	}); ferr != nil {
		r.logger.ErrorContext(ctx, "checkout: leaving confirmed failed", "checkout", conf.checkout.ID, "err", ferr)
	}
	return nil, err
}

// checkConfirmable checks what a purchase needs beyond a valid price: a live price, a buyer
// email, a payment instrument when one must be charged or saved, and the billing details
// the checkout requires.
func (r *Resolver) checkConfirmable(ctx context.Context, tx *sqlx.Tx, c *storage.Checkout, conf *confirmation) error {
	d, err := draftOf(ctx, tx, c)
	if err != nil {
		return err
	}
	if d.price.IsArchived {
		return Invalid("value_error", "Price is archived.", d.price.ID.String(), "input", "productPriceId")
	}
	if c.CustomerEmail == nil && c.CustomerID == nil {
		return Invalid("missing", "Field is required.", nil, "input", "customerEmail")
	}
	var discount *storage.Discount
	if c.DiscountID != nil {
		ds, err := storage.DiscountsByIDs(ctx, tx, []uuid.UUID{*c.DiscountID})
		if err != nil {
			return err
		}
		discount = ds[0]
	}
	flags := flagsOf(c, d.product, d.prices, discount)
	if flags.formRequired() && conf.method == nil && conf.methodID == nil {
		return Invalid("missing", "Payment token is required.", nil, "input", "paymentToken")
	}
	a := c.CustomerBillingAddress
	if (c.RequireBillingAddress || c.IsBusinessCustomer) && (a == nil || a.Line1 == nil || a.City == nil || a.PostalCode == nil) {
		return Invalid("value_error", "Full billing address is required.", nil, "input", "customerBillingAddress")
	}
	if c.IsBusinessCustomer && c.CustomerBillingName == nil {
		return Invalid("missing", "Field is required.", nil, "input", "customerBillingName")
	}
	if conf.methodID != nil {
		b, err := r.findCheckoutCustomer(ctx, tx, c)
		if err != nil {
			return err
		}
		if _, err := boundMethod(ctx, tx, b, *conf.methodID); err != nil {
			return err
		}
	}
	conf.trialing = c.TrialEnd != nil && d.product.IsRecurring()
	return nil
}

// completeCheckout is step 2: the purchase, in one transaction ending with the charge.
func (r *Resolver) completeCheckout(ctx context.Context, conf *confirmation) (*storage.Checkout, error) {
	var out *storage.Checkout
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		c, err := storage.LockCheckout(ctx, tx, []uuid.UUID{conf.checkout.OrganizationID}, conf.checkout.ID, r.Now())
		if err != nil {
			return err
		}
		if c.Status != storage.CheckoutStatusConfirmed {
			return notOpen(c)
		}
		out, err = r.fulfilCheckout(ctx, tx, c, conf, nil)
		return err
	})
	return out, err
}

// fulfilCheckout buys what the locked, confirmed checkout c holds and marks it succeeded,
// charging last unless paid says the money was taken already (a payment that finished
// later). A charge that must wait for the buyer or the bank is a *paymentWaiting, which
// rolls the purchase back.
func (r *Resolver) fulfilCheckout(ctx context.Context, tx *sqlx.Tx, c *storage.Checkout, conf *confirmation, paid *payment.Charge) (*storage.Checkout, error) {
	d, err := draftOf(ctx, tx, c)
	if err != nil {
		return nil, err
	}
	buyer, err := r.checkoutCustomer(ctx, tx, c)
	if err != nil {
		return nil, err
	}
	cust := buyer.customer
	pm, err := r.checkoutPaymentMethod(ctx, tx, buyer, conf)
	if err != nil {
		return nil, err
	}
	var pmID *uuid.UUID
	if pm != nil {
		pmID = &pm.ID
	}
	sub, order, err := r.purchase(ctx, tx, c, d, cust, pmID, conf.trialing)
	if err != nil {
		return nil, err
	}
	if c.DiscountID != nil {
		var subID *uuid.UUID
		if sub != nil {
			subID = &sub.ID
		}
		err := r.redeemDiscount(ctx, tx, *c.DiscountID, cust.ID, &c.ID, &order.ID, subID)
		var refused *Error
		if errors.As(err, &refused) && paid != nil {
			// The buyer paid the discounted price while another purchase took the last
			// redemption: what was paid for is bought, over the limit by one.
			r.logger.WarnContext(ctx, "checkout: discount redeemed past its limit by a payment that settled later",
				"checkout", c.ID, "discount", *c.DiscountID)
		} else if err != nil {
			return nil, err
		}
	}
	u := storage.CheckoutUpdate{Status: storage.Set(storage.CheckoutStatusSucceeded), CustomerID: storage.Set(&cust.ID)}
	if sub != nil {
		u.SubscriptionID = storage.Set(sub.ID)
	}
	if pm != nil {
		u.PaymentMethodType = storage.Set(pm.Type)
	}
	if c.TotalAmount > 0 && !conf.trialing {
		if pm == nil {
			return nil, Invalid("missing", "Payment token is required.", nil, "input", "paymentToken")
		}
		if paid == nil {
			if paid, err = r.chargeCheckout(ctx, tx, c, pm, d.product.Name); err != nil {
				return nil, err
			}
		}
		// The payment is recorded as renewals record theirs; a failure here rolls the
		// purchase back and a retry replays the same charge (same idempotency key).
		if err := storage.RecordChargeAttempt(ctx, tx, r.Now(), storage.ChargeAttempt{OrganizationID: c.OrganizationID,
			CustomerID: cust.ID, OrderID: order.ID, PaymentMethodID: &pm.ID, Processor: r.payments.Name(),
			ProcessorID: &paid.ID, Status: "succeeded", Amount: c.TotalAmount, Currency: c.Currency}); err != nil {
			return nil, err
		}
	}
	// Whatever the checkout waited for is over; the buyer's page reads the intent as
	// succeeded, as upstream records every completed checkout.
	if err := storage.EndCheckoutPendingPayment(ctx, tx, c.ID, true); err != nil {
		return nil, err
	}
	out, err := storage.UpdateCheckout(ctx, tx, c.ID, u, r.Now())
	if err != nil {
		return nil, err
	}
	return out, r.emit(ctx, tx, c.OrganizationID, "checkout.updated", c.ID)
}

// purchase creates what the checkout bought: for a recurring product a subscription (which
// grants its benefits) and its first order; for a one-time product a paid order and the
// product's benefits for that order. A trial's first order is for 0.
func (r *Resolver) purchase(ctx context.Context, tx *sqlx.Tx, c *storage.Checkout, d *checkoutDraft, cust *storage.Customer,
	pmID *uuid.UUID, trialing bool) (*storage.Subscription, *storage.Order, error) {
	var sub *storage.Subscription
	spec := orderSpec{OrganizationID: c.OrganizationID, CustomerID: cust.ID, ProductID: &d.product.ID,
		DiscountID: c.DiscountID, CheckoutID: &c.ID, BillingReason: storage.OrderBillingReasonPurchase,
		Status: storage.OrderStatusPaid, Currency: c.Currency,
		Items:          []orderItemSpec{{Label: d.product.Name, Amount: c.Amount, ProductPriceID: &d.price.ID}},
		DiscountAmount: c.DiscountAmount, BillingName: c.CustomerBillingName, BillingAddress: c.CustomerBillingAddress,
		Seats: c.Seats, Description: d.product.Name, CustomFieldData: c.CustomFieldData, Metadata: c.Metadata}
	if d.product.IsRecurring() {
		// The trial starts with the subscription, on the organization's clock (its test
		// clock in test mode), so it is measured from now rather than from the checkout.
		var trialEnd *time.Time
		if interval, count := activeTrial(c, d.product); trialing && interval != nil {
			now, err := r.clockFor(ctx, tx, c.OrganizationID)
			if err != nil {
				return nil, nil, err
			}
			end := addInterval(now, *interval, *count)
			trialEnd = &end
		}
		var err error
		if sub, err = r.createSubscription(ctx, tx, subscriptionSpec{OrganizationID: c.OrganizationID,
			CustomerID: cust.ID, Product: d.product, Prices: subscriptionPrices(d), DiscountID: c.DiscountID,
			CheckoutID: &c.ID, PaymentMethodID: pmID, Amount: c.Amount, Currency: c.Currency, Seats: c.Seats,
			TrialEnd: trialEnd, CustomFieldData: c.CustomFieldData, Metadata: c.Metadata}); err != nil {
			return nil, nil, err
		}
		spec.BillingReason, spec.SubscriptionID = storage.OrderBillingReasonSubscriptionCreate, &sub.ID
		if trialing {
			spec.Items[0].Label, spec.Items[0].Amount, spec.DiscountAmount = d.product.Name+" (trial)", 0, 0
		}
	}
	order, err := r.createOrder(ctx, tx, spec)
	if err != nil {
		return nil, nil, err
	}
	if sub == nil {
		err = r.grantBenefits(ctx, tx, grantScope{OrganizationID: c.OrganizationID, CustomerID: cust.ID,
			ProductID: d.product.ID, OrderID: &order.ID})
	}
	return sub, order, err
}

// subscriptionPrices are the prices a subscription bills: the selected one and the
// product's metered prices, billed from usage.
func subscriptionPrices(d *checkoutDraft) []*storage.ProductPrice {
	out := []*storage.ProductPrice{d.price}
	for _, p := range d.prices {
		if p.AmountType == storage.AmountTypeMeteredUnit && p.ID != d.price.ID {
			out = append(out, p)
		}
	}
	return out
}
