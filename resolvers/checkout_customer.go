package resolvers

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/auth"
	"till/internal/payment"
	"till/storage"
)

// checkoutBuyer is the customer a checkout is for, and whether the checkout may act for it.
//
// A checkout is bound to its customer when the seller named it (customerId, or an
// externalCustomerId the customer carries, both set with an organization token) or when a
// portal session of that very customer confirms it. A customer found only because the buyer
// typed its email is not bound: the purchase is recorded for it, as upstream links such
// checkouts, but whoever holds a client secret and knows an email is not that customer. So
// an unbound checkout may not use the customer's saved payment methods, does not add the
// card it brings to them (it is held for the checkout: see checkoutPaymentMethod), and
// writes nothing the buyer typed onto the customer: billing name, address and tax id stay
// on the checkout and its order.
type checkoutBuyer struct {
	customer *storage.Customer // nil when none exists yet: confirming creates it
	bound    bool
}

// findCheckoutCustomer finds the customer a checkout is for without creating one: the linked
// customer, else the one with its external id, else the one with its email.
func (r *Resolver) findCheckoutCustomer(ctx context.Context, q sqlx.ExtContext, c *storage.Checkout) (checkoutBuyer, error) {
	orgs := []uuid.UUID{c.OrganizationID}
	var (
		cust *storage.Customer
		err  = storage.ErrNotFound
	)
	switch {
	case c.CustomerID != nil:
		cust, err = storage.GetCustomer(ctx, q, orgs, *c.CustomerID)
		if errors.Is(err, storage.ErrNotFound) {
			return checkoutBuyer{}, Invalid("value_error", "Customer does not exist.", c.CustomerID.String(), "input", "customerId")
		}
		return checkoutBuyer{customer: cust, bound: true}, err
	case c.ExternalCustomerID != nil:
		cust, err = storage.GetCustomerByExternalID(ctx, q, orgs, *c.ExternalCustomerID)
		if err == nil {
			return checkoutBuyer{customer: cust, bound: true}, nil
		}
	}
	if errors.Is(err, storage.ErrNotFound) && c.CustomerEmail != nil {
		cust, err = storage.FindCustomerByEmail(ctx, q, c.OrganizationID, *c.CustomerEmail)
	}
	if errors.Is(err, storage.ErrNotFound) {
		return checkoutBuyer{}, nil
	}
	if err != nil {
		return checkoutBuyer{}, err
	}
	return checkoutBuyer{customer: cust, bound: r.sessionOf(ctx, cust)}, nil
}

// sessionOf reports whether the request comes from a portal session of the customer allowed
// to use its billing features (a customer session, or a member session of an owner or
// billing manager).
func (r *Resolver) sessionOf(ctx context.Context, cust *storage.Customer) bool {
	p := auth.FromContext(ctx)
	return (p.Kind == auth.KindCustomerSession || p.Kind == auth.KindMemberSession) &&
		p.OrganizationID == cust.OrganizationID && p.CustomerID == cust.ID && r.requireBillingRole(ctx) == nil
}

// checkoutCustomer resolves or creates the buyer and records the checkout's details on it,
// as upstream does: a new customer gets them all; a bound one gets the billing name, address
// and tax id, and a name only when it has none (the name typed at checkout may be a
// cardholder paying for someone else). A customer matched by email alone gets none of them
// (see checkoutBuyer). The seller's customer_metadata is merged over the metadata in every case.
func (r *Resolver) checkoutCustomer(ctx context.Context, tx *sqlx.Tx, c *storage.Checkout) (checkoutBuyer, error) {
	b, err := r.findCheckoutCustomer(ctx, tx, c)
	if err != nil {
		return b, err
	}
	var taxID, taxFormat *string
	if c.CustomerTaxID != nil && c.CustomerBillingAddress != nil {
		v, f, err := taxIDOf(*c.CustomerTaxID, c.CustomerBillingAddress.Country, "input", "customerTaxId")
		if err != nil {
			return b, err
		}
		taxID, taxFormat = &v, &f
	}
	if b.customer == nil {
		w := storage.CustomerWrite{Type: storage.CustomerTypeIndividual, ExternalID: c.ExternalCustomerID, Email: c.CustomerEmail,
			Name: c.CustomerName, BillingName: c.CustomerBillingName, BillingAddress: c.CustomerBillingAddress,
			TaxID: taxID, TaxIDFormat: taxFormat, Locale: c.Locale, Metadata: c.CustomerMetadata}
		cust, err := storage.CreateCustomer(ctx, tx, c.OrganizationID, w)
		if err != nil {
			if errors.Is(err, storage.ErrConflict) {
				return b, BadRequest("A customer with this email or external ID was created meanwhile; please retry.")
			}
			return b, err
		}
		if err := r.createOwnerMember(ctx, tx, cust, nil); err != nil {
			return b, err
		}
		// The buyer gave these details for a customer that did not exist: it is theirs.
		return checkoutBuyer{customer: cust, bound: true}, r.emit(ctx, tx, c.OrganizationID, "customer.created", cust.ID)
	}
	cust := b.customer
	var u storage.CustomerUpdate
	if b.bound {
		if cust.Name == nil && c.CustomerName != nil {
			u.Name = storage.Set(c.CustomerName)
		}
		if c.CustomerBillingName != nil && (cust.BillingName == nil || *cust.BillingName != *c.CustomerBillingName) {
			u.BillingName = storage.Set(c.CustomerBillingName)
		}
		if c.CustomerBillingAddress != nil {
			u.BillingAddress = storage.Set(c.CustomerBillingAddress)
		}
		if taxID != nil {
			u.TaxIDValue, u.TaxIDFormat = storage.Set(taxID), storage.Set(taxFormat)
		}
	}
	if len(c.CustomerMetadata) > 0 {
		merged := storage.JSONMap{}
		for k, v := range cust.Metadata {
			merged[k] = v
		}
		for k, v := range c.CustomerMetadata {
			merged[k] = v
		}
		u.Metadata = storage.Set(merged)
	}
	if u.IsZero() {
		return b, nil
	}
	if b.customer, err = storage.UpdateCustomer(ctx, tx, []uuid.UUID{c.OrganizationID}, cust.ID, u); err != nil {
		return b, err
	}
	return b, r.emitCustomerUpdated(ctx, tx, b.customer, u)
}

