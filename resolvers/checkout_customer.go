package resolvers

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/payment"
	"till/storage"
)

// findCheckoutCustomer finds the customer a checkout is for without creating one: the linked
// customer, else the one with its external id, else the one with its email; nil when none.
func (r *Resolver) findCheckoutCustomer(ctx context.Context, tx *sqlx.Tx, c *storage.Checkout) (*storage.Customer, error) {
	orgs := []uuid.UUID{c.OrganizationID}
	var (
		cust *storage.Customer
		err  = storage.ErrNotFound
	)
	switch {
	case c.CustomerID != nil:
		cust, err = storage.GetCustomer(ctx, tx, orgs, *c.CustomerID)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, Invalid("value_error", "Customer does not exist.", c.CustomerID.String(), "input", "customerId")
		}
		return cust, err
	case c.ExternalCustomerID != nil:
		cust, err = storage.GetCustomerByExternalID(ctx, tx, orgs, *c.ExternalCustomerID)
	}
	if errors.Is(err, storage.ErrNotFound) && c.CustomerEmail != nil {
		cust, err = storage.FindCustomerByEmail(ctx, tx, c.OrganizationID, *c.CustomerEmail)
	}
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	return cust, err
}

// checkoutCustomer resolves or creates the buyer and records the checkout's details on it:
// name, billing name and address, tax id, and customer_metadata merged over its metadata.
func (r *Resolver) checkoutCustomer(ctx context.Context, tx *sqlx.Tx, c *storage.Checkout) (*storage.Customer, error) {
	cust, err := r.findCheckoutCustomer(ctx, tx, c)
	if err != nil {
		return nil, err
	}
	var taxID, taxFormat *string
	if c.CustomerTaxID != nil && c.CustomerBillingAddress != nil {
		v, f, err := taxIDOf(*c.CustomerTaxID, c.CustomerBillingAddress.Country, "input", "customerTaxId")
		if err != nil {
			return nil, err
		}
		taxID, taxFormat = &v, &f
	}
	if cust == nil {
		w := storage.CustomerWrite{Type: "individual", ExternalID: c.ExternalCustomerID, Email: c.CustomerEmail,
			Name: c.CustomerName, BillingName: c.CustomerBillingName, BillingAddress: c.CustomerBillingAddress,
			TaxID: taxID, TaxIDFormat: taxFormat, Locale: c.Locale, Metadata: c.CustomerMetadata}
		if cust, err = storage.CreateCustomer(ctx, tx, c.OrganizationID, w); err != nil {
			if errors.Is(err, storage.ErrConflict) {
				return nil, BadRequest("A customer with this email or external ID was created meanwhile; please retry.")
			}
			return nil, err
		}
		return cust, r.emit(ctx, tx, c.OrganizationID, "customer.created", cust.ID)
	}
	patch := storage.CustomerPatch{}
	setIf := func(col string, v *string, cur *string) {
		if v != nil && (cur == nil || *cur != *v) {
			patch[col] = *v
		}
	}
	setIf("name", c.CustomerName, cust.Name)
	setIf("billing_name", c.CustomerBillingName, cust.BillingName)
	if c.CustomerBillingAddress != nil {
		patch["billing_address"] = c.CustomerBillingAddress
	}
	if taxID != nil {
		patch["tax_id"], patch["tax_id_format"] = *taxID, *taxFormat
	}
	if len(c.CustomerMetadata) > 0 {
		merged := storage.JSONMap{}
		for k, v := range cust.Metadata {
			merged[k] = v
		}
		for k, v := range c.CustomerMetadata {
			merged[k] = v
		}
		patch["metadata"] = merged
	}
	if len(patch) == 0 {
		return cust, nil
	}
	if cust, err = storage.UpdateCustomer(ctx, tx, []uuid.UUID{c.OrganizationID}, cust.ID, patch); err != nil {
		return nil, err
	}
	return cust, r.emitCustomerUpdated(ctx, tx, cust, patch)
}

// checkoutPaymentMethod stores the instrument saved from the payment token (making it the
// default of a customer without one), or loads the already saved method the buyer chose.
func (r *Resolver) checkoutPaymentMethod(ctx context.Context, tx *sqlx.Tx, cust *storage.Customer, conf *confirmation) (*storage.PaymentMethod, error) {
	switch {
	case conf.method != nil:
		return r.storeMethod(ctx, tx, cust, *conf.method, false)
	case conf.methodID != nil:
		pm, err := storage.GetCustomerPaymentMethod(ctx, tx, cust.ID, *conf.methodID)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, Invalid("value_error", "Payment method does not exist.", conf.methodID.String(), "input", "paymentMethodId")
		}
		return pm, err
	}
	return nil, nil
}

// storeMethod records a processor-saved instrument for a customer. A customer's first
// method becomes its default, and so does any method saved with makeDefault; the default
// change is a customer.updated event.
func (r *Resolver) storeMethod(ctx context.Context, tx *sqlx.Tx, cust *storage.Customer, m payment.Method, makeDefault bool) (*storage.PaymentMethod, error) {
	w := storage.PaymentMethodWrite{Processor: r.Payments.Name(), ProcessorID: m.ProcessorID, Type: m.Type, Wallet: m.Wallet}
	if m.Type == "card" {
		w.Brand, w.Last4, w.ExpMonth, w.ExpYear = &m.Brand, &m.Last4, &m.ExpMonth, &m.ExpYear
	}
	pm, err := storage.CreatePaymentMethod(ctx, tx, cust.OrganizationID, cust.ID, w)
	if err != nil {
		return nil, notFoundOr(err, "Customer not found")
	}
	changed, err := storage.SetDefaultPaymentMethod(ctx, tx, cust.ID, pm.ID, !makeDefault)
	if err != nil || !changed {
		return pm, err
	}
	pm.IsDefault = true
	return pm, r.emit(ctx, tx, cust.OrganizationID, "customer.updated", cust.ID)
}
