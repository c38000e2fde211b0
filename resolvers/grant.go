package resolvers

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
)

// Benefit grants follow upstream's model (contract §3.10): no status column, is_granted is
// granted_at set and is_revoked revoked_at set. Granting clears revoked_at and error,
// revoking clears granted_at. A grant is unique per (customer, benefit, member, subscription
// or order), so granting the same scope twice, or from fifty racing requests, leaves one
// grant and one license key.
//
// Grant times (granted_at, revoked_at, license-key expiry) follow the organization's clock,
// its test clock in test mode, like the subscription use cases that grant and revoke.
//
// Who holds a purchase's benefits: the buyer for an ordinary purchase; for a seat-based one
// (the subscription's or order's seats are set), the members holding its claimed seats and
// not the buyer, so a team's seats, not its billing contact, get the license keys.

// grantBenefits grants every live benefit of the scope's product to its holders: the member
// when scope.MemberID is set, else the claimed seats' members of a seat-based purchase, else
// the customer. New grants emit benefit_grant.created; grants that were revoked, pending or
// failed are granted again and emit benefit_grant.updated; granted ones are left alone.
// Grants of the scope for benefits the product no longer has are revoked, so a product
// change is one call. License-key benefits issue a key, or re-enable the grant's key.
func (r *Resolver) grantBenefits(ctx context.Context, tx *sqlx.Tx, scope grantScope) error {
	holders, err := r.grantHolders(ctx, tx, scope)
	if err != nil {
		return err
	}
	benefits, err := storage.LiveProductBenefits(ctx, tx, scope.OrganizationID, scope.ProductID)
	if err != nil {
		return err
	}
	keep := make([]uuid.UUID, len(benefits))
	for i, b := range benefits {
		keep[i] = b.ID
	}
	now, err := r.clockFor(ctx, tx, scope.OrganizationID)
	if err != nil {
		return err
	}
	for _, member := range holders {
		for _, b := range benefits {
			if err := r.grantBenefit(ctx, tx, scope, member, b, now); err != nil {
				return err
			}
		}
		if err := r.revokeGrants(ctx, tx, storage.GrantRevocation{OrganizationID: scope.OrganizationID,
			CustomerID: scope.CustomerID, SubscriptionID: scope.SubscriptionID, OrderID: scope.OrderID,
			MemberID: member, KeepBenefits: keep}, now); err != nil {
			return err
		}
	}
	return nil
}

// revokeBenefits revokes the scope's grants: those of scope.MemberID when set, else every
// grant of the subscription or order (the customer's and all seat holders'). Their license
// keys turn revoked. Revoking twice changes nothing and emits nothing the second time.
func (r *Resolver) revokeBenefits(ctx context.Context, tx *sqlx.Tx, scope grantScope) error {
	if err := checkGrantScope(scope); err != nil {
		return err
	}
	now, err := r.clockFor(ctx, tx, scope.OrganizationID)
	if err != nil {
		return err
	}
	return r.revokeGrants(ctx, tx, storage.GrantRevocation{OrganizationID: scope.OrganizationID,
		CustomerID: scope.CustomerID, SubscriptionID: scope.SubscriptionID, OrderID: scope.OrderID,
		AnyMember: scope.MemberID == nil, MemberID: scope.MemberID}, now)
}

// checkGrantScope rejects a scope that is not exactly one of order or subscription: a
// programming error of the caller, never a client's.
func checkGrantScope(scope grantScope) error {
	if (scope.OrderID == nil) == (scope.SubscriptionID == nil) {
		return fmt.Errorf("grant scope needs exactly one of order and subscription, got order %v, subscription %v",
			scope.OrderID, scope.SubscriptionID)
	}
	return nil
}

