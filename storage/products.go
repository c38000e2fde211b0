package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Product is something an organization sells, one-time or recurring.
type Product struct {
	ID                     uuid.UUID         `db:"id"`
	CreatedAt              time.Time         `db:"created_at"`
	ModifiedAt             *time.Time        `db:"modified_at"`
	OrganizationID         uuid.UUID         `db:"organization_id"`
	Name                   string            `db:"name"`
	Description            *string           `db:"description"`
	Visibility             ProductVisibility `db:"visibility"`
	RecurringInterval      *Interval         `db:"recurring_interval"`
	RecurringIntervalCount *int              `db:"recurring_interval_count"`
	MeterInterval          *Interval         `db:"meter_interval"`
	MeterIntervalCount     *int              `db:"meter_interval_count"`
	TrialInterval          *Interval         `db:"trial_interval"`
	TrialIntervalCount     *int              `db:"trial_interval_count"`
	IsArchived             bool              `db:"is_archived"`
	Metadata               JSONMap           `db:"metadata"`
}

// IsRecurring tells a subscription product from a one-time one.
func (p *Product) IsRecurring() bool { return p.RecurringInterval != nil }

const productColumns = `id, created_at, modified_at, organization_id, name, description, visibility,
	recurring_interval, recurring_interval_count, meter_interval, meter_interval_count,
	trial_interval, trial_interval_count, is_archived, metadata`

// productColumnsP is productColumns for queries that join other tables as p.
var productColumnsP = qualify("p", productColumns)

// ProductWrite holds a product's writable fields.
type ProductWrite struct {
	Name                   string
	Description            *string
	Visibility             ProductVisibility
	RecurringInterval      *Interval
	RecurringIntervalCount *int
	MeterInterval          *Interval
	MeterIntervalCount     *int
	TrialInterval          *Interval
	TrialIntervalCount     *int
	Metadata               JSONMap
}

// CreateProduct inserts a product.
func CreateProduct(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, w ProductWrite) (*Product, error) {
	var p Product
	err := sqlx.GetContext(ctx, q, &p, `INSERT INTO products (organization_id, name, description,
		visibility, recurring_interval, recurring_interval_count, meter_interval, meter_interval_count,
		trial_interval, trial_interval_count, metadata)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING `+productColumns,
		orgID, w.Name, w.Description, w.Visibility, w.RecurringInterval, w.RecurringIntervalCount,
		w.MeterInterval, w.MeterIntervalCount, w.TrialInterval, w.TrialIntervalCount, w.Metadata)
	return &p, mapErr(err)
}

// ProductUpdate is a change to a product: each set field writes its column, the others keep
// what they hold. The zero value only stamps modified_at.
type ProductUpdate struct {
	Name               Omittable[string]
	Description        Omittable[*string]
	Visibility         Omittable[ProductVisibility]
	IsArchived         Omittable[bool]
	TrialInterval      Omittable[*Interval]
	TrialIntervalCount Omittable[*int]
	Metadata           Omittable[JSONMap]
}

func (u ProductUpdate) assignments() []assignment {
	return []assignment{u.Name.to("name"), u.Description.to("description"), u.Visibility.to("visibility"),
		u.IsArchived.to("is_archived"), u.TrialInterval.to("trial_interval"),
		u.TrialIntervalCount.to("trial_interval_count"), u.Metadata.to("metadata")}
}

// UpdateProduct writes the set fields of u to a product of the given organizations.
func UpdateProduct(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, u ProductUpdate) (*Product, error) {
	sets, args := setClause("modified_at = now()", u, []any{id, pq.Array(orgs)})
	var p Product
	err := sqlx.GetContext(ctx, q, &p, `UPDATE products SET `+sets+`
		WHERE id = $1 AND organization_id = ANY($2) RETURNING `+productColumns, args...)
	return &p, mapErr(err)
}

// GetProduct reads a product of the given organizations.
func GetProduct(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*Product, error) {
	var p Product
	err := sqlx.GetContext(ctx, q, &p, `SELECT `+productColumns+` FROM products
		WHERE id = $1 AND organization_id = ANY($2)`, id, pq.Array(orgs))
	return &p, mapErr(err)
}

