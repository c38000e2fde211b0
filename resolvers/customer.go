package resolvers

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// customerSorts whitelists the customer list's sorting criteria.
var customerSorts = map[string]string{"created_at": "created_at", "email": "email", "name": "name"}

// conflictError explains which unique field clashed, on the input field that carries it.
func customerConflict(err error, in model.CustomerCreateInput) error {
	var ce *storage.ConflictError
	if !errors.As(err, &ce) {
		return err
	}
	if strings.Contains(ce.Constraint, "external_id") {
		return Invalid("value_error", "A customer with this external ID already exists.", in.ExternalID, "input", "externalId")
	}
	return Invalid("value_error", "A customer with this email address already exists.", in.Email, "input", "email")
}

// createCustomer validates and stores a new customer.
func (r *Resolver) createCustomer(ctx context.Context, in model.CustomerCreateInput) (*storage.Customer, error) {
	orgID, err := targetOrganization(ctx, in.OrganizationID)
	if err != nil {
		return nil, err
	}
	w := storage.CustomerWrite{Type: storage.CustomerTypeIndividual, ExternalID: in.ExternalID, Email: in.Email, Name: in.Name,
		BillingName: in.BillingName, Locale: in.Locale, Metadata: in.Metadata}
	if in.Type != nil {
		w.Type = *in.Type
	}
	if in.Email == nil && w.Type == storage.CustomerTypeIndividual {
		return nil, Invalid("missing", "Field required", nil, "input", "email")
	}
	if in.Email == nil && in.Owner == nil {
		return nil, Invalid("value_error", "An owner with an email address is required when creating a team customer without an email.",
			nil, "input", "owner")
	}
	if in.Owner != nil {
		if err := checkOwner(in.Owner); err != nil {
			return nil, err
		}
	}
	if in.Email != nil {
		if err := checkEmail(*in.Email, "input", "email"); err != nil {
			return nil, err
		}
	}
	if err := checkMetadata(in.Metadata, "input", "metadata"); err != nil {
		return nil, err
	}
	if w.BillingAddress, err = addressOf(in.BillingAddress, "input", "billingAddress"); err != nil {
		return nil, err
	}
	if in.TaxID != nil {
		country := ""
		if w.BillingAddress != nil {
			country = w.BillingAddress.Country
		}
		v, f, err := taxIDOf(*in.TaxID, country, "input", "taxId")
		if err != nil {
			return nil, err
		}
		w.TaxID, w.TaxIDFormat = &v, &f
	}
	var c *storage.Customer
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		if c, err = storage.CreateCustomer(ctx, tx, orgID, w); err != nil {
			return customerConflict(err, in)
		}
		if err := r.emit(ctx, tx, orgID, "customer.created", c.ID); err != nil {
			return err
		}
		return r.createOwnerMember(ctx, tx, c, in.Owner)
	})
	return c, err
}

// deleteCustomer soft-deletes a customer with its members (member.deleted each, as upstream
// removes them); its sessions stop working at once.
func (r *Resolver) deleteCustomer(ctx context.Context, id uuid.UUID) (*storage.Customer, error) {
	var c *storage.Customer
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		var err error
		if c, err = storage.DeleteCustomer(ctx, tx, organizations(ctx), id); err != nil {
			return notFoundOr(err, "")
		}
		members, err := storage.DeleteCustomerMembers(ctx, tx, c.ID)
		if err != nil {
			return err
		}
		for _, m := range members {
			if err := r.emit(ctx, tx, m.OrganizationID, "member.deleted", m.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if r.customers != nil {
		r.customers.Remove(id)
	}
	auth.SessionsChanged(ctx)
	return c, err
}

// checkOwner validates a new customer's owner as upstream's MemberOwnerCreate.
func checkOwner(o *model.MemberOwnerInput) error {
	if _, err := memberEmail(o.Email, "input", "owner", "email"); err != nil {
		return err
	}
	if _, err := memberExternalID(o.ExternalID, "input", "owner", "externalId"); err != nil {
		return err
	}
	_, err := memberName(o.Name, "input", "owner", "name")
	return err
}

// updateCustomer applies the fields present in the input; explicit nulls clear them.
func (r *Resolver) updateCustomer(ctx context.Context, in model.CustomerUpdateInput) (*storage.Customer, error) {
	var out *storage.Customer
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		cur, err := storage.GetCustomer(ctx, tx, organizations(ctx), in.ID)
		if err != nil {
			return notFoundOr(err, "")
		}
		var u storage.CustomerUpdate
		if v, ok := in.Email.ValueOK(); ok {
			if v == nil {
				return Invalid("value_error", "Email cannot be removed.", nil, "input", "email")
			}
			if err := checkEmail(*v, "input", "email"); err != nil {
				return err
			}
			if cur.Email == nil || *cur.Email != *v {
				u.Email, u.EmailVerified = storage.Set(*v), storage.Set(false)
			}
		}
		setGiven(&u.Name, in.Name.ValueOK)
		if v, ok := in.ExternalID.ValueOK(); ok {
			if cur.ExternalID != nil && (v == nil || *v != *cur.ExternalID) {
				return Invalid("value_error", "Customer external ID cannot be updated once set.", v, "input", "externalId")
			}
			u.ExternalID = storage.Set(v)
		}
		setGiven(&u.BillingName, in.BillingName.ValueOK)
		setGiven(&u.Locale, in.Locale.ValueOK)
		if v, ok := in.Metadata.ValueOK(); ok {
			if err := checkMetadata(v, "input", "metadata"); err != nil {
				return err
			}
			u.Metadata = storage.Set(v)
		}
		country := ""
		if cur.BillingAddress != nil {
			country = cur.BillingAddress.Country
		}
		if v, ok := in.BillingAddress.ValueOK(); ok {
			a, err := addressOf(v, "input", "billingAddress")
			if err != nil {
				return err
			}
			u.BillingAddress, country = storage.Set(a), ""
			if a != nil {
				country = a.Country
			}
		}
		if err := setTaxID(&u, cur, in.TaxID.ValueOK, country); err != nil {
			return err
		}
		out, err = storage.UpdateCustomer(ctx, tx, organizations(ctx), in.ID, u)
		if err != nil {
			attempted := model.CustomerCreateInput{Email: cur.Email, ExternalID: cur.ExternalID}
			if v, ok := in.Email.ValueOK(); ok {
				attempted.Email = v
			}
			if v, ok := in.ExternalID.ValueOK(); ok {
				attempted.ExternalID = v
			}
			return customerConflict(err, attempted)
		}
		if u.Email.IsSet() {
			if err := syncOwnerEmail(ctx, tx, out); err != nil {
				return err
			}
		}
		return r.emitCustomerUpdated(ctx, tx, out, u)
	})
	return out, err
}

