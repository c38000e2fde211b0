package storage

import (
	"context"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// LicenseKeyListFilter narrows a license-key list: the filters of GET /v1/license-keys/ plus
// customers. Values of one field are OR-ed, fields AND-ed; empty fields do not filter.
type LicenseKeyListFilter struct {
	OrganizationIDs []uuid.UUID
	BenefitIDs      []uuid.UUID
	CustomerIDs     []uuid.UUID
	Statuses        []LicenseKeyStatus
	// CustomerID and MemberID scope the portal lists: a customer sees its keys, a member the
	// keys it holds.
	CustomerID *uuid.UUID
	MemberID   *uuid.UUID
}

// LicenseKeySortColumns maps the sort properties of license-key lists to SQL over
// licenseKeyList's alias k.
var LicenseKeySortColumns = map[string]string{
	"created_at":        "k.created_at",
	"expires_at":        "k.expires_at",
	"last_validated_at": "k.last_validated_at",
	"usage":             "k.usage",
	"validations":       "k.validations",
	"status":            "k.status",
}

// ListLicenseKeys returns one window of the organizations' live keys, oldest first as
// upstream orders them unless sorted otherwise, with the total count.
func ListLicenseKeys(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f LicenseKeyListFilter, sorts []Sort, w Window) (Paged[*LicenseKey], error) {
	return listWindow[*LicenseKey](ctx, q, licenseKeyList(orgs, f, sorts), w)
}

// LicenseKeyWindowsByCustomers returns one window of each customer's keys, in key order,
// with the filters and sorting of ListLicenseKeys, in one statement.
func LicenseKeyWindowsByCustomers(ctx context.Context, q sqlx.ExtContext, orgs, customers []uuid.UUID, f LicenseKeyListFilter, sorts []Sort, w Window) ([]Paged[*LicenseKey], error) {
	return listWindows(ctx, q, licenseKeyList(orgs, f, sorts), "k.customer_id", customers, w,
		func(k *LicenseKey) uuid.UUID { return k.CustomerID })
}

// licenseKeyList is the license-key list query.
func licenseKeyList(orgs []uuid.UUID, f LicenseKeyListFilter, sorts []Sort) listSQL {
	w := orgFilters("k.organization_id", orgs, "k.deleted_at IS NULL")
	anyOf(w, "k.organization_id", f.OrganizationIDs)
	anyOf(w, "k.benefit_id", f.BenefitIDs)
	anyOf(w, "k.customer_id", f.CustomerIDs)
	anyOf(w, "k.status", f.Statuses)
	ifSet(w, "k.customer_id = $%d", f.CustomerID)
	ifSet(w, "k.member_id = $%d", f.MemberID)
	return listSQL{Columns: qualify("k", licenseKeyColumns), From: "license_keys k", ID: "k.id",
		Where: w.where, Args: w.args, Sorts: sorts, Default: []Sort{{Column: "k.created_at"}}}
}
