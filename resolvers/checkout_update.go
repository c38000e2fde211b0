package resolvers

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/storage"
)

// notOpen is the error for a change to a checkout that is no longer open. An open checkout
// past expires_at reads as expired (storage computes the effective status).
func notOpen(c *storage.Checkout) error {
	if c.Status == storage.CheckoutStatusExpired {
		return &Error{Code: CodeExpiredCheckout, Detail: "This checkout session has expired."}
	}
	return &Error{Code: CodeNotOpenCheckout, Detail: fmt.Sprintf("Checkout is not open: %s.", c.Status)}
}

// draftOf rebuilds the draft of a stored checkout, so a change re-prices it from its
// current product, price, seats, custom amount and discount.
func draftOf(ctx context.Context, tx *sqlx.Tx, c *storage.Checkout) (*checkoutDraft, error) {
	if c.ProductID == nil || c.ProductPriceID == nil {
		return nil, BadRequest("Checkout has no product.")
	}
	products, err := storage.ProductsByIDs(ctx, tx, []uuid.UUID{*c.ProductID})
	if err != nil {
		return nil, err
	}
	prices, err := storage.PricesByProducts(ctx, tx, []uuid.UUID{*c.ProductID})
	if err != nil {
		return nil, err
	}
	price, err := storage.PricesByIDs(ctx, tx, []uuid.UUID{*c.ProductPriceID})
	if err != nil {
		return nil, err
	}
	if products[0] == nil || price[0] == nil {
		return nil, NotFound("Product not found")
	}
	d := &checkoutDraft{orgID: c.OrganizationID, product: products[0], prices: prices[0], price: price[0],
		seats: c.Seats, minSeats: c.MinSeats, maxSeats: c.MaxSeats, discountID: c.DiscountID,
		allowTrial: c.AllowTrial, trialInterval: c.TrialInterval, trialIntervalCount: c.TrialIntervalCount}
	if c.CustomerID != nil {
		d.customerID = *c.CustomerID
	}
	if d.price.AmountType == storage.AmountTypeCustom {
		d.customAmount = &c.Amount
	}
	return d, nil
}

// changeDraft applies the price-affecting changes to a draft: another of the checkout's
// products or prices, an amount, seats, the discount and the trial settings. Switching
// product drops a discount that does not apply to the new one, as upstream does.
func (r *Resolver) changeDraft(ctx context.Context, tx *sqlx.Tx, c *storage.Checkout, d *checkoutDraft, ch checkoutChanges) error {
	productChanged := false
	if ch.productID != nil && *ch.productID != d.product.ID {
		offered, err := storage.ProductsByCheckouts(ctx, tx, []uuid.UUID{c.ID})
		if err != nil {
			return err
		}
		var p *storage.Product
		for _, o := range offered[0] {
			if o.ID == *ch.productID {
				p = o
			}
		}
		if p == nil {
			return Invalid("value_error", "Product is not available in this checkout.", ch.productID.String(), "input", "productId")
		}
		if p.IsArchived {
			return Invalid("value_error", "Product is archived.", ch.productID.String(), "input", "productId")
		}
		prices, err := storage.PricesByProducts(ctx, tx, []uuid.UUID{p.ID})
		if err != nil {
			return err
		}
		d.product, d.prices, d.price, d.customAmount, productChanged = p, prices[0], staticPrice(prices[0]), nil, true
		if d.price == nil {
			return Invalid("value_error", "Product has no price.", p.ID.String(), "input", "productId")
		}
	}
	if ch.productPriceID != nil && *ch.productPriceID != d.price.ID {
		d.price = nil
		for _, p := range d.prices {
			if p.ID == *ch.productPriceID {
				d.price = p
			}
		}
		if d.price == nil {
			return Invalid("value_error", "Price is not available in this checkout.", ch.productPriceID.String(), "input", "productPriceId")
		}
		d.customAmount = nil
	}
	if d.price.AmountType != storage.AmountTypeSeatBased {
		d.seats = nil
	} else if d.seats == nil && ch.seats == nil {
		d.seats = ptrTo(1)
	}
	if ch.seats != nil {
		if err := checkCount(ch.seats, "input", "seats"); err != nil {
			return err
		}
		d.seats = ch.seats
	}
	if ch.amount != nil && d.price.AmountType == storage.AmountTypeCustom {
		a := int64(*ch.amount)
		d.customAmount = &a
	}
	if ch.allowTrial != nil {
		d.allowTrial = ch.allowTrial
	}
	if v, ok := ch.trialInterval.ValueOK(); ok {
		d.trialInterval = v
	}
	if v, ok := ch.trialIntervalCount.ValueOK(); ok {
		d.trialIntervalCount = v
	}
	if v, ok := ch.discountID.ValueOK(); ok {
		d.discountID, d.discountCode = v, nil
	}
	if v, ok := ch.discountCode.ValueOK(); ok {
		allowed := c.AllowDiscountCodes
		if ch.allowDiscountCodes != nil {
			allowed = *ch.allowDiscountCodes
		}
		if v != nil && !allowed {
			return codesNotAllowed(*v)
		}
		d.discountID, d.discountCode = nil, v
	}
	if productChanged && d.discountID != nil && d.discountCode == nil {
		if _, err := r.price(ctx, tx, d, &storage.CheckoutUpdate{}); err != nil {
			var e *Error
			if errors.As(err, &e) && e.Code == CodeValidation && len(e.Errors) > 0 && e.Errors[0].Loc[len(e.Errors[0].Loc)-1] == "discountId" {
				d.discountID = nil
			}
		}
	}
	return nil
}

