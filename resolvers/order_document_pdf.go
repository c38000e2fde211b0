package resolvers

import (
	"context"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/blob"
	"till/internal/invoice"
	"till/storage"
)

// blobKey joins key segments, refusing any that would change the key's meaning.
func blobKey(segments ...string) (string, error) { return blob.JoinKey(segments...) }

// invoiceOf is the document an order shows: the seller (the organization), the customer's
// billing details as the order holds them, its lines and totals as recorded (never
// recomputed, so the PDF matches the order).
func (r *Resolver) invoiceOf(ctx context.Context, q sqlx.ExtContext, o *storage.Order, c *storage.Customer,
	kind invoice.Kind, number string) (invoice.Invoice, error) {
	org, err := storage.GetOrganization(ctx, q, o.OrganizationID)
	if err != nil {
		return invoice.Invoice{}, err
	}
	items, err := storage.OrderItemsByOrders(ctx, q, []uuid.UUID{o.ID})
	if err != nil {
		return invoice.Invoice{}, err
	}
	doc := invoice.Invoice{
		Kind:           kind,
		Number:         number,
		IssuedAt:       o.CreatedAt,
		Paid:           o.Status == storage.OrderStatusPaid || o.Status == storage.OrderStatusPartiallyRefunded || o.Status == storage.OrderStatusRefunded,
		Seller:         invoice.Seller{Name: org.Name, Email: deref(org.Email)},
		Customer:       invoice.Customer{Name: deref(o.BillingName), Email: deref(c.Email), Address: invoiceAddress(o.BillingAddress)},
		Currency:       o.Currency,
		SubtotalAmount: o.SubtotalAmount,
		DiscountAmount: o.DiscountAmount,
		NetAmount:      o.NetAmount,
		TaxAmount:      o.TaxAmount,
		TotalAmount:    o.TotalAmount,
		Locale:         deref(c.Locale),
	}
	if org.Website != nil {
		doc.Seller.Address = append(doc.Seller.Address, *org.Website)
	}
	if c.TaxIDValue != nil && c.TaxIDFormat != nil {
		doc.Customer.TaxID, doc.Customer.TaxIDType = *c.TaxIDValue, *c.TaxIDFormat
	}
	switch o.Status {
	case storage.OrderStatusRefunded:
		doc.Status = "Refunded"
	case storage.OrderStatusPartiallyRefunded:
		doc.Status = "Partially refunded"
	}
	for _, it := range items[0] {
		doc.Items = append(doc.Items, invoice.Item{Description: it.Label, Amount: it.Amount})
	}
	return doc, nil
}

func invoiceAddress(a *storage.Address) invoice.Address {
	if a == nil {
		return invoice.Address{}
	}
	return invoice.Address{Line1: deref(a.Line1), Line2: deref(a.Line2), PostalCode: deref(a.PostalCode),
		City: deref(a.City), State: deref(a.State), Country: a.Country}
}
