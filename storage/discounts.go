package storage

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// ErrNotRedeemable means a discount cannot be redeemed now: outside its window, deleted, or
// at its total or per-customer redemption limit.
var ErrNotRedeemable = errors.New("storage: discount not redeemable")

const discountColumns = `id, created_at, modified_at, organization_id, name, type, basis_points, amount,
	currency, duration, duration_in_months, code, starts_at, ends_at, max_redemptions,
	max_redemptions_per_customer, redemptions_count, metadata`

// DiscountWrite holds a discount's writable fields.
type DiscountWrite struct {
	Name                      string
	Type                      DiscountType
	BasisPoints               *int
	Amount                    *int64
	Currency                  *string
	Duration                  DiscountDuration
	DurationInMonths          *int
	Code                      *string
	StartsAt                  *time.Time
	EndsAt                    *time.Time
	MaxRedemptions            *int
	MaxRedemptionsPerCustomer *int
	Metadata                  JSONMap
}

// CreateDiscount inserts a discount; a code already used by a live discount of the
// organization (ignoring case) is a *ConflictError.
func CreateDiscount(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, w DiscountWrite) (*Discount, error) {
	var d Discount
	err := sqlx.GetContext(ctx, q, &d, `INSERT INTO discounts (organization_id, name, type, basis_points,
		amount, currency, duration, duration_in_months, code, starts_at, ends_at, max_redemptions,
		max_redemptions_per_customer, metadata)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING `+discountColumns,
		orgID, w.Name, w.Type, w.BasisPoints, w.Amount, w.Currency, w.Duration, w.DurationInMonths, w.Code,
		w.StartsAt, w.EndsAt, w.MaxRedemptions, w.MaxRedemptionsPerCustomer, w.Metadata)
	return &d, mapErr(err)
}

// UpdateDiscount replaces the writable fields of a live discount of the given organizations
// with w: a discount's fields are checked together (see the use case), so an update writes
// them all. A code already used by another live discount is a *ConflictError.
func UpdateDiscount(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, w DiscountWrite) (*Discount, error) {
	var d Discount
	err := sqlx.GetContext(ctx, q, &d, `UPDATE discounts SET modified_at = now(), name = $3, type = $4,
		basis_points = $5, amount = $6, currency = $7, duration = $8, duration_in_months = $9, code = $10,
		starts_at = $11, ends_at = $12, max_redemptions = $13, max_redemptions_per_customer = $14, metadata = $15
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL RETURNING `+discountColumns,
		id, pq.Array(orgs), w.Name, w.Type, w.BasisPoints, w.Amount, w.Currency, w.Duration, w.DurationInMonths,
		w.Code, w.StartsAt, w.EndsAt, w.MaxRedemptions, w.MaxRedemptionsPerCustomer, w.Metadata)
	return &d, mapErr(err)
}

// DeleteDiscount soft-deletes a live discount: it frees its code and can no longer be
// applied, while checkouts, orders and subscriptions keep pointing at it.
func DeleteDiscount(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*Discount, error) {
	var d Discount
	err := sqlx.GetContext(ctx, q, &d, `UPDATE discounts SET deleted_at = now(), modified_at = now()
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL RETURNING `+discountColumns,
		id, pq.Array(orgs))
	return &d, mapErr(err)
}

// GetDiscount reads a live discount of the given organizations.
func GetDiscount(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*Discount, error) {
	var d Discount
	err := sqlx.GetContext(ctx, q, &d, `SELECT `+discountColumns+` FROM discounts
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL`, id, pq.Array(orgs))
	return &d, mapErr(err)
}

// GetDiscountByCode reads the live discount of an organization with a code, ignoring case
// as customers type codes however they like.
func GetDiscountByCode(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, code string) (*Discount, error) {
	var d Discount
	err := sqlx.GetContext(ctx, q, &d, `SELECT `+discountColumns+` FROM discounts
		WHERE organization_id = $1 AND lower(code) = lower($2) AND deleted_at IS NULL`, orgID, code)
	return &d, mapErr(err)
}

// DiscountsByIDs loads discounts for a dataloader, one per key in key order, nil where
// missing. Deleted discounts are included because checkouts and orders still show them.
func DiscountsByIDs(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([]*Discount, error) {
	var rows []*Discount
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+discountColumns+` FROM discounts
		WHERE id = ANY($1)`, pq.Array(ids)); err != nil {
		return nil, mapErr(err)
	}
	return inKeyOrder(ids, rows, func(d *Discount) uuid.UUID { return d.ID }), nil
}

// DiscountListFilter narrows a discount list.
type DiscountListFilter struct {
	Query *string
	Code  *string
}

// ListDiscounts returns one window of live discounts, with the total count.
func ListDiscounts(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f DiscountListFilter, sorts []Sort, w Window) (Paged[*Discount], error) {
	conds := orgFilters("organization_id", orgs, "deleted_at IS NULL")
	conds.contains("(name ILIKE $%[1]d OR code ILIKE $%[1]d)", f.Query)
	ifSet(conds, "lower(code) = lower($%d)", f.Code)
	return listWindow[*Discount](ctx, q, listSQL{Columns: discountColumns, From: "discounts", ID: "id",
		Where: conds.where, Args: conds.args, Sorts: sorts, Default: []Sort{{Column: "created_at", Desc: true}}}, w)
}

