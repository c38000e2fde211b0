package resolvers

import (
	"context"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/storage"
)

// saveMethodFromToken asks the processor to save the instrument behind a client-side token
// to the customer's record there and records it for the customer. The processor call comes
// first and outside the transaction: an unknown token is a 422 that changes nothing.
func (r *Resolver) saveMethodFromToken(ctx context.Context, cust *storage.Customer, token string, setDefault *bool) (*storage.PaymentMethod, error) {
	ref, err := processorCustomer(ctx, r.db, cust)
	if err != nil {
		return nil, err
	}
	m, err := r.saveToken(ctx, token, ref, "token")
	if err != nil {
		return nil, err
	}
	var out *storage.PaymentMethod
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		out, err = r.storeMethod(ctx, tx, cust, m, setDefault != nil && *setDefault)
		return err
	})
	return out, err
}

// savePaymentMethod saves a payment method for a customer of the caller's organizations.
func (r *Resolver) savePaymentMethod(ctx context.Context, in model.PaymentMethodSaveInput) (*storage.PaymentMethod, error) {
	cust, err := storage.GetCustomer(ctx, r.db, organizations(ctx), in.CustomerID)
	if err != nil {
		return nil, notFoundOr(err, "Customer not found")
	}
	return r.saveMethodFromToken(ctx, cust, in.Token, in.SetDefault)
}

// portalSavePaymentMethod saves a payment method for the session's customer; members need
// the owner or billing_manager role, as for every payment-method operation of the portal.
func (r *Resolver) portalSavePaymentMethod(ctx context.Context, in model.PortalPaymentMethodSaveInput) (*storage.PaymentMethod, error) {
	cust, err := r.portalCustomer(ctx)
	if err != nil {
		return nil, err
	}
	return r.saveMethodFromToken(ctx, cust, in.Token, in.SetDefault)
}

// removeMethod deletes a customer's payment method, clearing the default it was.
func (r *Resolver) removeMethod(ctx context.Context, cust *storage.Customer, id uuid.UUID) (*storage.PaymentMethod, error) {
	var out *storage.PaymentMethod
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		pm, cleared, err := storage.DeletePaymentMethod(ctx, tx, cust.ID, id)
		if err != nil {
			return notFoundOr(err, "Payment method not found")
		}
		out = pm
		if cleared {
			return r.emit(ctx, tx, cust.OrganizationID, "customer.updated", cust.ID)
		}
		return nil
	})
	return out, err
}

// deletePaymentMethod removes a payment method of a customer of the caller's organizations.
func (r *Resolver) deletePaymentMethod(ctx context.Context, id uuid.UUID) (*storage.PaymentMethod, error) {
	pm, err := storage.GetPaymentMethod(ctx, r.db, organizations(ctx), id)
	if err != nil {
		return nil, notFoundOr(err, "Payment method not found")
	}
	cust, err := storage.GetCustomer(ctx, r.db, organizations(ctx), pm.CustomerID)
	if err != nil {
		return nil, notFoundOr(err, "Payment method not found")
	}
	return r.removeMethod(ctx, cust, id)
}

// portalDeletePaymentMethod removes one of the session customer's payment methods.
func (r *Resolver) portalDeletePaymentMethod(ctx context.Context, id uuid.UUID) (*storage.PaymentMethod, error) {
	cust, err := r.portalCustomer(ctx)
	if err != nil {
		return nil, err
	}
	return r.removeMethod(ctx, cust, id)
}