// errNoSuchMethod refuses a saved payment method the checkout may not use. It reads the same
// whether the id is unknown, another customer's, or the email-matched customer's, so the
// answer tells a stranger nothing about whose methods exist.
func errNoSuchMethod(id uuid.UUID) error {
	return Invalid("value_error", "Payment method does not exist.", id.String(), "input", "paymentMethodId")
}

// boundMethod loads the saved payment method a checkout chose, which must belong to its
// bound customer (and so to the checkout's organization).
func boundMethod(ctx context.Context, tx *sqlx.Tx, b checkoutBuyer, id uuid.UUID) (*storage.PaymentMethod, error) {
	if b.customer == nil || !b.bound {
		return nil, errNoSuchMethod(id)
	}
	pm, err := storage.GetCustomerPaymentMethod(ctx, tx, b.customer.ID, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNoSuchMethod(id)
	}
	return pm, err
}

// checkoutPaymentMethod stores the instrument saved from the payment token, or loads the
// already saved method the buyer chose. A bound customer's new instrument is saved as its
// own and becomes its default when it has none. A buyer matched by email alone brings a card
// that is not the customer's: it is held for this checkout, pays it and the subscription it
// creates, and is none of the customer's saved methods, so it is never listed to the
// customer or the seller, never a default, and no other checkout, subscription or portal
// session can use it.
func (r *Resolver) checkoutPaymentMethod(ctx context.Context, tx *sqlx.Tx, b checkoutBuyer, conf *confirmation) (*storage.PaymentMethod, error) {
	switch {
	case conf.method != nil && b.bound:
		return r.storeMethod(ctx, tx, b.customer, *conf.method, false)
	case conf.method != nil:
		return r.recordMethod(ctx, tx, b.customer, *conf.method, &conf.checkout.ID)
	case conf.methodID != nil:
		return boundMethod(ctx, tx, b, *conf.methodID)
	}
	return nil, nil
}

// recordMethod stores a processor-saved instrument for a customer without touching its
// default; heldFor, when set, holds it for that checkout only. A saved method counts against
// the customer's cap; a held one is none of the customer's methods and does not. The
// processor's record the method was saved to becomes the customer's when it has none yet.
func (r *Resolver) recordMethod(ctx context.Context, tx *sqlx.Tx, cust *storage.Customer, m payment.Method, heldFor *uuid.UUID) (*storage.PaymentMethod, error) {
	w := storage.PaymentMethodWrite{Processor: r.payments.Name(), ProcessorID: m.ProcessorID, Type: m.Type, Wallet: m.Wallet,
		ProcessorCustomerID: m.ProcessorCustomerID, HeldForCheckoutID: heldFor}
	if heldFor == nil {
		w.Limit = MaxCustomerPaymentMethods
	}
	if m.Type == "card" {
		w.Brand, w.Last4, w.ExpMonth, w.ExpYear = &m.Brand, &m.Last4, &m.ExpMonth, &m.ExpYear
	}
	pm, err := storage.CreatePaymentMethod(ctx, tx, cust.OrganizationID, cust.ID, w)
	if errors.Is(err, storage.ErrConflict) {
		return nil, Invalid("too_long", fmt.Sprintf("A customer can have at most %d saved payment methods; remove one first.",
			MaxCustomerPaymentMethods), nil, "input")
	}
	if err != nil {
		return nil, notFoundOr(err, "Customer not found")
	}
	if m.ProcessorCustomerID != "" {
		if _, err := storage.RecordProcessorCustomerID(ctx, tx, cust.ID, m.ProcessorCustomerID); err != nil {
			return nil, err
		}
	}
	return pm, nil
}

// storeMethod records a processor-saved instrument for a customer. A customer's first
// method becomes its default, and so does any method saved with makeDefault; the default
// change is a customer.updated event.
func (r *Resolver) storeMethod(ctx context.Context, tx *sqlx.Tx, cust *storage.Customer, m payment.Method, makeDefault bool) (*storage.PaymentMethod, error) {
	pm, err := r.recordMethod(ctx, tx, cust, m, nil)
	if err != nil {
		return nil, err
	}
	changed, err := storage.SetDefaultPaymentMethod(ctx, tx, cust.ID, pm.ID, !makeDefault)
	if err != nil || !changed {
		return pm, err
	}
	pm.IsDefault = true
	return pm, r.emit(ctx, tx, cust.OrganizationID, "customer.updated", cust.ID)
}
