package resolvers

import (
	"context"

	"github.com/google/uuid"

	"till/graph/model"
	"till/storage"
)

// paymentMethods lists a customer's payment methods by id or external id; an unknown or
// deleted customer is ResourceNotFound.
func (r *Resolver) paymentMethods(ctx context.Context, customerID *uuid.UUID, externalID *string, page, limit *int) (*model.PaymentMethodPage, error) {
	if _, err := pageOf(page, limit); err != nil {
		return nil, err
	}
	c, err := r.customerByRef(ctx, customerID, externalID)
	if err != nil {
		return nil, err
	}
	return r.paymentMethodPage(ctx, c, page, limit)
}

// paymentMethodPage lists one customer's payment methods.
func (r *Resolver) paymentMethodPage(ctx context.Context, c *storage.Customer, page, limit *int) (*model.PaymentMethodPage, error) {
	p, err := pageOf(page, limit)
	if err != nil {
		return nil, err
	}
	items, total, err := storage.ListPaymentMethods(ctx, r.DB, c.ID, p)
	if err != nil {
		return nil, err
	}
	return &model.PaymentMethodPage{Items: items, Pagination: pagination(total, p)}, nil
}
