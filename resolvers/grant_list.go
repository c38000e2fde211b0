package resolvers

import (
	"context"

	"github.com/google/uuid"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// benefitGrantsPage lists a benefit's grants (GET /v1/benefits/{id}/grants): an unknown,
// deleted or foreign benefit is 404, isGranted false selects every grant without granted_at.
func (r *Resolver) benefitGrantsPage(ctx context.Context, benefitID uuid.UUID, isGranted *bool, customerIDs, memberIDs []uuid.UUID,
	page, limit *int) (*model.BenefitGrantPage, error) {
	p, err := pageOf(page, limit)
	if err != nil {
		return nil, err
	}
	b, err := storage.GetBenefit(ctx, r.DB, organizations(ctx), benefitID)
	if err != nil {
		return nil, notFoundOr(err, "")
	}
	// The benefit is already at hand: its grants' benefit field costs nothing more.
	loaders(ctx).Benefit.prime(ctx, b.ID, b)
	return r.grantPage(ctx, storage.GrantListFilter{BenefitID: &b.ID, IsGranted: isGranted,
		CustomerIDs: customerIDs, MemberIDs: memberIDs}, p)
}

// portalBenefitGrants lists the session's grants of live benefits: a customer's all, a
// member's own.
func (r *Resolver) portalBenefitGrants(ctx context.Context, benefitID *uuid.UUID, page, limit *int) (*model.BenefitGrantPage, error) {
	p, err := pageOf(page, limit)
	if err != nil {
		return nil, err
	}
	s := auth.FromContext(ctx)
	f := storage.GrantListFilter{BenefitID: benefitID, CustomerIDs: []uuid.UUID{s.CustomerID}, LiveBenefits: true}
	if s.Kind == auth.KindMemberSession {
		f.MemberIDs = []uuid.UUID{s.MemberID}
	}
	return r.grantPage(ctx, f, p)
}

// grantPage runs a grant list and primes the relations the operation selects, one statement
// each, so a page of grants with customer, member and benefit costs the same at any size.
func (r *Resolver) grantPage(ctx context.Context, f storage.GrantListFilter, p storage.Page) (*model.BenefitGrantPage, error) {
	items, total, err := storage.ListGrants(ctx, r.DB, organizations(ctx), f, p)
	if err != nil {
		return nil, err
	}
	record(ctx, items)
	return &model.BenefitGrantPage{Items: items, Pagination: pagination(total, p)}, nil
}

// benefitGrant reads one grant of the caller's organizations.
func (r *Resolver) benefitGrant(ctx context.Context, id uuid.UUID) (*storage.BenefitGrant, error) {
	g, err := storage.GetGrant(ctx, r.DB, organizations(ctx), id)
	return g, notFoundOr(err, "")
}

// grantMember loads a grant's or seat's member, nil when there is none.
func grantMember[P any](ctx context.Context, obj *P, id func(*P) *uuid.UUID) (*storage.Member, error) {
	return relatedOpt(ctx, loaders(ctx).Member, obj, id)
}
