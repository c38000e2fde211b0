package resolvers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// licenseKey reads one of the organizations' keys.
func (r *Resolver) licenseKey(ctx context.Context, id uuid.UUID) (*storage.LicenseKey, error) {
	k, err := storage.GetLicenseKey(ctx, r.db, organizations(ctx), id, storage.LicenseKeyOwner{})
	return k, notFoundOr(err, "")
}

// portalLicenseKey reads one of the session's keys: any of the customer's for a customer
// session, only its own for a member session.
func (r *Resolver) portalLicenseKey(ctx context.Context, id uuid.UUID) (*storage.LicenseKey, error) {
	p := auth.FromContext(ctx)
	k, err := storage.GetLicenseKey(ctx, r.db, organizations(ctx), id,
		storage.LicenseKeyOwner{CustomerID: &p.CustomerID, MemberID: sessionMember(p)})
	return k, notFoundOr(err, "")
}

// licenseKeyActivations lists a key's live activations. Portal sessions see them only when
// the key's benefit lets customers manage activations, as upstream's portal does.
func (r *Resolver) licenseKeyActivations(ctx context.Context, k *storage.LicenseKey) ([]*storage.LicenseKeyActivation, error) {
	if checkPortal(ctx) == nil {
		b, err := related(ctx, loaders(ctx).Benefit, k, func(k *storage.LicenseKey) uuid.UUID { return k.BenefitID })
		if err != nil {
			return nil, err
		}
		if p := licenseKeyProperties(b); p.Activations == nil || !p.Activations.EnableCustomerAdmin {
			return []*storage.LicenseKeyActivation{}, nil
		}
	}
	return related(ctx, loaders(ctx).ActivationsByLicenseKey, k, func(k *storage.LicenseKey) uuid.UUID { return k.ID })
}

// updateLicenseKey applies a partial update (contract §4.4): only the fields given are
// written, null clears limits and expiry, an explicit null status changes nothing. A status
// change carries over to the key's benefit grant: revoked revokes it, granted or disabled
// grants a revoked one again.
func (r *Resolver) updateLicenseKey(ctx context.Context, id uuid.UUID, in model.LicenseKeyUpdateInput) (*storage.LicenseKey, error) {
	u := storage.LicenseKeyUpdate{Usage: in.Usage.Value()}
	u.Status = in.Status.Value()
	u.LimitActivations, u.SetLimitActivations = in.LimitActivations.Value(), in.LimitActivations.IsSet()
	u.LimitUsage, u.SetLimitUsage = in.LimitUsage.Value(), in.LimitUsage.IsSet()
	if in.ExpiresAt.IsSet() {
		u.SetExpires = true
		u.ExpiresAt = in.ExpiresAt.Value()
	}
	for name, limit := range map[string]*int{"limitActivations": u.LimitActivations, "limitUsage": u.LimitUsage} {
		if limit != nil && *limit <= 0 {
			return nil, &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "greater_than",
				Loc: []any{"input", name}, Msg: "Input should be greater than 0", Input: *limit,
				Ctx: map[string]any{"gt": 0}}}}
		}
	}
	var k *storage.LicenseKey
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		now := r.Now()
		var previous storage.LicenseKeyStatus
		var err error
		if k, previous, err = storage.UpdateLicenseKey(ctx, tx, organizations(ctx), id, u, now); err != nil {
			return notFoundOr(err, "")
		}
		if k.Status == previous {
			return nil
		}
		return r.syncLicenseKeyGrants(ctx, tx, k, now)
	})
	return k, err
}

// syncLicenseKeyGrants carries a key's new status over to the grants that issued it.
func (r *Resolver) syncLicenseKeyGrants(ctx context.Context, tx *sqlx.Tx, k *storage.LicenseKey, now time.Time) error {
	granted := k.Status != storage.LicenseKeyStatusRevoked
	grants, err := storage.SetLicenseKeyGrants(ctx, tx, k.OrganizationID, k.ID, granted, now)
	if err != nil {
		return err
	}
	event := "benefit_grant.revoked"
	if granted {
		event = "benefit_grant.updated"
	}
	for _, g := range grants {
		if err := r.emit(ctx, tx, g.OrganizationID, event, g.ID); err != nil {
			return err
		}
	}
	return nil
}

// regenerateLicenseKey replaces a key's text, keeping its benefit's prefix.
func (r *Resolver) regenerateLicenseKey(ctx context.Context, id uuid.UUID) (*storage.LicenseKey, error) {
	current, err := r.licenseKey(ctx, id)
	if err != nil {
		return nil, err
	}
	b, err := loaders(ctx).Benefit.key(ctx, current.BenefitID)
	if err != nil {
		return nil, err
	}
	prefix := licenseKeyProperties(b).Prefix
	for range 3 {
		k, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.LicenseKey, error) {
			return storage.ReplaceLicenseKey(ctx, q, organizations(ctx), id, licenseKeyOf(prefix), r.Now())
		})
		if !errors.Is(err, storage.ErrConflict) {
			return k, notFoundOr(err, "")
		}
	}
	return nil, fmt.Errorf("no unused license key after three draws for key %s", id)
}

// licenseKeyOf draws a key: 128 random bits written as upper-case hex in UUID groups
// (8-4-4-4-12), the shape upstream's keys have but with no version bits, after an optional
// "<PREFIX>-" (the benefit's prefix, trimmed and upper-cased).
func licenseKeyOf(prefix *string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	h := hex.EncodeToString(b[:])
	key := strings.ToUpper(h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:])
	if prefix == nil || strings.TrimSpace(*prefix) == "" {
		return key
	}
	return strings.ToUpper(strings.TrimSpace(*prefix)) + "-" + key
}
