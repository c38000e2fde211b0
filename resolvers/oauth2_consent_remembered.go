package resolvers

import (
	"context"
	"slices"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/storage"
)

// rememberedConsent decides whether a signed-in user's authorization request may skip the
// consent page, and for which organization. It may when the user consented to this client
// before with every scope now requested (upstream's has_granted_scope), or when the client
// is first-party, whose consent upstream presumes. What it finds is only a candidate: the
// code is then issued by grantConsent under today's rights, so a remembered consent never
// grants more than the user now holds.
//
// A user subject reuses the organizations the remembered tokens were narrowed to, among
// those the user still reaches; when none is left the page asks again rather than widen the
// token to all of them. An organization subject needs an organization the user still
// manages whose remembered consent covers the scopes; with more than one the user must
// choose on the page.
func (r *Resolver) rememberedConsent(ctx context.Context, p auth.Principal, v *ValidAuthorization, scopes auth.ScopeSet) (org *uuid.UUID, ok bool, err error) {
	firstParty := v.Client.FirstParty
	covers := func(granted string) bool {
		set, err := auth.ParseScopes(granted)
		return firstParty || (err == nil && subset(scopes, set))
	}
	if v.SubType == "organization" {
		return r.rememberedOrganization(ctx, p, v.Client.ClientID, firstParty, covers)
	}
	if firstParty {
		return nil, true, nil
	}
	g, err := storage.GetOAuth2UserGrant(ctx, r.db, v.Client.ClientID, p.UserID)
	if err != nil || g == nil || !covers(g.Scope) {
		return nil, false, err
	}
	if len(g.OrganizationIDs) == 0 {
		return nil, true, nil
	}
	var reached []uuid.UUID
	for _, s := range g.OrganizationIDs {
		if id, err := uuid.Parse(s); err == nil && slices.Contains(p.Organizations, id) {
			reached = append(reached, id)
		}
	}
	return onlyOne(reached)
}

// rememberedOrganization finds the one organization an organization subject's consent may
// be reused for: managed by the user now, and remembered (or presumed, for a first-party
// client) with the scopes requested.
func (r *Resolver) rememberedOrganization(ctx context.Context, p auth.Principal, clientID string, firstParty bool,
	covers func(string) bool) (*uuid.UUID, bool, error) {
	var candidates []uuid.UUID
	if firstParty {
		orgs, err := storage.ListUserOrganizations(ctx, r.db, p.UserID)
		if err != nil {
			return nil, false, err
		}
		for _, o := range orgs {
			if mayConsentForOrganization(o.Role) && slices.Contains(p.Organizations, o.ID) {
				candidates = append(candidates, o.ID)
			}
		}
		return onlyOne(candidates)
	}
	grants, err := storage.ListOAuth2OrganizationGrants(ctx, r.db, clientID, p.UserID)
	if err != nil {
		return nil, false, err
	}
	for _, g := range grants {
		if mayConsentForOrganization(g.Role) && slices.Contains(p.Organizations, g.OrganizationID) && covers(g.Scope) {
			candidates = append(candidates, g.OrganizationID)
		}
	}
	return onlyOne(candidates)
}

// onlyOne is the organization when ids holds exactly one, and not ok otherwise: the user
// must then choose on the page.
func onlyOne(ids []uuid.UUID) (*uuid.UUID, bool, error) {
	if len(ids) != 1 {
		return nil, false, nil
	}
	return &ids[0], true, nil
}
