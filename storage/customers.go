package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Customer is a buyer of an organization; deleting one is a soft delete.
type Customer struct {
	Rendered
	ID                     uuid.UUID    `db:"id"`
	CreatedAt              time.Time    `db:"created_at"`
	ModifiedAt             *time.Time   `db:"modified_at"`
	DeletedAt              *time.Time   `db:"deleted_at"`
	OrganizationID         uuid.UUID    `db:"organization_id"`
	Type                   CustomerType `db:"type"`
	ExternalID             *string      `db:"external_id"`
	Email                  *string      `db:"email"`
	EmailVerified          bool         `db:"email_verified"`
	Name                   *string      `db:"name"`
	BillingName            *string      `db:"billing_name"`
	BillingAddress         *Address     `db:"billing_address"`
	TaxIDValue             *string      `db:"tax_id"`
	TaxIDFormat            *string      `db:"tax_id_format"`
	Locale                 *string      `db:"locale"`
	Metadata               JSONMap      `db:"metadata"`
	AvatarURL              *string      `db:"avatar_url"`
	FirstUserEventAt       *time.Time   `db:"first_user_event_at"`
	DefaultPaymentMethodID *uuid.UUID   `db:"default_payment_method_id"`
}

// TaxID is the contract's [value, format] pair, or nil when no tax id is set.
func (c *Customer) TaxID() []string {
	if c.TaxIDValue == nil || c.TaxIDFormat == nil {
		return nil
	}
	return []string{*c.TaxIDValue, *c.TaxIDFormat}
}

const customerColumns = `id, created_at, modified_at, deleted_at, organization_id, type, external_id,
	email, email_verified, name, billing_name, billing_address, tax_id, tax_id_format, locale,
	metadata, avatar_url, first_user_event_at, default_payment_method_id`

// CustomerWrite holds the fields of a new customer; changes to one are a CustomerUpdate.
type CustomerWrite struct {
	Type           CustomerType
	ExternalID     *string
	Email          *string
	Name           *string
	BillingName    *string
	BillingAddress *Address
	TaxID          *string
	TaxIDFormat    *string
	Locale         *string
	Metadata       JSONMap
}

// CreateCustomer inserts a customer.
func CreateCustomer(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, w CustomerWrite) (*Customer, error) {
	if w.Type == "" {
		w.Type = CustomerTypeIndividual
	}
	var c Customer
	err := sqlx.GetContext(ctx, q, &c, `INSERT INTO customers (organization_id, type, external_id, email,
		name, billing_name, billing_address, tax_id, tax_id_format, locale, metadata)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING `+customerColumns,
		orgID, w.Type, w.ExternalID, w.Email, w.Name, w.BillingName, w.BillingAddress,
		w.TaxID, w.TaxIDFormat, w.Locale, w.Metadata)
	return &c, mapErr(err)
}

// CustomerUpdate is a change to a customer: each set field writes its column, the others
// keep what they hold; a set nil pointer clears the column.
type CustomerUpdate struct {
	Email                  Omittable[string]
	EmailVerified          Omittable[bool]
	Name                   Omittable[*string]
	ExternalID             Omittable[*string]
	BillingName            Omittable[*string]
	BillingAddress         Omittable[*Address]
	TaxIDValue             Omittable[*string]
	TaxIDFormat            Omittable[*string]
	Locale                 Omittable[*string]
	Metadata               Omittable[JSONMap]
	DefaultPaymentMethodID Omittable[uuid.UUID]
}

func (u CustomerUpdate) assignments() []assignment {
	return []assignment{u.Email.to("email"), u.EmailVerified.to("email_verified"), u.Name.to("name"),
		u.ExternalID.to("external_id"), u.BillingName.to("billing_name"), u.BillingAddress.to("billing_address"),
		u.TaxIDValue.to("tax_id"), u.TaxIDFormat.to("tax_id_format"), u.Locale.to("locale"),
		u.Metadata.to("metadata"), u.DefaultPaymentMethodID.to("default_payment_method_id")}
}

// IsZero reports whether u changes nothing: such an update writes no row, and a use case
// announces no customer.updated for it.
func (u CustomerUpdate) IsZero() bool { return isZero(u) }

