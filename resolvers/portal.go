package resolvers

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// portalCustomer loads the session's customer.
func (r *Resolver) portalCustomer(ctx context.Context) (*storage.Customer, error) {
	p := auth.FromContext(ctx)
	c, err := storage.GetCustomer(ctx, r.db, organizations(ctx), p.CustomerID)
	return c, notFoundOr(err, "")
}

// sessionMember is the member a member session acts as, nil for customer sessions: the
// portal's seat, key and seat-subscription lists show a member only what it holds, and a
// customer everything it bought.
func sessionMember(p auth.Principal) *uuid.UUID {
	if p.Kind != auth.KindMemberSession {
		return nil
	}
	return &p.MemberID
}

// billingRoleMessage is upstream's refusal of a member session without a billing role.
const billingRoleMessage = "Only owners and billing managers can access billing features."

// requireBillingRole is upstream's billing-role rule for the portal's billing features
// (billing details, payment methods, orders, subscription changes): customer sessions pass,
// member sessions need the owner or billing_manager role. The role comes with the session's
// principal, so the rule costs no query.
func (r *Resolver) requireBillingRole(ctx context.Context) error {
	p := auth.FromContext(ctx)
	if p.Kind == auth.KindMemberSession && p.MemberRole != "owner" && p.MemberRole != "billing_manager" {
		return NotPermitted(billingRoleMessage)
	}
	return nil
}

// sessionCustomer is the customer the session's lookup read with it (as portalCustomer
// reads it), if it did.
func sessionCustomer(ctx context.Context) (*storage.Customer, bool) {
	p := auth.FromContext(ctx)
	c, ok := p.Subject.(*storage.Customer)
	if !ok || c.ID != p.CustomerID || c.OrganizationID != p.OrganizationID {
		return nil, false
	}
	own := *c // a cached session's customer is shared by every request that uses the session
	return &own, true
}

// me builds the portal root for the session, from the customer read with the session when
// there is one: Query.me is read-only, and a session's customer is current (sessions are
// cached only while every change to their customer is announced; see auth.Cache).
func (r *Resolver) me(ctx context.Context) (*storage.Me, error) {
	c, ok := sessionCustomer(ctx)
	var err error
	if !ok {
		if c, err = r.portalCustomer(ctx); err != nil {
			return nil, err
		}
	}
	me := &storage.Me{Customer: c}
	if ok { // the home written whole shows the customer as the session read it
		if me.JSON, err = r.renderedMe(ctx, c); err != nil {
			return nil, err
		}
	}
	if p := auth.FromContext(ctx); p.Kind == auth.KindMemberSession {
		if me.Member, err = storage.GetMember(ctx, r.db, c.ID, p.MemberID); err != nil {
			return nil, notFoundOr(err, "")
		}
	}
	return me, nil
}

// portalPaymentMethods lists the session customer's payment methods.
func (r *Resolver) portalPaymentMethods(ctx context.Context, a listArgs) (*model.PaymentMethodPage, error) {
	c, err := r.portalCustomer(ctx)
	if err != nil {
		return nil, err
	}
	return r.paymentMethodPage(ctx, c, a)
}

// portalUpdateCustomer applies the customer's own billing changes with upstream's rules
// (contract §3.8, CustomerPortalCustomerUpdate).
// The billing role is checked by @billing on the field.
func (r *Resolver) portalUpdateCustomer(ctx context.Context, in model.PortalCustomerUpdateInput) (*storage.Customer, error) {
	var out *storage.Customer
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		cur, err := storage.GetCustomer(ctx, tx, organizations(ctx), auth.FromContext(ctx).CustomerID)
		if err != nil {
			return notFoundOr(err, "")
		}
		var u storage.CustomerUpdate
		if v, ok := in.BillingName.ValueOK(); ok && v != nil && *v != "" {
			u.BillingName = storage.Set(v)
		}
		country := ""
		if cur.BillingAddress != nil {
			country = cur.BillingAddress.Country
		}
		if v, ok := in.BillingAddress.ValueOK(); ok {
			if v == nil {
				return Invalid("missing", "Customer billing address cannot be reset to null once set.", nil, "input", "billingAddress")
			}
			a, err := addressOf(v, "input", "billingAddress")
			if err != nil {
				return err
			}
			u.BillingAddress, country = storage.Set(a), a.Country
		}
		if err := setTaxID(&u, cur, in.TaxID.ValueOK, country); err != nil {
			return err
		}
		if v, ok := in.DefaultPaymentMethodID.ValueOK(); ok {
			if v == nil {
				return Invalid("value_error", "Default payment method cannot be reset to null.", nil, "input", "defaultPaymentMethodId")
			}
			if _, err := storage.GetCustomerPaymentMethod(ctx, tx, cur.ID, *v); err != nil {
				if errors.Is(err, storage.ErrNotFound) {
					return Invalid("invalid", "Payment method not found.", v.String(), "input", "defaultPaymentMethodId")
				}
				return err
			}
			u.DefaultPaymentMethodID = storage.Set(*v)
		}
		if out, err = storage.UpdateCustomer(ctx, tx, organizations(ctx), cur.ID, u); err != nil {
			return err
		}
		return r.emitCustomerUpdated(ctx, tx, out, u)
	})
	return out, err
}
