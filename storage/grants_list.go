package storage

import (
	"context"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// GrantListFilter narrows a grant list: the filters of GET /v1/benefits/{id}/grants, the
// portal's scoping, and the relations' parents. Values of one field are OR-ed, fields AND-ed;
// empty fields do not filter.
type GrantListFilter struct {
	// BenefitID selects one benefit's grants (the organization-side list).
	BenefitID *uuid.UUID
	// IsGranted true: granted_at set; false: not granted (revoked, pending and failed alike).
	IsGranted       *bool
	CustomerIDs     []uuid.UUID
	MemberIDs       []uuid.UUID
	SubscriptionIDs []uuid.UUID
	OrderIDs        []uuid.UUID
	// MemberID scopes the list to one member's grants (a member session's), beside any
	// MemberIDs the caller filters on.
	MemberID *uuid.UUID
	// LiveBenefits hides grants of deleted benefits (the portal lists).
	LiveBenefits bool
}

// GrantSortColumns maps the sort properties of grant lists to SQL over grantList's alias g.
var GrantSortColumns = map[string]string{
	"created_at": "g.created_at",
	"granted_at": "g.granted_at",
	"revoked_at": "g.revoked_at",
}

// ListGrants returns one window of the organizations' live grants, newest first unless
// sorted otherwise, with the total count.
func ListGrants(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f GrantListFilter, sorts []Sort, w Window) (Paged[*BenefitGrant], error) {
	return listWindow[*BenefitGrant](ctx, q, grantList(orgs, f, sorts), w)
}

// GrantWindowsByCustomers returns one window of each customer's grants, in key order, with
// the filters and sorting of ListGrants, in one statement.
func GrantWindowsByCustomers(ctx context.Context, q sqlx.ExtContext, orgs, customers []uuid.UUID, f GrantListFilter, sorts []Sort, w Window) ([]Paged[*BenefitGrant], error) {
	return listWindows(ctx, q, grantList(orgs, f, sorts), "g.customer_id", customers, w,
		func(g *BenefitGrant) uuid.UUID { return g.CustomerID })
}

// GrantWindowsByBenefits returns one window of each benefit's grants, in key order.
func GrantWindowsByBenefits(ctx context.Context, q sqlx.ExtContext, orgs, benefits []uuid.UUID, f GrantListFilter, sorts []Sort, w Window) ([]Paged[*BenefitGrant], error) {
	return listWindows(ctx, q, grantList(orgs, f, sorts), "g.benefit_id", benefits, w,
		func(g *BenefitGrant) uuid.UUID { return g.BenefitID })
}

// GrantWindowsBySubscriptions returns one window of each subscription's grants (its
// customer's and its seat holders'), in key order.
func GrantWindowsBySubscriptions(ctx context.Context, q sqlx.ExtContext, orgs, subscriptions []uuid.UUID, f GrantListFilter, sorts []Sort, w Window) ([]Paged[*BenefitGrant], error) {
	return listWindows(ctx, q, grantList(orgs, f, sorts), "g.subscription_id", subscriptions, w,
		func(g *BenefitGrant) uuid.UUID { return derefID(g.SubscriptionID) })
}

// GrantWindowsByOrders returns one window of each order's grants, in key order.
func GrantWindowsByOrders(ctx context.Context, q sqlx.ExtContext, orgs, orders []uuid.UUID, f GrantListFilter, sorts []Sort, w Window) ([]Paged[*BenefitGrant], error) {
	return listWindows(ctx, q, grantList(orgs, f, sorts), "g.order_id", orders, w,
		func(g *BenefitGrant) uuid.UUID { return derefID(g.OrderID) })
}

// grantList is the grant list query.
func grantList(orgs []uuid.UUID, f GrantListFilter, sorts []Sort) listSQL {
	w := orgFilters("g.organization_id", orgs, "g.deleted_at IS NULL")
	ifSet(w, "g.benefit_id = $%d", f.BenefitID)
	if f.IsGranted != nil {
		if *f.IsGranted {
			w.where = append(w.where, "g.granted_at IS NOT NULL")
		} else {
			w.where = append(w.where, "g.granted_at IS NULL")
		}
	}
	anyOf(w, "g.customer_id", f.CustomerIDs)
	anyOf(w, "g.member_id", f.MemberIDs)
	anyOf(w, "g.subscription_id", f.SubscriptionIDs)
	anyOf(w, "g.order_id", f.OrderIDs)
	ifSet(w, "g.member_id = $%d", f.MemberID)
	if f.LiveBenefits {
		w.where = append(w.where, "EXISTS (SELECT 1 FROM benefits b WHERE b.id = g.benefit_id AND b.deleted_at IS NULL)")
	}
	return listSQL{Columns: qualify("g", grantColumns), From: "benefit_grants g", ID: "g.id",
		Where: w.where, Args: w.args, Sorts: sorts, Default: []Sort{{Column: "g.created_at", Desc: true}}}
}

// GrantsByLicenseKeys returns, per license key in key order, the live grant that issued it
// (none when it is gone), for LicenseKey.grant. The grant is found through the key's holder
// and benefit, which the grants' unique index serves, and its recorded license_key_id.
func GrantsByLicenseKeys(ctx context.Context, q sqlx.ExtContext, orgs, keys []uuid.UUID) ([][]*BenefitGrant, error) {
	type row struct {
		KeyID uuid.UUID `db:"key_id"`
		BenefitGrant
	}
	var rows []*row
	err := sqlx.SelectContext(ctx, q, &rows, `SELECT DISTINCT ON (k.id) k.id AS key_id, `+qualify("g", grantColumns)+`
		FROM license_keys k JOIN benefit_grants g ON g.benefit_id = k.benefit_id AND g.customer_id = k.customer_id
			AND g.member_id IS NOT DISTINCT FROM k.member_id AND g.properties->>'license_key_id' = k.id::text
		WHERE k.id = ANY($1) AND k.organization_id = ANY($2) AND g.organization_id = ANY($2) AND g.deleted_at IS NULL
		ORDER BY k.id, g.created_at DESC, g.id DESC`, pq.Array(keys), pq.Array(orgs))
	if err != nil {
		return nil, mapErr(err)
	}
	return groupJoined(keys, rows, func(r *row) uuid.UUID { return r.KeyID },
		func(r *row) BenefitGrant { return r.BenefitGrant }), nil
}

// derefID is the id a window row was matched on by a nullable parent column: the filter
// on that column already excluded rows where it is null.
func derefID(id *uuid.UUID) uuid.UUID {
	if id == nil {
		return uuid.Nil
	}
	return *id
}
