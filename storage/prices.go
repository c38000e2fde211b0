package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// ProductPrice is one price of a product; the fields used depend on AmountType (fixed, custom,
// free, seat_based, metered_unit).
type ProductPrice struct {
	ID             uuid.UUID  `db:"id"`
	CreatedAt      time.Time  `db:"created_at"`
	ModifiedAt     *time.Time `db:"modified_at"`
	ProductID      uuid.UUID  `db:"product_id"`
	Source         string     `db:"source"`
	AmountType     AmountType `db:"amount_type"`
	PriceCurrency  string     `db:"price_currency"`
	TaxBehavior    *string    `db:"tax_behavior"`
	IsArchived     bool       `db:"is_archived"`
	PriceAmount    *int64     `db:"price_amount"`
	MinimumAmount  *int64     `db:"minimum_amount"`
	MaximumAmount  *int64     `db:"maximum_amount"`
	PresetAmount   *int64     `db:"preset_amount"`
	SeatTiers      RawJSON    `db:"seat_tiers"`
	UnitAmount     *string    `db:"unit_amount"`
	CapAmount      *int64     `db:"cap_amount"`
	MeterID        *uuid.UUID `db:"meter_id"`
	OrganizationID uuid.UUID  `db:"organization_id"`
}

const priceColumns = `id, created_at, modified_at, product_id, source, amount_type, price_currency,
	tax_behavior, is_archived, price_amount, minimum_amount, maximum_amount, preset_amount,
	seat_tiers, unit_amount::text AS unit_amount, cap_amount, meter_id, organization_id`

// ProductPriceWrite describes a price to create.
type ProductPriceWrite struct {
	AmountType    AmountType
	PriceCurrency string
	TaxBehavior   *string
	PriceAmount   *int64
	MinimumAmount *int64
	MaximumAmount *int64
	PresetAmount  *int64
	SeatTiers     RawJSON
	UnitAmount    *string
	CapAmount     *int64
	MeterID       *uuid.UUID
}

// CreatePrice inserts a catalog price for a product.
func CreatePrice(ctx context.Context, q sqlx.ExtContext, orgID, productID uuid.UUID, w ProductPriceWrite) (*ProductPrice, error) {
	var p ProductPrice
	// clock_timestamp, not the column default now(): prices created in one transaction must
	// keep the order they were given in, and prices are listed by created_at.
	err := sqlx.GetContext(ctx, q, &p, `INSERT INTO product_prices (organization_id, product_id,
		amount_type, price_currency, tax_behavior, price_amount, minimum_amount, maximum_amount,
		preset_amount, seat_tiers, unit_amount, cap_amount, meter_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::numeric, $12, $13, clock_timestamp()) RETURNING `+priceColumns,
		orgID, productID, w.AmountType, w.PriceCurrency, w.TaxBehavior, w.PriceAmount, w.MinimumAmount,
		w.MaximumAmount, w.PresetAmount, w.SeatTiers, w.UnitAmount, w.CapAmount, w.MeterID)
	return &p, mapErr(err)
}

// ArchivePricesExcept archives a product's live prices whose ids are not kept.
func ArchivePricesExcept(ctx context.Context, q sqlx.ExtContext, productID uuid.UUID, keep []uuid.UUID) error {
	_, err := q.ExecContext(ctx, `UPDATE product_prices SET is_archived = true, modified_at = now()
		WHERE product_id = $1 AND NOT is_archived AND NOT (id = ANY($2))`, productID, pq.Array(keep))
	return mapErr(err)
}

// PricesByProducts loads each product's live prices for a dataloader, oldest first, one slice
// per key. Archived prices stay in the table for the orders and subscriptions that used them
// but are no longer part of the product, as upstream's Product.prices.
func PricesByProducts(ctx context.Context, q sqlx.ExtContext, productIDs []uuid.UUID) ([][]*ProductPrice, error) {
	var rows []*ProductPrice
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+priceColumns+` FROM product_prices
		WHERE product_id = ANY($1) AND NOT is_archived ORDER BY created_at, id`, pq.Array(productIDs)); err != nil {
		return nil, mapErr(err)
	}
	return groupBy(productIDs, rows, func(p *ProductPrice) uuid.UUID { return p.ProductID }), nil
}

// OrganizationMeterIDs returns which of ids are meters of the organization, so a price cannot
// point at another tenant's meter (the foreign key alone would accept it).
func OrganizationMeterIDs(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, ids []uuid.UUID) ([]uuid.UUID, error) {
	var found []uuid.UUID
	err := sqlx.SelectContext(ctx, q, &found, `SELECT id FROM meters WHERE id = ANY($1) AND organization_id = $2`,
		pq.Array(ids), orgID)
	return found, mapErr(err)
}