// updateCheckout changes an open checkout and re-prices it.
func (r *Resolver) updateCheckout(ctx context.Context, in model.CheckoutUpdateInput) (*storage.Checkout, error) {
	ch := checkoutChanges{productID: in.ProductID, productPriceID: in.ProductPriceID, amount: in.Amount, seats: in.Seats,
		email: in.CustomerEmail, name: in.CustomerName, billingName: in.CustomerBillingName, taxID: in.CustomerTaxID,
		billingAddress: in.CustomerBillingAddress, isBusiness: in.IsBusinessCustomer, discountID: in.DiscountID,
		discountCode: in.DiscountCode, allowDiscountCodes: in.AllowDiscountCodes, requireBilling: in.RequireBillingAddress,
		allowTrial: in.AllowTrial, trialInterval: in.TrialInterval, trialIntervalCount: in.TrialIntervalCount,
		successURL: in.SuccessURL, returnURL: in.ReturnURL, embedOrigin: in.EmbedOrigin, locale: in.Locale,
		metadata: in.Metadata, customerMetadata: in.CustomerMetadata, customFieldData: in.CustomFieldData}
	var out *storage.Checkout
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		c, err := r.lockOpenCheckout(ctx, tx, &in.ID, nil)
		if err != nil {
			return err
		}
		out, err = r.changeCheckout(ctx, tx, c, ch)
		if err != nil {
			return err
		}
		return r.emit(ctx, tx, c.OrganizationID, "checkout.updated", c.ID)
	})
	return out, err
}

// lockOpenCheckout locks the checkout a change is for, by id among the caller's
// organizations or else by client secret (the buyer's credential), and refuses it unless it
// is open: only an open checkout may be changed and re-priced.
func (r *Resolver) lockOpenCheckout(ctx context.Context, tx *sqlx.Tx, id *uuid.UUID, secret *string) (*storage.Checkout, error) {
	return r.findOpenCheckout(ctx, tx, id, secret, true)
}

// openCheckout is lockOpenCheckout without the lock, for refusing early what step 1 of a
// confirm would refuse anyway, before work that is costly or outside the database.
func (r *Resolver) openCheckout(ctx context.Context, id *uuid.UUID, secret *string) (*storage.Checkout, error) {
	return r.findOpenCheckout(ctx, r.db, id, secret, false)
}

func (r *Resolver) findOpenCheckout(ctx context.Context, q sqlx.ExtContext, id *uuid.UUID, secret *string, lock bool) (*storage.Checkout, error) {
	var (
		c   *storage.Checkout
		err error
	)
	switch {
	case id != nil && lock:
		c, err = storage.LockCheckout(ctx, q, organizations(ctx), *id, r.Now())
	case id != nil:
		c, err = storage.GetCheckout(ctx, q, organizations(ctx), *id, r.Now())
	case lock:
		c, err = storage.LockCheckoutByClientSecret(ctx, q, *secret, r.Now())
	default:
		c, err = storage.GetCheckoutByClientSecret(ctx, q, *secret, r.Now())
	}
	if err != nil {
		return nil, notFoundOr(err, "")
	}
	if c.Status != storage.CheckoutStatusOpen {
		return nil, notOpen(c)
	}
	return c, nil
}

// changeCheckout validates and writes changes to a locked, open checkout.
func (r *Resolver) changeCheckout(ctx context.Context, tx *sqlx.Tx, c *storage.Checkout, ch checkoutChanges) (*storage.Checkout, error) {
	d, err := draftOf(ctx, tx, c)
	if err != nil {
		return nil, err
	}
	if err := r.changeDraft(ctx, tx, c, d, ch); err != nil {
		return nil, err
	}
	var u storage.CheckoutUpdate
	if err := setDetails(c, ch, &u); err != nil {
		return nil, err
	}
	if _, err := r.price(ctx, tx, d, &u); err != nil {
		return nil, err
	}
	return storage.UpdateCheckout(ctx, tx, c.ID, u, r.Now())
}
