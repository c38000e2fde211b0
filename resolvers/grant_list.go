package resolvers

import (
	"context"

	"github.com/google/uuid"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// grantSorts whitelists the sorting of grant lists; upstream's grant list has none and is
// newest first, the default here.
var grantSorts = storage.GrantSortColumns

// benefitGrantsPage lists the organizations' grants. With a benefit (GET
// /v1/benefits/{id}/grants) an unknown, deleted or foreign benefit is 404; isGranted false
// selects every grant without granted_at.
func (r *Resolver) benefitGrantsPage(ctx context.Context, a listArgs, f storage.GrantListFilter) (*model.BenefitGrantPage, error) {
	w, sorts, err := a.windowAndSorts(grantSorts)
	if err != nil {
		return nil, err
	}
	if f.BenefitID != nil {
		b, err := storage.GetBenefit(ctx, r.db, organizations(ctx), *f.BenefitID)
		if err != nil {
			return nil, notFoundOr(err, "")
		}
		// The benefit is already at hand: its grants' benefit field costs nothing more.
		loaders(ctx).Benefit.prime(ctx, b.ID, b)
	}
	return r.grantPage(ctx, a, w, sorts, f)
}

// portalBenefitGrants lists the session's grants of live benefits: a customer's all, a
// member's own.
func (r *Resolver) portalBenefitGrants(ctx context.Context, a listArgs, benefitID *uuid.UUID) (*model.BenefitGrantPage, error) {
	w, sorts, err := a.windowAndSorts(grantSorts)
	if err != nil {
		return nil, err
	}
	s := auth.FromContext(ctx)
	f := portalGrants(ctx, storage.GrantListFilter{BenefitID: benefitID, CustomerIDs: []uuid.UUID{s.CustomerID}})
	return r.grantPage(ctx, a, w, sorts, f)
}

// grantPage runs a grant list and notes its grants as read together, so that their
// relations load in one statement each.
func (r *Resolver) grantPage(ctx context.Context, a listArgs, w storage.Window, sorts []storage.Sort, f storage.GrantListFilter) (*model.BenefitGrantPage, error) {
	p, err := storage.ListGrants(ctx, r.db, organizations(ctx), f, sorts, w)
	if err != nil {
		return nil, cursorErr(err, a)
	}
	record(ctx, p.Items)
	return grantPageOf(p, w), nil
}

// portalGrants narrows a grant list to what the portal's own list shows a session: grants
// of live benefits, and a member session's own. Other principals see the list as asked.
func portalGrants(ctx context.Context, f storage.GrantListFilter) storage.GrantListFilter {
	if portal, member := portalHolder(ctx); portal {
		f.LiveBenefits, f.MemberID = true, member
	}
	return f
}

// grantRelation is a list of grants related to obj (Customer.benefitGrants, Benefit.grants,
// …): a window per parent of the level, in one statement.
func grantRelation[P any](ctx context.Context, r *Resolver, name string, obj *P, key func(*P) uuid.UUID, a listArgs,
	f storage.GrantListFilter, fetch windowsFetch[storage.BenefitGrant, storage.GrantListFilter]) (*model.BenefitGrantPage, error) {
	p, w, err := relatedWindow(ctx, r.db, name, obj, key, a, grantSorts, portalGrants(ctx, f), fetch)
	if err != nil {
		return nil, err
	}
	return grantPageOf(p, w), nil
}

// grantPageOf is the GraphQL page of a window of grants.
func grantPageOf(p storage.Paged[*storage.BenefitGrant], w storage.Window) *model.BenefitGrantPage {
	return &model.BenefitGrantPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}
}

// benefitGrant reads one grant of the caller's organizations.
func (r *Resolver) benefitGrant(ctx context.Context, id uuid.UUID) (*storage.BenefitGrant, error) {
	g, err := storage.GetGrant(ctx, r.db, organizations(ctx), id)
	return g, notFoundOr(err, "")
}

// grantMember loads a grant's or seat's member, nil when there is none.
func grantMember[P any](ctx context.Context, obj *P, id func(*P) *uuid.UUID) (*storage.Member, error) {
	return relatedOpt(ctx, loaders(ctx).Member, obj, id)
}
