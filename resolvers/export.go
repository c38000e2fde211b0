package resolvers

import (
	"context"
	"slices"

	"github.com/google/uuid"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// Exports stream every row of a list to a file instead of a page of it. Each export is
// guarded as its list is: the route runs the list field's directives (scopes) before the use
// case, and the use case applies the role rule of the permission that field declares, so
// an export never shows what the list would not.

// The records an export hands over, named here so that the layers above read them without
// importing storage.
type (
	// OrderExport is one exported order with the columns of its customer and product.
	OrderExport = storage.OrderExport
	// SubscriptionExport is one exported subscription with the columns of its customer,
	// product and discount.
	SubscriptionExport = storage.SubscriptionExport
	// CustomerExport is one exported customer with its metadata as PostgreSQL prints it.
	CustomerExport = storage.CustomerExport
	// UsageEventExport is one exported usage event.
	UsageEventExport = storage.Event
	// ExportAddress is the billing address of an exported record.
	ExportAddress = storage.Address
)

// exportEventPage is how many events an events export reads per keyset window.
const exportEventPage = 1000

// ExportOrders hands each order of the caller's organizations that the orders list's filter
// keeps to each, in the list's sorting (newest first by default).
func (r *Resolver) ExportOrders(ctx context.Context, f *model.OrderFilter, sorting []string,
	each func(*storage.OrderExport) error) error {
	orgs, sorts, err := r.exportScope(ctx, "orders", f, sorting, orderSorts)
	if err != nil {
		return err
	}
	return storage.StreamOrders(ctx, r.db, orgs, orderFilterOf(f), sorts, each)
}

// ExportSubscriptions hands each started subscription of the caller's organizations that
// the subscriptions list's filter keeps to each, in the list's sorting (latest started first
// by default).
func (r *Resolver) ExportSubscriptions(ctx context.Context, f *model.SubscriptionFilter, sorting []string,
	each func(*storage.SubscriptionExport) error) error {
	orgs, sorts, err := r.exportScope(ctx, "subscriptions", f, sorting, subscriptionSorts)
	if err != nil {
		return err
	}
	return storage.StreamSubscriptions(ctx, r.db, orgs, subscriptionFilterOf(f), sorts, each)
}

// ExportCustomers hands each customer of the caller's organizations that the customers
// list's filter keeps to each, in the list's sorting (newest first by default); organizationIDs,
// when given, keeps only those organizations' customers, as upstream's export filters them.
func (r *Resolver) ExportCustomers(ctx context.Context, organizationIDs []uuid.UUID, f *model.CustomerFilter,
	sorting []string, each func(*storage.CustomerExport) error) error {
	orgs, sorts, err := r.exportScope(ctx, "customers", map[string]any{"organizationId": organizationIDs, "filter": f},
		sorting, customerSorts)
	if err != nil {
		return err
	}
	return storage.StreamCustomers(ctx, r.db, only(orgs, organizationIDs), customerFilterOf(f), sorts, each)
}

// ExportUsageEvents hands each usage event of the caller's organizations that the events
// list's filter keeps to each, in the list's order (newest first unless sorted by timestamp).
func (r *Resolver) ExportUsageEvents(ctx context.Context, f *model.UsageEventFilter, sorting []string,
	each func(*storage.Event) error) error {
	orgs, sorts, err := r.exportScope(ctx, "usageEvents", f, sorting, eventSorts)
	if err != nil {
		return err
	}
	lq := storage.EventListQuery{Ascending: len(sorts) > 0 && !sorts[0].Desc}
	if f != nil {
		lq.Filter = eventListFilter(f)
		orgs = only(orgs, f.OrganizationID)
	}
	return storage.StreamEvents(ctx, r.db, orgs, lq, exportEventPage, each)
}

// exportScope applies the role rule of the root list field to an export filtered by filter,
// and returns the organizations it reads with its sorting.
func (r *Resolver) exportScope(ctx context.Context, field string, filter any, sorting []string,
	columns map[string]string) ([]uuid.UUID, []storage.Sort, error) {
	ctx, err := r.narrowByRole(ctx, r.listPermission(field), map[string]any{"filter": filter}, false)
	if err != nil {
		return nil, nil, err
	}
	sorts, err := sortsOf(sorting, columns)
	if err != nil {
		return nil, nil, err
	}
	return organizations(ctx), sorts, nil
}

// listPermission is the permission a root query field declares in its @hasScope guard, read
// from the schema so an export and its list cannot disagree. A field without one yields a
// permission no role grants, so a user then sees nothing.
func (r *Resolver) listPermission(field string) auth.Permission {
	f := r.Schema().Schema().Query.Fields.ForName(field)
	if f == nil {
		return ""
	}
	d := f.Directives.ForName("hasScope")
	if d == nil {
		return ""
	}
	a := d.Arguments.ForName("permission")
	if a == nil || a.Value == nil {
		return ""
	}
	return wirePermission(model.Permission(a.Value.Raw))
}

// only keeps the organizations of orgs that wanted names, or all of them when wanted is
// empty (an absent filter).
func only(orgs, wanted []uuid.UUID) []uuid.UUID {
	if len(wanted) == 0 {
		return orgs
	}
	return slices.DeleteFunc(slices.Clone(orgs), func(o uuid.UUID) bool { return !slices.Contains(wanted, o) })
}
