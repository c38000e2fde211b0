package resolvers

import (
	"errors"
	"time"

	"github.com/google/uuid"

	"till/storage"
)

// The purchase flow crosses several use cases: a confirmed checkout creates an order, a
// recurring product a subscription, a paid order or active subscription grants benefits.
// These are the contracts between them; each is implemented next to the rest of its rules
// (order.go, subscription.go, grant.go, discount.go) and always runs inside the caller's
// transaction so a purchase commits whole or not at all.

// orderItemSpec is one line of an order to create.
type orderItemSpec struct {
	Label          string
	Amount         int64
	TaxAmount      int64
	Proration      bool
	ProductPriceID *uuid.UUID
}

// orderSpec describes an order to create. Amounts are in the currency's minor unit; the
// subtotal is the sum of the items, net = subtotal - discount, total = net + tax.
type orderSpec struct {
	OrganizationID  uuid.UUID
	CustomerID      uuid.UUID
	ProductID       *uuid.UUID
	DiscountID      *uuid.UUID
	SubscriptionID  *uuid.UUID
	CheckoutID      *uuid.UUID
	BillingReason   storage.OrderBillingReason
	Status          storage.OrderStatus // pending or paid
	Currency        string
	Items           []orderItemSpec
	DiscountAmount  int64
	TaxAmount       int64
	BillingName     *string
	BillingAddress  *storage.Address
	Seats           *int
	Description     string
	CustomFieldData storage.JSONMap
	Metadata        storage.JSONMap
}

// subscriptionSpec describes a subscription to create from a confirmed checkout.
type subscriptionSpec struct {
	OrganizationID  uuid.UUID
	CustomerID      uuid.UUID
	Product         *storage.Product
	Prices          []*storage.ProductPrice
	DiscountID      *uuid.UUID
	CheckoutID      *uuid.UUID
	PaymentMethodID *uuid.UUID
	Amount          int64
	Currency        string
	Seats           *int
	TrialEnd        *time.Time // set: starts trialing until then
	CustomFieldData storage.JSONMap
	Metadata        storage.JSONMap
}

// grantScope says why benefits are granted: exactly one of order or subscription.
// Checkouts grant one-time purchases (order scope); subscription use cases grant and revoke
// subscription scopes as the subscription starts and ends; seats grant to their member.
type grantScope struct {
	OrganizationID uuid.UUID
	CustomerID     uuid.UUID
	MemberID       *uuid.UUID
	ProductID      uuid.UUID
	OrderID        *uuid.UUID
	SubscriptionID *uuid.UUID
}

// discountUse is the result of applying a discount to an amount.
type discountUse struct {
	Discount *storage.Discount
	Amount   int64 // the amount taken off, never more than the base
}

// errNotImplemented marks a contract whose implementation has not landed yet.
var errNotImplemented = errors.New("not implemented")