// setGiven copies an omittable input into an update field when it was given (null included).
func setGiven[T any](dst *storage.Omittable[T], get func() (T, bool)) {
	if v, ok := get(); ok {
		*dst = storage.Set(v)
	}
}

// setTaxID sets, clears or re-validates the tax id against the (possibly new) country.
// Changing only the address re-validates the existing tax id, as upstream does.
func setTaxID(u *storage.CustomerUpdate, cur *storage.Customer, get func() (*string, bool), country string) error {
	v, given := get()
	switch {
	case given && (v == nil || *v == ""):
		u.TaxIDValue, u.TaxIDFormat = storage.Set[*string](nil), storage.Set[*string](nil)
	case given:
		val, format, err := taxIDOf(*v, country, "input", "taxId")
		if err != nil {
			return err
		}
		u.TaxIDValue, u.TaxIDFormat = storage.Set(&val), storage.Set(&format)
	case u.BillingAddress.IsSet() && cur.TaxIDValue != nil:
		val, format, err := taxIDOf(*cur.TaxIDValue, country, "input", "taxId")
		if err != nil {
			return err
		}
		u.TaxIDValue, u.TaxIDFormat = storage.Set(&val), storage.Set(&format)
	}
	return nil
}

// customersPage lists customers with filters, sorting and pagination.
func (r *Resolver) customersPage(ctx context.Context, a listArgs, f *model.CustomerFilter) (*model.CustomerPage, error) {
	lf := customerFilterOf(f)
	p, w, err := rootWindow(ctx, a, customerSorts, func(sorts []storage.Sort, w storage.Window) (storage.Paged[*storage.Customer], error) {
		return storage.ListCustomers(ctx, r.db, organizations(ctx), lf, sorts, w)
	})
	if err != nil {
		return nil, err
	}
	return &model.CustomerPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}

// customerFilterOf turns the GraphQL filter into the storage one.
func customerFilterOf(f *model.CustomerFilter) storage.CustomerListFilter {
	if f == nil {
		return storage.CustomerListFilter{}
	}
	return storage.CustomerListFilter{Email: f.Email, ExternalID: f.ExternalID, Query: f.Query, Metadata: metadataOf(f.Metadata)}
}

// customerByRef resolves a customer of the caller's organizations by id or external id.
func (r *Resolver) customerByRef(ctx context.Context, id *uuid.UUID, externalID *string) (*storage.Customer, error) {
	var (
		c   *storage.Customer
		err error
	)
	switch {
	case id != nil:
		c, err = storage.GetCustomer(ctx, r.db, organizations(ctx), *id)
	case externalID != nil:
		c, err = storage.GetCustomerByExternalID(ctx, r.db, organizations(ctx), *externalID)
	default:
		return nil, Invalid("missing", "Field required", nil, "input", "customerId")
	}
	if err != nil {
		return nil, notFoundOr(err, "")
	}
	return c, nil
}

// emitCustomerUpdated records customer.updated when an update changed something.
func (r *Resolver) emitCustomerUpdated(ctx context.Context, tx *sqlx.Tx, c *storage.Customer, u storage.CustomerUpdate) error {
	if u.IsZero() {
		return nil
	}
	return r.emit(ctx, tx, c.OrganizationID, "customer.updated", c.ID)
}
