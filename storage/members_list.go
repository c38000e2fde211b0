package storage

import (
	"context"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// MemberListFilter narrows a member list; empty fields do not filter.
type MemberListFilter struct {
	Roles []MemberRole
	// CustomerID keeps one customer's members.
	CustomerID *uuid.UUID
	// ExternalCustomerID keeps the members of the live customers with this external id.
	ExternalCustomerID *string
}

// MemberSortColumns maps the sort properties of member lists to SQL over memberList's alias m.
var MemberSortColumns = map[string]string{
	"created_at": "m.created_at",
	"email":      "lower(m.email)",
	"name":       "m.name",
	"role":       "m.role",
}

// ListMembers returns one window of the live members of the given organizations, newest
// first unless sorted otherwise, with the total count.
func ListMembers(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f MemberListFilter, sorts []Sort, w Window) (Paged[*Member], error) {
	l := memberList(orgs, f, sorts)
	l.Default = []Sort{{Column: "m.created_at", Desc: true}}
	return listWindow[*Member](ctx, q, l, w)
}

// MemberWindowsByCustomers returns one window of each customer's live members, in key order,
// oldest first unless sorted otherwise, in one statement.
func MemberWindowsByCustomers(ctx context.Context, q sqlx.ExtContext, orgs, customers []uuid.UUID, f MemberListFilter, sorts []Sort, w Window) ([]Paged[*Member], error) {
	return listWindows(ctx, q, memberList(orgs, f, sorts), "m.customer_id", customers, w,
		func(m *Member) uuid.UUID { return m.CustomerID })
}

// memberList is the member list query.
func memberList(orgs []uuid.UUID, f MemberListFilter, sorts []Sort) listSQL {
	w := orgFilters("m.organization_id", orgs, "m.deleted_at IS NULL")
	anyOf(w, "m.role", f.Roles)
	ifSet(w, "m.customer_id = $%d", f.CustomerID)
	ifSet(w, "m.customer_id IN (SELECT c.id FROM customers c WHERE c.external_id = $%d AND c.deleted_at IS NULL)",
		f.ExternalCustomerID)
	return listSQL{Columns: qualify("m", memberColumns), From: "members m", ID: "m.id",
		Where: w.where, Args: w.args, Sorts: sorts, Default: []Sort{{Column: "m.created_at"}}}
}
