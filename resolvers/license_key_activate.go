package resolvers

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/storage"
)

// activateLicenseKey binds a key to a machine, in upstream's order of checks (contract §4.2).
// The key row stays locked while its live activations are counted and the new one is
// created, so concurrent activations never pass limitActivations.
func (r *Resolver) activateLicenseKey(ctx context.Context, in model.LicenseKeyActivateInput, orgs []uuid.UUID) (*storage.LicenseKeyActivation, error) {
	if orgs == nil {
		if err := r.limitPublicLicenseCall(ctx, in.OrganizationID, in.Key); err != nil {
			return nil, err
		}
	}
	if err := checkMetadata(in.Conditions, "input", "conditions"); err != nil {
		return nil, err
	}
	if err := checkMetadata(in.Meta, "input", "meta"); err != nil {
		return nil, err
	}
	if !visibleTo(orgs, in.OrganizationID) {
		return nil, NotFound("")
	}
	ref := storage.LicenseKeyRef{OrganizationID: in.OrganizationID, Key: in.Key}
	var (
		a *storage.LicenseKeyActivation
		k *storage.LicenseKey
	)
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		var err error
		if k, err = storage.LockLicenseKey(ctx, tx, ref); err != nil {
			return notFoundOr(err, "")
		}
		now := r.Now()
		if err := activatable(k, now); err != nil {
			return err
		}
		a, err = storage.CreateLicenseKeyActivation(ctx, tx, k, *k.LimitActivations, in.Label,
			conditionsForComparison(in.Conditions), in.Meta, now)
		if errors.Is(err, storage.ErrConflict) {
			return &Error{Code: CodeNotPermitted, Detail: "License key activation limit already reached",
				Cause: codeActivationLimit}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	loaders(ctx).LicenseKey.prime(ctx, k.ID, k)
	return a, nil
}

// activatable says why a locked key cannot take an activation, or nil.
func activatable(k *storage.LicenseKey, now time.Time) error {
	switch {
	case k.Status != storage.LicenseKeyStatusGranted:
		reason := storage.LicenseKeyValidationCodeDisabled
		if k.Status == storage.LicenseKeyStatusRevoked {
			reason = storage.LicenseKeyValidationCodeRevoked
		}
		return &Error{Code: CodeNotPermitted, Cause: string(reason),
			Detail: "License key is no longer active. This license key can not be activated."}
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return &Error{Code: CodeNotPermitted, Detail: "License key has expired.",
			Cause: string(storage.LicenseKeyValidationCodeExpired)}
	case k.LimitActivations == nil:
		return &Error{Code: CodeNotPermitted, Cause: codeActivationsDisabled,
			Detail: "This license key does not support activations. Use the /validate endpoint instead to check license validity."}
	}
	return nil
}

// deactivateLicenseKey frees an activation's slot. Upstream checks neither status nor
// expiry here: a revoked or expired key can still be deactivated.
func (r *Resolver) deactivateLicenseKey(ctx context.Context, in model.LicenseKeyDeactivateInput, orgs []uuid.UUID) error {
	if orgs == nil {
		if err := r.limitPublicLicenseCall(ctx, in.OrganizationID, in.Key); err != nil {
			return err
		}
	}
	if !visibleTo(orgs, in.OrganizationID) {
		return NotFound("")
	}
	ref := storage.LicenseKeyRef{OrganizationID: in.OrganizationID, Key: in.Key}
	return notFoundOr(storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		return storage.DeactivateLicenseKeyActivation(ctx, tx, ref, in.ActivationID, r.Now())
	}), "")
}

// licenseKeyOrganizations is the organizations an organization-side license operation may
// touch: never nil, which [visibleTo] reads as "any".
func licenseKeyOrganizations(ctx context.Context) []uuid.UUID {
	if orgs := organizations(ctx); orgs != nil {
		return orgs
	}
	return []uuid.UUID{}
}

// visibleTo reports whether a license operation limited to orgs may name a key of orgID;
// nil orgs is the public operations', open to every organization. An invisible
// organization is answered like an unknown key, as upstream does.
func visibleTo(orgs []uuid.UUID, orgID uuid.UUID) bool {
	return orgs == nil || slices.Contains(orgs, orgID)
}
