package resolvers

import (
	"context"
	"errors"

	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/payment"
	"till/storage"
)

// A Till customer has one record at the payment processor, which holds all of its saved
// methods: the first record a save brings back is kept on the customer
// (storage.RecordProcessorCustomerID), and every later save names it. Each saved method also
// keeps the record it was saved to, and its charges name that one, so a method saved to
// another record (before Till kept them, or by a buyer who became the customer meanwhile)
// still charges.

// processorCustomer is how the processor knows cust: its record there when Till has one,
// else what the processor needs to create it. The record is read from the row, not from
// cust, which may have been loaded (or cached) before a concurrent save recorded one.
func processorCustomer(ctx context.Context, q sqlx.ExtContext, cust *storage.Customer) (payment.CustomerRef, error) {
	id, err := storage.ProcessorCustomerID(ctx, q, cust.ID)
	if err != nil {
		return payment.CustomerRef{}, err
	}
	return payment.CustomerRef{ProcessorID: id, TillID: cust.ID.String(), Email: deref(cust.Email), Name: deref(cust.Name)}, nil
}

// saveToken saves the instrument behind a client-side payment token at the processor for
// the customer ref names; an unknown token is a validation error at field.
func (r *Resolver) saveToken(ctx context.Context, token string, ref payment.CustomerRef, field string) (payment.Method, error) {
	m, err := r.payments.SavePaymentMethod(ctx, payment.SaveRequest{Token: token, Customer: ref})
	if errors.Is(err, payment.ErrInvalidToken) {
		return m, Invalid("value_error", "Payment token is invalid.", token, "input", field)
	}
	if err != nil {
		return m, saveRefusal(err)
	}
	return m, nil
}

// saveCheckoutToken saves a checkout's payment token before the purchase, which may create
// the customer: a checkout for a customer that exists (named by the checkout, or found by the
// buyer's email) saves it to that customer's record at the processor; a buyer who is no
// customer yet gets a new record, which the purchase keeps on the customer it creates.
func (r *Resolver) saveCheckoutToken(ctx context.Context, c *storage.Checkout, in model.CheckoutConfirmInput) (*payment.Method, error) {
	buyer := *c
	if in.CustomerEmail != nil && checkEmail(*in.CustomerEmail) == nil {
		buyer.CustomerEmail = in.CustomerEmail
	}
	if in.CustomerName != nil {
		buyer.CustomerName = in.CustomerName
	}
	b, err := r.findCheckoutCustomer(ctx, r.db, &buyer)
	if err != nil {
		return nil, err
	}
	ref := payment.CustomerRef{Email: deref(buyer.CustomerEmail), Name: deref(buyer.CustomerName)}
	if b.customer != nil {
		if ref, err = processorCustomer(ctx, r.db, b.customer); err != nil {
			return nil, err
		}
	}
	m, err := r.saveToken(ctx, *in.PaymentToken, ref, "paymentToken")
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// chargeRequest asks to charge amount to a saved method, naming the processor's customer the
// method was saved to so the processor need not look it up.
func chargeRequest(pm *storage.PaymentMethod, amount int64, currency, key, description string) payment.ChargeRequest {
	return payment.ChargeRequest{Amount: amount, Currency: currency, PaymentMethodID: pm.ProcessorID,
		ProcessorCustomerID: deref(pm.ProcessorCustomerID), MethodType: pm.Type, IdempotencyKey: key,
		Description: description}
}
