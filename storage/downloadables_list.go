package storage

import (
	"context"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// DownloadableListFilter selects available downloadables (see downloadableAvailable).
type DownloadableListFilter struct {
	// CustomerID scopes the list to one customer (the portal session's).
	CustomerID *uuid.UUID
	// MemberID narrows to one member's own; nil lists all of the customer's.
	MemberID   *uuid.UUID
	BenefitIDs []uuid.UUID
}

// DownloadableSortColumns maps the sort properties of downloadable lists to SQL over
// downloadableList's aliases (d downloadables, f files).
var DownloadableSortColumns = map[string]string{
	"created_at":         "d.created_at",
	"name":               "f.name",
	"last_downloaded_at": "d.last_downloaded_at",
}

// ListDownloadables returns one window of the available downloadables, newest first as
// upstream lists them unless sorted otherwise, with the total count.
func ListDownloadables(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f DownloadableListFilter, sorts []Sort, w Window) (Paged[*DownloadableGrant], error) {
	return listWindow[*DownloadableGrant](ctx, q, downloadableList(orgs, f, sorts), w)
}

// DownloadableWindowsByCustomers returns one window of each customer's available
// downloadables, in key order, with the filters and sorting of ListDownloadables, in one
// statement.
func DownloadableWindowsByCustomers(ctx context.Context, q sqlx.ExtContext, orgs, customers []uuid.UUID, f DownloadableListFilter, sorts []Sort, w Window) ([]Paged[*DownloadableGrant], error) {
	return listWindows(ctx, q, downloadableList(orgs, f, sorts), "d.customer_id", customers, w,
		func(d *DownloadableGrant) uuid.UUID { return d.CustomerID })
}

// downloadableList is the downloadable list query: rows of downloadables with their files.
func downloadableList(orgs []uuid.UUID, f DownloadableListFilter, sorts []Sort) listSQL {
	w := orgFilters("d.organization_id", orgs, downloadableAvailable)
	ifSet(w, "d.customer_id = $%d", f.CustomerID)
	ifSet(w, "d.member_id = $%d", f.MemberID)
	anyOf(w, "d.benefit_id", f.BenefitIDs)
	return listSQL{Columns: downloadableColumns, From: "downloadables d JOIN files f ON f.id = d.file_id", ID: "d.id",
		Where: w.where, Args: w.args, Sorts: sorts, Default: []Sort{{Column: "d.created_at", Desc: true}}}
}