// UpdateCustomer writes the set fields of u to a live customer of the given organizations.
// A zero update changes nothing, not even modified_at.
func UpdateCustomer(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, u CustomerUpdate) (*Customer, error) {
	if u.IsZero() {
		return GetCustomer(ctx, q, orgs, id)
	}
	sets, args := setClause("modified_at = now()", u, []any{id, pq.Array(orgs)})
	var c Customer
	err := sqlx.GetContext(ctx, q, &c, `UPDATE customers SET `+sets+`
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL RETURNING `+customerColumns, args...)
	return &c, mapErr(err)
}

// DeleteCustomer soft-deletes a customer; its sessions stop working at once.
func DeleteCustomer(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*Customer, error) {
	var c Customer
	err := sqlx.GetContext(ctx, q, &c, `UPDATE customers SET deleted_at = now(), modified_at = now()
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL RETURNING `+customerColumns,
		id, pq.Array(orgs))
	return &c, mapErr(err)
}

// GetCustomer reads a live customer of the given organizations.
func GetCustomer(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*Customer, error) {
	var c Customer
	err := sqlx.GetContext(ctx, q, &c, `SELECT `+customerColumns+` FROM customers
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL`, id, pq.Array(orgs))
	return &c, mapErr(err)
}

// LockCustomer reads a live customer of the given organizations and locks its row against
// other writers (not against the rows that reference it): the changes to a customer's members
// run one at a time, so the rules on owners hold.
func LockCustomer(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*Customer, error) {
	var c Customer
	err := sqlx.GetContext(ctx, q, &c, `SELECT `+customerColumns+` FROM customers
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL FOR NO KEY UPDATE`, id, pq.Array(orgs))
	return &c, mapErr(err)
}

// CustomerIDsByExternalID lists the live customers of the given organizations with this
// external id, at most two: the id is unique per organization, so two say it is ambiguous
// across the organizations of a user token.
func CustomerIDsByExternalID(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, externalID string) ([]uuid.UUID, error) {
	ids := []uuid.UUID{}
	err := sqlx.SelectContext(ctx, q, &ids, `SELECT id FROM customers
		WHERE external_id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL
		ORDER BY created_at, id LIMIT 2`, externalID, pq.Array(orgs))
	return ids, mapErr(err)
}

// GetCustomerByExternalID reads a live customer by its external id. With several
// organizations, the oldest match wins so the answer is stable.
func GetCustomerByExternalID(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, externalID string) (*Customer, error) {
	var c Customer
	err := sqlx.GetContext(ctx, q, &c, `SELECT `+customerColumns+` FROM customers
		WHERE external_id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL
		ORDER BY created_at LIMIT 1`, externalID, pq.Array(orgs))
	return &c, mapErr(err)
}

// CustomersByIDs loads customers for a dataloader, one per key in key order, nil where missing.
// Deleted customers are included because orders and grants still point at them.
func CustomersByIDs(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([]*Customer, error) {
	var rows []*Customer
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+customerColumns+` FROM customers
		WHERE id = ANY($1)`, pq.Array(ids)); err != nil {
		return nil, mapErr(err)
	}
	return inKeyOrder(ids, rows, func(r *Customer) uuid.UUID { return r.ID }), nil
}

// CustomerListFilter narrows a customer list.
type CustomerListFilter struct {
	Email      *string
	ExternalID *string
	Query      *string
	Metadata   map[string][]string
}

// ListCustomers returns one window of live customers, with the total count.
func ListCustomers(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f CustomerListFilter, sorts []Sort, w Window) (Paged[*Customer], error) {
	return listWindow[*Customer](ctx, q, customerList(orgs, f, sorts), w)
}

// customerList is the customer list query, newest first unless sorted otherwise.
func customerList(orgs []uuid.UUID, f CustomerListFilter, sorts []Sort) listSQL {
	w := orgFilters("organization_id", orgs, "deleted_at IS NULL")
	ifSet(w, "lower(email) = lower($%d)", f.Email)
	ifSet(w, "external_id = $%d", f.ExternalID)
	w.contains("(coalesce(email, '') || ' ' || coalesce(name, '') || ' ' || coalesce(external_id, '')) ILIKE $%d", f.Query)
	w.metadata("metadata", f.Metadata)
	return listSQL{Columns: customerColumns, From: "customers", ID: "id", Where: w.where, Args: w.args,
		Sorts: sorts, Default: []Sort{{Column: "created_at", Desc: true}}}
}
