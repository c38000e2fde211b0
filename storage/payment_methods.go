package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// PaymentMethod is a customer's saved instrument at the payment processor.
type PaymentMethod struct {
	ID          uuid.UUID  `db:"id"`
	CreatedAt   time.Time  `db:"created_at"`
	ModifiedAt  *time.Time `db:"modified_at"`
	CustomerID  uuid.UUID  `db:"customer_id"`
	Processor   string     `db:"processor"`
	ProcessorID string     `db:"processor_id"`
	Type        string     `db:"type"`
	Brand       *string    `db:"brand"`
	Last4       *string    `db:"last4"`
	ExpMonth    *int       `db:"exp_month"`
	ExpYear     *int       `db:"exp_year"`
	Wallet      *string    `db:"wallet"`
	// ProcessorCustomerID is the processor's customer the method is saved to, which a charge
	// of it names; nil for a method saved before Till kept it.
	ProcessorCustomerID *string `db:"processor_customer_id"`
	// IsDefault is computed from the customer's default_payment_method_id.
	IsDefault bool `db:"is_default"`
}

// CardMetadata is the card detail block of a card payment method.
type CardMetadata struct {
	Brand    string
	Last4    string
	ExpMonth int
	ExpYear  int
	Wallet   *string
}

// MethodMetadata is the card block for card methods and nil for other types.
func (p *PaymentMethod) MethodMetadata() *CardMetadata {
	if p.Type != "card" || p.Brand == nil || p.Last4 == nil || p.ExpMonth == nil || p.ExpYear == nil {
		return nil
	}
	return &CardMetadata{Brand: *p.Brand, Last4: *p.Last4, ExpMonth: *p.ExpMonth, ExpYear: *p.ExpYear, Wallet: p.Wallet}
}

const (
	paymentMethodColumns = `pm.id, pm.created_at, pm.modified_at, pm.customer_id, pm.processor,
	pm.processor_id, pm.type, pm.brand, pm.last4, pm.exp_month, pm.exp_year, pm.wallet,
	pm.processor_customer_id, (c.default_payment_method_id IS NOT DISTINCT FROM pm.id) AS is_default`
	paymentMethodFrom   = `payment_methods pm JOIN customers c ON c.id = pm.customer_id`
	paymentMethodSelect = `SELECT ` + paymentMethodColumns + ` FROM ` + paymentMethodFrom
)

// PaymentMethodWrite describes a saved instrument to store.
type PaymentMethodWrite struct {
	Processor   string
	ProcessorID string
	Type        string
	Brand       *string
	Last4       *string
	ExpMonth    *int
	ExpYear     *int
	Wallet      *string
	// ProcessorCustomerID is the processor's customer the instrument was saved to.
	ProcessorCustomerID string
	// HeldForCheckoutID, when set, stores the instrument as held for that checkout only: a
	// card brought by a buyer not bound to the customer. It is none of the customer's saved
	// methods (see savedMethod); only the checkout's subscription charges it again.
	HeldForCheckoutID *uuid.UUID
	// Limit is the most live saved methods the customer may hold, this one included; 0 sets
	// none, and a held method is never counted. With a limit, q must be a transaction: the customer's row is locked so
	// concurrent saves count each other.
	Limit int
}

// savedMethod is the condition that a payment method row is one of its customer's saved
// methods, as opposed to one held for a single checkout. Every list and lookup of a
// customer's methods carries it.
const savedMethod = `pm.held_for_checkout_id IS NULL`

// CreatePaymentMethod stores a payment method for a customer of the organization.
func CreatePaymentMethod(ctx context.Context, q sqlx.ExtContext, orgID, customerID uuid.UUID, w PaymentMethodWrite) (*PaymentMethod, error) {
	if w.Limit > 0 && w.HeldForCheckoutID == nil {
		var live int
		if _, err := q.ExecContext(ctx, `SELECT 1 FROM customers WHERE id = $1 AND organization_id = $2
			FOR NO KEY UPDATE`, customerID, orgID); err != nil {
			return nil, mapErr(err)
		}
		if err := sqlx.GetContext(ctx, q, &live, `SELECT count(*) FROM payment_methods pm
			WHERE pm.customer_id = $1 AND pm.deleted_at IS NULL AND `+savedMethod, customerID); err != nil {
			return nil, mapErr(err)
		}
		if live >= w.Limit {
			return nil, ErrConflict
		}
	}
	var id uuid.UUID
	err := sqlx.GetContext(ctx, q, &id, `INSERT INTO payment_methods (organization_id, customer_id,
		processor, processor_id, type, brand, last4, exp_month, exp_year, wallet, held_for_checkout_id,
		processor_customer_id)
		SELECT organization_id, id, $3, $4, $5, $6, $7, $8, $9, $10, $11, nullif($12, '') FROM customers
		WHERE id = $2 AND organization_id = $1 AND deleted_at IS NULL RETURNING id`,
		orgID, customerID, w.Processor, w.ProcessorID, w.Type, w.Brand, w.Last4, w.ExpMonth, w.ExpYear, w.Wallet,
		w.HeldForCheckoutID, w.ProcessorCustomerID)
	if err != nil {
		return nil, mapErr(err)
	}
	var pm PaymentMethod
	err = sqlx.GetContext(ctx, q, &pm, paymentMethodSelect+` WHERE pm.id = $1`, id)
	return &pm, mapErr(err)
}

// GetCustomerPaymentMethod reads one live saved payment method of a customer.
func GetCustomerPaymentMethod(ctx context.Context, q sqlx.ExtContext, customerID, id uuid.UUID) (*PaymentMethod, error) {
	var pm PaymentMethod
	err := sqlx.GetContext(ctx, q, &pm, paymentMethodSelect+`
		WHERE pm.id = $1 AND pm.customer_id = $2 AND pm.deleted_at IS NULL AND `+savedMethod, id, customerID)
	return &pm, mapErr(err)
}

// ListPaymentMethods returns one window of a customer's live saved payment methods, newest
// first, with the total count.
func ListPaymentMethods(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, customerID uuid.UUID, w Window) (Paged[*PaymentMethod], error) {
	return listWindow[*PaymentMethod](ctx, q, listSQL{Columns: paymentMethodColumns, From: paymentMethodFrom, ID: "pm.id",
		Where: []string{"pm.organization_id = ANY($1)", "pm.customer_id = $2", "pm.deleted_at IS NULL", savedMethod},
		Args:  []any{pq.Array(orgs), customerID}, Default: []Sort{{Column: "pm.created_at", Desc: true}}}, w)
}

// PaymentMethodsByCustomers loads every live saved payment method of each customer for a
// dataloader: one slice per key, in key order, newest first.
func PaymentMethodsByCustomers(ctx context.Context, q sqlx.ExtContext, customerIDs []uuid.UUID) ([][]*PaymentMethod, error) {
	var rows []*PaymentMethod
	if err := sqlx.SelectContext(ctx, q, &rows, paymentMethodSelect+`
		WHERE pm.customer_id = ANY($1) AND pm.deleted_at IS NULL AND `+savedMethod+` ORDER BY pm.created_at DESC, pm.id DESC`,
		pq.Array(customerIDs)); err != nil {
		return nil, mapErr(err)
	}
	return groupBy(customerIDs, rows, func(p *PaymentMethod) uuid.UUID { return p.CustomerID }), nil
}
