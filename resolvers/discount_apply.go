package resolvers

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/pricing"
	"till/storage"
)

// discountAmount is what a discount takes off a base amount, by the pricing rules a renewal
// uses too: a percentage rounded half up (upstream's polar_round), or a fixed amount capped at
// the base so a total never goes negative. Whether a fixed discount's currency fits is the
// caller's check.
func discountAmount(d *storage.Discount, base int64) int64 {
	switch {
	case d.Type == storage.DiscountTypePercentage && d.BasisPoints != nil:
		return pricing.PercentOff(base, *d.BasisPoints)
	case d.Type == storage.DiscountTypeFixed && d.Amount != nil:
		return pricing.FixedOff(base, *d.Amount)
	}
	return 0
}

// applyDiscount resolves a discount by id or code for a customer buying productID at a
// base amount in currency, checks validity window, product restriction, redemption limits
// (total and per customer) and currency, and returns the amount taken off. It does not
// redeem: redeemDiscount does, when the purchase commits. Arguments: organization,
// discount id, code, customer, product, base amount, currency. customerID may be uuid.Nil
// while the buyer is still unknown; the per-customer limit is then checked at confirmation.
func (r *Resolver) applyDiscount(ctx context.Context, tx *sqlx.Tx, orgID uuid.UUID, discountID *uuid.UUID, code *string,
	customerID, productID uuid.UUID, amount int64, currency string) (*discountUse, error) {
	var (
		d   *storage.Discount
		err error
		loc = []any{"input", "discountId"}
		in  any
	)
	switch {
	case discountID != nil:
		in = discountID.String()
		d, err = storage.GetDiscount(ctx, tx, []uuid.UUID{orgID}, *discountID)
	case code != nil:
		loc, in = []any{"input", "discountCode"}, *code
		d, err = storage.GetDiscountByCode(ctx, tx, orgID, *code)
	default:
		return nil, Invalid("missing", "Field required", nil, loc...)
	}
	if errors.Is(err, storage.ErrNotFound) {
		return nil, Invalid("value_error", "Discount does not exist.", in, loc...)
	}
	if err != nil {
		return nil, err
	}
	now := r.Now()
	switch {
	case d.StartsAt != nil && now.Before(*d.StartsAt):
		return nil, Invalid("value_error", "Discount is not redeemable yet.", in, loc...)
	case d.EndsAt != nil && !now.Before(*d.EndsAt):
		return nil, Invalid("value_error", "Discount has expired.", in, loc...)
	case d.MaxRedemptions != nil && d.RedemptionsCount >= *d.MaxRedemptions:
		return nil, Invalid("value_error", "Discount is no longer redeemable.", in, loc...)
	case d.Type == storage.DiscountTypeFixed && (d.Currency == nil || *d.Currency != currency):
		return nil, Invalid("value_error", "Discount is not applicable to this currency.", in, loc...)
	}
	ok, err := storage.DiscountAppliesToProduct(ctx, tx, d.ID, productID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, Invalid("value_error", "Discount is not applicable to this product.", in, loc...)
	}
	if d.MaxRedemptionsPerCustomer != nil && customerID != uuid.Nil {
		n, err := storage.CountCustomerRedemptions(ctx, tx, d.ID, customerID)
		if err != nil {
			return nil, err
		}
		if n >= *d.MaxRedemptionsPerCustomer {
			return nil, Invalid("value_error", "Discount has already been redeemed the maximum number of times by this customer.", in, loc...)
		}
	}
	return &discountUse{Discount: d, Amount: discountAmount(d, amount)}, nil
}

// redeemDiscount counts one redemption of a discount for a customer, race-free: the limit
// checks and the increment are one statement, so concurrent purchases never exceed
// max_redemptions or max_redemptions_per_customer. An exhausted discount is an error.
func (r *Resolver) redeemDiscount(ctx context.Context, tx *sqlx.Tx, discountID, customerID uuid.UUID, checkoutID, orderID, subscriptionID *uuid.UUID) error {
	red := storage.Redemption{DiscountID: discountID, CheckoutID: checkoutID, OrderID: orderID, SubscriptionID: subscriptionID}
	if customerID != uuid.Nil {
		red.CustomerID = &customerID
	}
	err := storage.RedeemDiscount(ctx, tx, red, r.Now())
	if errors.Is(err, storage.ErrNotRedeemable) {
		return Invalid("value_error", "Discount is no longer redeemable.", discountID.String(), "input", "discountId")
	}
	return err
}
