package storage

import (
	"context"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// benefitProduct is a product read as one of a benefit's: the benefit it was reached from
// tells the windows apart, since one product may carry several benefits of the level.
type benefitProduct struct {
	BenefitID uuid.UUID `db:"benefit_id"`
	Product
}

// ProductWindowsByBenefits returns one window of each benefit's products, in key order,
// with the same filters and sorting as ListProducts, in one statement.
func ProductWindowsByBenefits(ctx context.Context, q sqlx.ExtContext, orgs, benefits []uuid.UUID, f ProductListFilter, sorts []Sort, w Window) ([]Paged[*Product], error) {
	l := productList(orgs, f, sorts)
	l.Columns += ", pb.benefit_id"
	l.From += " JOIN product_benefits pb ON pb.product_id = p.id"
	windows, err := listWindows(ctx, q, l, "pb.benefit_id", benefits, w,
		func(r *benefitProduct) uuid.UUID { return r.BenefitID })
	if err != nil {
		return nil, err
	}
	out := make([]Paged[*Product], len(windows))
	for i, win := range windows {
		items := make([]*Product, len(win.Items))
		for j, r := range win.Items {
			items[j] = &r.Product
		}
		out[i] = Paged[*Product]{Items: items, Cursors: win.Cursors, Total: win.Total, More: win.More}
	}
	return out, nil
}