// ProductsByIDs loads products for a dataloader, one per key in key order, nil where missing.
func ProductsByIDs(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([]*Product, error) {
	var rows []*Product
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+productColumns+` FROM products
		WHERE id = ANY($1)`, pq.Array(ids)); err != nil {
		return nil, mapErr(err)
	}
	return inKeyOrder(ids, rows, func(r *Product) uuid.UUID { return r.ID }), nil
}

// ProductListFilter narrows a product list.
type ProductListFilter struct {
	IsArchived  *bool
	IsRecurring *bool
	Query       *string
	BenefitIDs  []uuid.UUID
	Visibility  []ProductVisibility
	Metadata    map[string][]string
}

// ListProducts returns one window of products, with the total count.
func ListProducts(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f ProductListFilter, sorts []Sort, w Window) (Paged[*Product], error) {
	return listWindow[*Product](ctx, q, productList(orgs, f, sorts), w)
}

// productList is the product list query, over products as p.
func productList(orgs []uuid.UUID, f ProductListFilter, sorts []Sort) listSQL {
	w := orgFilters("p.organization_id", orgs)
	ifSet(w, "p.is_archived = $%d", f.IsArchived)
	ifSet(w, "(p.recurring_interval IS NOT NULL) = $%d", f.IsRecurring)
	w.contains("p.name ILIKE $%d", f.Query)
	if len(f.BenefitIDs) > 0 {
		w.add("EXISTS (SELECT 1 FROM product_benefits pb WHERE pb.product_id = p.id AND pb.benefit_id = ANY($%d))",
			pq.Array(f.BenefitIDs))
	}
	anyOf(w, "p.visibility", f.Visibility)
	w.metadata("p.metadata", f.Metadata)
	return listSQL{Columns: productColumnsP, From: "products p", ID: "p.id", Where: w.where, Args: w.args,
		Sorts: sorts, Default: []Sort{{Column: "p.created_at", Desc: true}}}
}

// ProductBenefitsByProducts loads the benefits of each product for a dataloader, in the
// product's benefit order, one slice per key.
func ProductBenefitsByProducts(ctx context.Context, q sqlx.ExtContext, productIDs []uuid.UUID) ([][]*Benefit, error) {
	type row struct {
		ProductID uuid.UUID `db:"product_id"`
		Benefit
	}
	var rows []*row
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT pb.product_id, `+benefitColumnsB+`
		FROM product_benefits pb JOIN benefits b ON b.id = pb.benefit_id
		WHERE pb.product_id = ANY($1) AND b.deleted_at IS NULL
		ORDER BY pb."order", pb.created_at`, pq.Array(productIDs)); err != nil {
		return nil, mapErr(err)
	}
	return groupJoined(productIDs, rows, func(r *row) uuid.UUID { return r.ProductID },
		func(r *row) Benefit { return r.Benefit }), nil
}

// SetProductBenefits replaces a product's benefits with the given ordered list. The caller
// has checked that every benefit belongs to the product's organization.
func SetProductBenefits(ctx context.Context, q sqlx.ExtContext, orgID, productID uuid.UUID, benefitIDs []uuid.UUID) error {
	if _, err := q.ExecContext(ctx, `DELETE FROM product_benefits WHERE product_id = $1 AND organization_id = $2`,
		productID, orgID); err != nil {
		return mapErr(err)
	}
	if len(benefitIDs) == 0 {
		return nil
	}
	_, err := q.ExecContext(ctx, `INSERT INTO product_benefits (product_id, benefit_id, organization_id, "order")
		SELECT $1, b.id, $2, ord FROM unnest($3::uuid[]) WITH ORDINALITY AS u(bid, ord)
		JOIN benefits b ON b.id = u.bid AND b.organization_id = $2 AND b.deleted_at IS NULL`,
		productID, orgID, pq.Array(benefitIDs))
	return mapErr(err)
}
