package resolvers

import (
	"context"

	"github.com/google/uuid"

	"till/graph/model"
	"till/storage"
)

// benefitProducts is Benefit.products: a window of each benefit's products of the level, in
// one statement, with the root list's filters and sorting.
func (r *Resolver) benefitProducts(ctx context.Context, b *storage.Benefit, a listArgs, f *model.ProductFilter) (*model.ProductPage, error) {
	p, w, err := relatedWindow(ctx, r.db, "Benefit.products", b, func(b *storage.Benefit) uuid.UUID { return b.ID },
		a, productSorts, productFilterOf(f), storage.ProductWindowsByBenefits)
	if err != nil {
		return nil, err
	}
	return &model.ProductPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}