// grantHolders lists the members to grant to; a nil entry is the customer itself.
func (r *Resolver) grantHolders(ctx context.Context, tx *sqlx.Tx, scope grantScope) ([]*uuid.UUID, error) {
	if err := checkGrantScope(scope); err != nil {
		return nil, err
	}
	if scope.MemberID != nil {
		return []*uuid.UUID{scope.MemberID}, nil
	}
	src, err := storage.GetSeatSource(ctx, tx, []uuid.UUID{scope.OrganizationID}, scope.SubscriptionID, scope.OrderID, false)
	if err != nil {
		return nil, fmt.Errorf("grant scope: %w", err)
	}
	if src.Seats == nil {
		return []*uuid.UUID{nil}, nil
	}
	members, err := storage.ClaimedSeatMembers(ctx, tx, src)
	if err != nil {
		return nil, err
	}
	out := make([]*uuid.UUID, len(members))
	for i := range members {
		out[i] = &members[i]
	}
	return out, nil
}

// grantBenefit grants one benefit to one holder and records what the grant produced.
func (r *Resolver) grantBenefit(ctx context.Context, tx *sqlx.Tx, scope grantScope, member *uuid.UUID, b *storage.Benefit, now time.Time) error {
	g, change, err := storage.UpsertGrant(ctx, tx, storage.GrantKey{OrganizationID: scope.OrganizationID,
		BenefitID: b.ID, CustomerID: scope.CustomerID, MemberID: member,
		SubscriptionID: scope.SubscriptionID, OrderID: scope.OrderID}, now)
	if err != nil || change == storage.GrantUnchanged {
		return err
	}
	props, err := r.grantProperties(ctx, tx, g, b, now)
	if err != nil {
		return err
	}
	if _, err := storage.SetGrantProperties(ctx, tx, g.ID, props); err != nil {
		return err
	}
	event := "benefit_grant.created"
	if change == storage.GrantRegranted {
		event = "benefit_grant.updated"
	}
	return r.emit(ctx, tx, scope.OrganizationID, event, g.ID)
}

// grantProperties does the type's granting work and returns the grant's properties, spelled
// as the contract's BenefitGrant*Properties. License keys and downloadables produce something
// here; the other types record an empty object.
func (r *Resolver) grantProperties(ctx context.Context, tx *sqlx.Tx, g *storage.BenefitGrant, b *storage.Benefit, now time.Time) (storage.RawJSON, error) {
	if b.Type == storage.BenefitTypeDownloadables {
		return r.grantDownloadables(ctx, tx, g, b, now)
	}
	if b.Type != storage.BenefitTypeLicenseKeys {
		return storage.RawJSON("{}"), nil
	}
	var prev struct {
		LicenseKeyID *uuid.UUID `json:"license_key_id"`
	}
	if len(g.Properties) > 0 {
		_ = json.Unmarshal(g.Properties, &prev)
	}
	k, err := r.grantLicenseKey(ctx, tx, g, b, prev.LicenseKeyID, now)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]string{"license_key_id": k.ID.String(), "display_key": k.DisplayKey})
}

// revokeGrants revokes the selected grants, revokes their license keys and downloadables and emits
// benefit_grant.revoked for each.
func (r *Resolver) revokeGrants(ctx context.Context, tx *sqlx.Tx, sel storage.GrantRevocation, now time.Time) error {
	revoked, err := storage.RevokeGrants(ctx, tx, sel, now)
	if err != nil {
		return err
	}
	var keys []uuid.UUID
	for _, g := range revoked {
		var p struct {
			LicenseKeyID *uuid.UUID `json:"license_key_id"`
		}
		if len(g.Properties) > 0 && json.Unmarshal(g.Properties, &p) == nil && p.LicenseKeyID != nil {
			keys = append(keys, *p.LicenseKeyID)
		}
	}
	if err := storage.RevokeLicenseKeys(ctx, tx, sel.OrganizationID, keys, now); err != nil {
		return err
	}
	if err := storage.RevokeDownloadables(ctx, tx, revoked, now); err != nil {
		return err
	}
	for _, g := range revoked {
		if err := r.emit(ctx, tx, g.OrganizationID, "benefit_grant.revoked", g.ID); err != nil {
			return err
		}
	}
	return nil
}