// SetDiscountProducts replaces the products a discount is limited to. Products of other
// organizations are skipped by the join, so the caller compares the count it asked for.
func SetDiscountProducts(ctx context.Context, q sqlx.ExtContext, orgID, discountID uuid.UUID, productIDs []uuid.UUID) (int, error) {
	if _, err := q.ExecContext(ctx, `DELETE FROM discount_products WHERE discount_id = $1 AND organization_id = $2`,
		discountID, orgID); err != nil {
		return 0, mapErr(err)
	}
	if len(productIDs) == 0 {
		return 0, nil
	}
	res, err := q.ExecContext(ctx, `INSERT INTO discount_products (discount_id, product_id, organization_id)
		SELECT $1, p.id, $2 FROM products p WHERE p.id = ANY($3) AND p.organization_id = $2`,
		discountID, orgID, pq.Array(productIDs))
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// DiscountProductsByDiscounts loads the products each discount is limited to for a
// dataloader, one slice per key, oldest restriction first.
func DiscountProductsByDiscounts(ctx context.Context, q sqlx.ExtContext, discountIDs []uuid.UUID) ([][]*Product, error) {
	type row struct {
		DiscountID uuid.UUID `db:"discount_id"`
		Product
	}
	var rows []*row
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT dp.discount_id, `+productColumnsP+`
		FROM discount_products dp JOIN products p ON p.id = dp.product_id
		WHERE dp.discount_id = ANY($1) ORDER BY dp.created_at, p.created_at`, pq.Array(discountIDs)); err != nil {
		return nil, mapErr(err)
	}
	return groupJoined(discountIDs, rows, func(r *row) uuid.UUID { return r.DiscountID },
		func(r *row) Product { return r.Product }), nil
}

// DiscountAppliesToProduct reports whether a discount covers a product: it has no product
// restriction, or the product is one of its products.
func DiscountAppliesToProduct(ctx context.Context, q sqlx.ExtContext, discountID, productID uuid.UUID) (bool, error) {
	var ok bool
	err := sqlx.GetContext(ctx, q, &ok, `SELECT NOT EXISTS (SELECT 1 FROM discount_products WHERE discount_id = $1)
		OR EXISTS (SELECT 1 FROM discount_products WHERE discount_id = $1 AND product_id = $2)`, discountID, productID)
	return ok, mapErr(err)
}

// CountCustomerRedemptions counts a customer's redemptions of a discount.
func CountCustomerRedemptions(ctx context.Context, q sqlx.ExtContext, discountID, customerID uuid.UUID) (int, error) {
	var n int
	err := sqlx.GetContext(ctx, q, &n, `SELECT count(*) FROM discount_redemptions
		WHERE discount_id = $1 AND customer_id = $2`, discountID, customerID)
	return n, mapErr(err)
}

// Redemption identifies what a discount was redeemed for.
type Redemption struct {
	DiscountID     uuid.UUID
	CustomerID     *uuid.UUID
	CheckoutID     *uuid.UUID
	OrderID        *uuid.UUID
	SubscriptionID *uuid.UUID
}

// redeemSQL checks the window and both limits and counts the redemption in one statement.
// The UPDATE locks the discount row, so concurrent redemptions queue on it and each
// re-checks redemptions_count < max_redemptions against the row the previous one committed:
// the total cap cannot be exceeded. The per-customer subquery, though, reads the snapshot
// the statement started with, which may predate a redemption committed while it waited; it
// is re-counted by RedeemDiscount once the lock is held.
const redeemSQL = `WITH d AS (
	UPDATE discounts SET redemptions_count = redemptions_count + 1, modified_at = now()
	WHERE id = $1 AND deleted_at IS NULL
		AND (starts_at IS NULL OR starts_at <= $6) AND (ends_at IS NULL OR ends_at > $6)
		AND (max_redemptions IS NULL OR redemptions_count < max_redemptions)
		AND (max_redemptions_per_customer IS NULL OR $2::uuid IS NULL OR max_redemptions_per_customer >
			(SELECT count(*) FROM discount_redemptions r WHERE r.discount_id = $1 AND r.customer_id = $2))
	RETURNING id, organization_id, max_redemptions_per_customer)
INSERT INTO discount_redemptions (organization_id, discount_id, customer_id, checkout_id, order_id, subscription_id)
SELECT organization_id, id, $2, $3, $4, $5 FROM d
RETURNING id, (SELECT max_redemptions_per_customer FROM d) AS per_customer`

// RedeemDiscount counts one redemption at now, or returns ErrNotRedeemable and changes
// nothing. Run it inside the purchase's transaction: the discount row stays locked until
// that transaction ends, which is what makes the per-customer re-count exact.
func RedeemDiscount(ctx context.Context, q sqlx.ExtContext, r Redemption, now time.Time) error {
	var row struct {
		ID          uuid.UUID `db:"id"`
		PerCustomer *int      `db:"per_customer"`
	}
	err := sqlx.GetContext(ctx, q, &row, redeemSQL,
		r.DiscountID, r.CustomerID, r.CheckoutID, r.OrderID, r.SubscriptionID, now)
	if errors.Is(mapErr(err), ErrNotFound) {
		return ErrNotRedeemable
	}
	if err != nil || row.PerCustomer == nil || r.CustomerID == nil {
		return mapErr(err)
	}
	// Now that this transaction holds the row lock, a fresh statement sees every committed
	// redemption of the customer plus our own.
	n, err := CountCustomerRedemptions(ctx, q, r.DiscountID, *r.CustomerID)
	if err != nil || n <= *row.PerCustomer {
		return err
	}
	if _, err := q.ExecContext(ctx, `WITH gone AS (DELETE FROM discount_redemptions WHERE id = $1 RETURNING discount_id)
		UPDATE discounts SET redemptions_count = redemptions_count - 1 WHERE id IN (SELECT discount_id FROM gone)`,
		row.ID); err != nil {
		return mapErr(err)
	}
	return ErrNotRedeemable
}
