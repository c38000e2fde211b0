package resolvers

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/pricing"
	"till/storage"
)

// discountSorts whitelists the discount list's sorting criteria (upstream's DiscountSortProperty).
var discountSorts = map[string]string{"created_at": "created_at", "name": "name", "code": "code",
	"redemptions_count": "redemptions_count"}

// Upstream's discount bounds (server/polar/discount/schemas.py).
const (
	maxDiscountAmount = 999_999_999_999
	maxDiscountMonths = 999
	minCodeLength     = 3
	maxCodeLength     = 256
)

// discountFields is a discount's writable state, validated as a whole so a create and an
// update (the stored discount with the update's fields laid over it) obey the same rules.
type discountFields struct {
	Name                      string
	Type                      storage.DiscountType
	Duration                  storage.DiscountDuration
	BasisPoints               *int
	Amount                    *int
	Currency                  *string
	DurationInMonths          *int
	Code                      *string
	StartsAt, EndsAt          *time.Time
	MaxRedemptions            *int
	MaxRedemptionsPerCustomer *int
	Metadata                  storage.JSONMap
}

// write validates the fields and converts them to the stored shape. Fields that do not
// belong to the type or duration are dropped, as upstream's discriminated schemas ignore them.
func (f discountFields) write() (storage.DiscountWrite, error) {
	w := storage.DiscountWrite{Name: f.Name, Type: f.Type, Duration: f.Duration, StartsAt: f.StartsAt, EndsAt: f.EndsAt,
		MaxRedemptions: f.MaxRedemptions, MaxRedemptionsPerCustomer: f.MaxRedemptionsPerCustomer, Metadata: f.Metadata}
	if len([]rune(strings.TrimSpace(f.Name))) < 1 {
		return w, Invalid("string_too_short", "String should have at least 1 character", f.Name, "input", "name")
	}
	switch f.Type {
	case storage.DiscountTypePercentage:
		if f.BasisPoints == nil {
			return w, Invalid("missing", "Field required", nil, "input", "basisPoints")
		}
		if *f.BasisPoints < 1 || *f.BasisPoints > pricing.BasisPointsWhole {
			return w, Invalid("less_than_equal", "Basis points must be between 1 and 10000.", *f.BasisPoints, "input", "basisPoints")
		}
		w.BasisPoints = f.BasisPoints
	case storage.DiscountTypeFixed:
		if f.Amount == nil {
			return w, Invalid("missing", "Field required", nil, "input", "amount")
		}
		if *f.Amount < 0 || *f.Amount > maxDiscountAmount {
			return w, Invalid("greater_than_equal", "Amount must be between 0 and 999999999999 cents.", *f.Amount, "input", "amount")
		}
		amount, currency := int64(*f.Amount), "usd"
		if f.Currency != nil {
			currency = strings.ToLower(*f.Currency)
		}
		if !currencyCode.MatchString(currency) {
			return w, Invalid("value_error", "Currency must be a three-letter ISO 4217 code.", currency, "input", "currency")
		}
		w.Amount, w.Currency = &amount, &currency
	}
	if f.Duration == storage.DiscountDurationRepeating {
		if f.DurationInMonths == nil {
			return w, Invalid("missing", "Field required", nil, "input", "durationInMonths")
		}
		if *f.DurationInMonths < 1 || *f.DurationInMonths > maxDiscountMonths {
			return w, Invalid("less_than_equal", "Duration in months must be between 1 and 999.", *f.DurationInMonths, "input", "durationInMonths")
		}
		w.DurationInMonths = f.DurationInMonths
	}
	if f.Code != nil && *f.Code != "" {
		if err := checkCode(*f.Code); err != nil {
			return w, err
		}
		w.Code = f.Code
	}
	if f.StartsAt != nil && f.EndsAt != nil && !f.StartsAt.Before(*f.EndsAt) {
		return w, Invalid("value_error", "Value error, starts_at must be before ends_at", nil, "input", "endsAt")
	}
	for _, lim := range []struct {
		v   *int
		loc string
	}{{f.MaxRedemptions, "maxRedemptions"}, {f.MaxRedemptionsPerCustomer, "maxRedemptionsPerCustomer"}} {
		if lim.v != nil && *lim.v < 1 {
			return w, Invalid("greater_than_equal", "Input should be greater than or equal to 1", *lim.v, "input", lim.loc)
		}
	}
	return w, checkMetadata(f.Metadata, "input", "metadata")
}

