package resolvers

import (
	"context"

	"github.com/google/uuid"

	"till/graph/model"
	"till/storage"
)

// paymentMethods lists a customer's payment methods by id or external id; an unknown or
// deleted customer is ResourceNotFound, after the page's own errors.
func (r *Resolver) paymentMethods(ctx context.Context, customerID *uuid.UUID, externalID *string, a listArgs) (*model.PaymentMethodPage, error) {
	if _, err := a.window(); err != nil {
		return nil, err
	}
	c, err := r.customerByRef(ctx, customerID, externalID)
	if err != nil {
		return nil, err
	}
	return r.paymentMethodPage(ctx, c, a)
}

// paymentMethodPage lists one customer's payment methods, newest first.
func (r *Resolver) paymentMethodPage(ctx context.Context, c *storage.Customer, a listArgs) (*model.PaymentMethodPage, error) {
	p, w, err := rootWindow(ctx, a, nil, func(_ []storage.Sort, w storage.Window) (storage.Paged[*storage.PaymentMethod], error) {
		return storage.ListPaymentMethods(ctx, r.db, organizations(ctx), c.ID, w)
	})
	if err != nil {
		return nil, err
	}
	return &model.PaymentMethodPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}
