package resolvers

import (
	"context"
	"reflect"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// Relation enforces @relation on a field of an object the caller already reached: tokens
// need a scope, as on a root field, and users the permission from their role in the
// object's organization; portal sessions need the field to allow them and the
// object to be their own customer's, because public fields (license-key validation) hand
// out objects of customers other than the session's, or for portal: organization, of their
// own organization.
func (r *Resolver) Relation(ctx context.Context, obj any, next graphql.Resolver, anyOf []model.Scope,
	portal *model.PortalAccess, permission model.Permission) (any, error) {
	p := auth.FromContext(ctx)
	if p.Kind != auth.KindCustomerSession && p.Kind != auth.KindMemberSession {
		if err := checkScope(ctx, anyOf, false); err != nil {
			return nil, err
		}
		// Public fields hand out other organizations' objects (a checkout by its client
		// secret, a license key by its text); a token follows relations of its own only.
		org, ok := r.organizationOf(obj)
		if !ok || !slices.Contains(organizations(ctx), org) {
			return nil, NotPermitted("")
		}
		if err := checkRelationRole(ctx, permission, org); err != nil {
			return nil, err
		}
		return next(ctx)
	}
	access := model.PortalAccessNone
	if portal != nil {
		access = *portal
	}
	if access == model.PortalAccessOrganization {
		if org, ok := r.organizationOf(obj); !ok || org != p.OrganizationID {
			return nil, NotPermitted("")
		}
		return next(ctx)
	}
	owner, ok := customerOf(obj)
	if access == model.PortalAccessNone || !ok || owner != p.CustomerID {
		return nil, NotPermitted("")
	}
	if access == model.PortalAccessBilling {
		if err := r.requireBillingRole(ctx); err != nil {
			return nil, err
		}
	}
	return next(ctx)
}

// organizationOf is the organization an object belongs to: every record of organization
// data carries OrganizationID. The field's place is looked up once per type (the check runs
// for every object of a page).
func (r *Resolver) organizationOf(obj any) (uuid.UUID, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return uuid.UUID{}, false
	}
	t := v.Elem().Type()
	index, cached := r.organizationFields.Load(t)
	if !cached {
		f, ok := t.FieldByName("OrganizationID")
		if !ok || f.Type != reflect.TypeFor[uuid.UUID]() {
			f.Index = nil
		}
		index, _ = r.organizationFields.LoadOrStore(t, f.Index)
	}
	if index.([]int) == nil {
		return uuid.UUID{}, false
	}
	return v.Elem().FieldByIndex(index.([]int)).Interface().(uuid.UUID), true
}

// customerOf is the customer an object belongs to, for the portal's ownership check.
func customerOf(obj any) (uuid.UUID, bool) {
	switch o := obj.(type) {
	case *storage.Customer:
		return o.ID, true
	case *storage.Order:
		return o.CustomerID, true
	case *storage.Subscription:
		return o.CustomerID, true
	case *storage.LicenseKey:
		return o.CustomerID, true
	case *storage.BenefitGrant:
		return o.CustomerID, true
	case *storage.Checkout:
		if o.CustomerID != nil {
			return *o.CustomerID, true
		}
	}
	return uuid.UUID{}, false
}