// checkCode applies upstream's code rule: 3 to 256 letters and digits.
func checkCode(code string) error {
	n := len([]rune(code))
	for _, c := range code {
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			return Invalid("value_error", "Value error, Code must contain only alphanumeric characters.", code, "input", "code")
		}
	}
	if n < minCodeLength || n > maxCodeLength {
		return Invalid("value_error", "Value error, Code must be between 3 and 256 characters long.", code, "input", "code")
	}
	return nil
}

// discountConflict explains a clash on the per-organization unique code.
func discountConflict(err error, code *string) error {
	if errors.Is(err, storage.ErrConflict) {
		return Invalid("value_error", "Discount with this code already exists.", code, "input", "code")
	}
	return err
}

// createDiscount validates and stores a discount with its product restriction.
func (r *Resolver) createDiscount(ctx context.Context, in model.DiscountCreateInput) (*storage.Discount, error) {
	orgID, err := targetOrganization(ctx, in.OrganizationID)
	if err != nil {
		return nil, err
	}
	w, err := discountFields{Name: in.Name, Type: in.Type, Duration: in.Duration, BasisPoints: in.BasisPoints,
		Amount: in.Amount, Currency: in.Currency, DurationInMonths: in.DurationInMonths, Code: in.Code,
		StartsAt: in.StartsAt, EndsAt: in.EndsAt, MaxRedemptions: in.MaxRedemptions,
		MaxRedemptionsPerCustomer: in.MaxRedemptionsPerCustomer, Metadata: in.Metadata}.write()
	if err != nil {
		return nil, err
	}
	var out *storage.Discount
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		if out, err = storage.CreateDiscount(ctx, tx, orgID, w); err != nil {
			return discountConflict(err, w.Code)
		}
		if err := setDiscountProducts(ctx, tx, orgID, out.ID, in.Products); err != nil {
			return err
		}
		return r.emit(ctx, tx, orgID, "discount.created", out.ID)
	})
	return out, err
}

// setDiscountProducts replaces the restriction after checking every product is the
// organization's: another tenant's product is reported as not existing.
func setDiscountProducts(ctx context.Context, tx *sqlx.Tx, orgID, discountID uuid.UUID, ids []uuid.UUID) error {
	unique := uniqueIDs(ids)
	if len(unique) > MaxDiscountProducts {
		return tooMany(len(unique), MaxDiscountProducts, "input", "products")
	}
	n, err := storage.SetDiscountProducts(ctx, tx, orgID, discountID, unique)
	if err != nil {
		return err
	}
	if n != len(unique) {
		return Invalid("value_error", "Product does not exist.", nil, "input", "products")
	}
	return nil
}

