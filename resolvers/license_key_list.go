package resolvers

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// licenseKeySorts whitelists the sorting of license-key lists; upstream's list has none and
// is oldest first, the default here.
var licenseKeySorts = storage.LicenseKeySortColumns

// portalLicenseKeys lists the session's keys: a customer's all, a member's own.
func (r *Resolver) portalLicenseKeys(ctx context.Context, a listArgs, benefitID *uuid.UUID) (*model.LicenseKeyPage, error) {
	p := auth.FromContext(ctx)
	f := storage.LicenseKeyListFilter{CustomerID: &p.CustomerID, MemberID: sessionMember(p)}
	if benefitID != nil {
		f.BenefitIDs = []uuid.UUID{*benefitID}
	}
	return r.licenseKeyPage(ctx, a, f)
}

// licenseKeyPage runs a key list (GET /v1/license-keys/ and the portal's) and notes its keys as read together, so that their
// relations load in one statement each.
func (r *Resolver) licenseKeyPage(ctx context.Context, a listArgs, f storage.LicenseKeyListFilter) (*model.LicenseKeyPage, error) {
	w, sorts, err := a.windowAndSorts(licenseKeySorts)
	if err != nil {
		return nil, err
	}
	w = selectionWindow[storage.LicenseKey](ctx, w)
	p, err := storage.ListLicenseKeys(ctx, r.db, organizations(ctx), f, sorts, w)
	if err != nil {
		return nil, cursorErr(err, a)
	}
	record(ctx, p.Items)
	return licenseKeyPageOf(p, w), nil
}

// customerLicenseKeys is Customer.licenseKeys: a window of each customer's keys of the
// level, in one statement. A member session sees the keys it holds.
func (r *Resolver) customerLicenseKeys(ctx context.Context, c *storage.Customer, a listArgs, f storage.LicenseKeyListFilter) (*model.LicenseKeyPage, error) {
	if _, member := portalHolder(ctx); member != nil {
		f.MemberID = member
	}
	p, w, err := relatedWindow(ctx, r.db, "Customer.licenseKeys", c, func(c *storage.Customer) uuid.UUID { return c.ID },
		a, licenseKeySorts, f, storage.LicenseKeyWindowsByCustomers)
	if err != nil {
		return nil, err
	}
	return licenseKeyPageOf(p, w), nil
}

// licenseKeyPageOf is the GraphQL page of a window of keys.
func licenseKeyPageOf(p storage.Paged[*storage.LicenseKey], w storage.Window) *model.LicenseKeyPage {
	return &model.LicenseKeyPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}
}

// grantLicenseKeyOf is BenefitGrant.licenseKey: the key recorded in the grant's properties,
// loaded for the grant's whole level in one statement; nil for grants of other types.
func grantLicenseKeyOf(ctx context.Context, g *storage.BenefitGrant) (*storage.LicenseKey, error) {
	return relatedOpt(ctx, loaders(ctx).LicenseKey, g, func(g *storage.BenefitGrant) *uuid.UUID {
		var p struct {
			LicenseKeyID *uuid.UUID `json:"license_key_id"`
		}
		if len(g.Properties) == 0 || json.Unmarshal(g.Properties, &p) != nil {
			return nil
		}
		return p.LicenseKeyID
	})
}

// licenseKeyGrant is LicenseKey.grant: the grant that issued the key, nil when it is gone.
func (r *Resolver) licenseKeyGrant(ctx context.Context, k *storage.LicenseKey) (*storage.BenefitGrant, error) {
	orgs := organizations(ctx)
	l := manyOf(ctx, r.db, "LicenseKey.grant", func(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([][]*storage.BenefitGrant, error) {
		return storage.GrantsByLicenseKeys(ctx, q, orgs, ids)
	})
	gs, err := related(ctx, l, k, func(k *storage.LicenseKey) uuid.UUID { return k.ID })
	if err != nil || len(gs) == 0 {
		return nil, err
	}
	return gs[0], nil
}