// updateDiscount lays the given fields over the stored discount and validates the result.
// Once redeemed, a discount's price effect (type, amounts, duration) is frozen: orders and
// subscriptions already priced with it must keep meaning what they meant.
func (r *Resolver) updateDiscount(ctx context.Context, in model.DiscountUpdateInput) (*storage.Discount, error) {
	var out *storage.Discount
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		cur, err := storage.GetDiscount(ctx, tx, organizations(ctx), in.ID)
		if err != nil {
			return notFoundOr(err, "")
		}
		f := discountFields{Name: cur.Name, Type: cur.Type, Duration: cur.Duration, BasisPoints: cur.BasisPoints,
			Currency: cur.Currency, DurationInMonths: cur.DurationInMonths, Code: cur.Code, StartsAt: cur.StartsAt,
			EndsAt: cur.EndsAt, MaxRedemptions: cur.MaxRedemptions,
			MaxRedemptionsPerCustomer: cur.MaxRedemptionsPerCustomer, Metadata: cur.Metadata}
		if cur.Amount != nil {
			a := int(*cur.Amount)
			f.Amount = &a
		}
		if v, ok := in.Name.ValueOK(); ok && v != nil {
			f.Name = *v
		}
		overlay(&f.Code, in.Code.ValueOK)
		overlay(&f.StartsAt, in.StartsAt.ValueOK)
		overlay(&f.EndsAt, in.EndsAt.ValueOK)
		overlay(&f.MaxRedemptions, in.MaxRedemptions.ValueOK)
		overlay(&f.MaxRedemptionsPerCustomer, in.MaxRedemptionsPerCustomer.ValueOK)
		if v, ok := in.Metadata.ValueOK(); ok {
			f.Metadata = v
		}
		priced := false
		if v, ok := in.Type.ValueOK(); ok && v != nil && *v != f.Type {
			f.Type, priced = *v, true
		}
		if v, ok := in.Duration.ValueOK(); ok && v != nil && *v != f.Duration {
			f.Duration, priced = *v, true
		}
		for _, change := range []bool{overlayChanged(&f.BasisPoints, in.BasisPoints.ValueOK),
			overlayChanged(&f.Amount, in.Amount.ValueOK), overlayChanged(&f.Currency, in.Currency.ValueOK),
			overlayChanged(&f.DurationInMonths, in.DurationInMonths.ValueOK)} {
			priced = priced || change
		}
		if priced && cur.RedemptionsCount > 0 {
			return Invalid("value_error", "The type, amount and duration of a redeemed discount cannot change.", nil, "input")
		}
		w, err := f.write()
		if err != nil {
			return err
		}
		if out, err = storage.UpdateDiscount(ctx, tx, organizations(ctx), cur.ID, w); err != nil {
			return discountConflict(err, w.Code)
		}
		if ids, ok := in.Products.ValueOK(); ok {
			if err := setDiscountProducts(ctx, tx, cur.OrganizationID, cur.ID, ids); err != nil {
				return err
			}
		}
		return r.emit(ctx, tx, cur.OrganizationID, "discount.updated", cur.ID)
	})
	return out, err
}

// overlay replaces *dst with an omittable's value when it was given (null included).
func overlay[T any](dst **T, get func() (*T, bool)) {
	if v, ok := get(); ok {
		*dst = v
	}
}

// overlayChanged is overlay that reports whether the value actually changed.
func overlayChanged[T comparable](dst **T, get func() (*T, bool)) bool {
	v, ok := get()
	if !ok || (v == nil) == (*dst == nil) && (v == nil || *v == **dst) {
		return false
	}
	*dst = v
	return true
}

// deleteDiscount soft-deletes a discount.
func (r *Resolver) deleteDiscount(ctx context.Context, id uuid.UUID) (*storage.Discount, error) {
	var out *storage.Discount
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		var err error
		if out, err = storage.DeleteDiscount(ctx, tx, organizations(ctx), id); err != nil {
			return notFoundOr(err, "")
		}
		return r.emit(ctx, tx, out.OrganizationID, "discount.deleted", out.ID)
	})
	return out, err
}

// discount reads one live discount.
func (r *Resolver) discount(ctx context.Context, id uuid.UUID) (*storage.Discount, error) {
	d, err := storage.GetDiscount(ctx, r.db, organizations(ctx), id)
	return d, notFoundOr(err, "")
}

// discountsPage lists live discounts, noting them as read together so Discount.products
// loads in one statement.
func (r *Resolver) discountsPage(ctx context.Context, a listArgs, f *model.DiscountFilter) (*model.DiscountPage, error) {
	w, sorts, err := a.windowAndSorts(discountSorts)
	if err != nil {
		return nil, err
	}
	var lf storage.DiscountListFilter
	if f != nil {
		lf = storage.DiscountListFilter{Query: f.Query, Code: f.Code}
	}
	p, err := storage.ListDiscounts(ctx, r.db, organizations(ctx), lf, sorts, w)
	if err != nil {
		return nil, cursorErr(err, a)
	}
	record(ctx, p.Items)
	return &model.DiscountPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}
