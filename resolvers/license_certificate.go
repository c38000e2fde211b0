package resolvers

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/licensecert"
	"till/storage"
)

// Certificate validity: an application may run offline for up to a year on one
// certificate; by default for 30 days. A retired signing key stays published for the
// longest validity, so every certificate it signed can be verified until it expires.
const (
	certificateDefaultValidity = 30 * 24 * time.Hour
	certificateMaxValidity     = 365 * 24 * time.Hour
)

// licenseCertificate signs what a valid validation established: the key, its limits and
// the activation, valid from now until validFor later or the key's own expiry, whichever
// comes first. Nothing is signed for a failed validation.
func (r *Resolver) licenseCertificate(ctx context.Context, v *model.LicenseKeyValidation, validForHours *int) (*model.LicenseCertificate, error) {
	if !v.Valid || v.LicenseKey == nil {
		return nil, nil
	}
	validFor := certificateDefaultValidity
	if validForHours != nil {
		validFor = time.Duration(*validForHours) * time.Hour
		if validFor <= 0 || validFor > certificateMaxValidity {
			return nil, &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "value_error",
				Loc: []any{"validForHours"}, Msg: "validForHours must be between 1 and 8760.", Input: *validForHours}}}
		}
	}
	k := v.LicenseKey
	key, priv, err := r.signingKey(ctx, k.OrganizationID)
	if err != nil {
		return nil, err
	}
	now := r.Now().Truncate(time.Second)
	exp := now.Add(validFor)
	if k.ExpiresAt != nil && k.ExpiresAt.Before(exp) {
		exp = *k.ExpiresAt
	}
	c := licensecert.Claims{Issuer: r.portalURL, Subject: k.ID.String(), IssuedAt: now.Unix(), NotBefore: now.Unix(),
		Expiry: exp.Unix(), OrganizationID: k.OrganizationID, LicenseKeyID: k.ID, DisplayKey: k.DisplayKey,
		CustomerID: k.CustomerID, BenefitID: k.BenefitID, Status: string(k.Status), LimitActivations: k.LimitActivations,
		LimitUsage: k.LimitUsage, Usage: k.Usage, ExpiresAt: k.ExpiresAt}
	if a := v.Activation; a != nil {
		c.Activation = &licensecert.Activation{ID: a.ID, Label: a.Label, Meta: a.Meta}
	}
	token, err := licensecert.Sign(priv, key.KeyID, c)
	if err != nil {
		return nil, err
	}
	return &model.LicenseCertificate{Certificate: token, KeyID: key.KeyID, IssuedAt: now, ExpiresAt: time.Unix(c.Expiry, 0).UTC(),
		JwksURL: licensecert.JWKSURL(r.portalURL, k.OrganizationID)}, nil
}

// signingKey returns the organization's active signing key, creating one on first use.
// Concurrent first signers converge on one key: the losers read the winner's.
func (r *Resolver) signingKey(ctx context.Context, orgID uuid.UUID) (*storage.LicenseSigningKey, ed25519.PrivateKey, error) {
	for range 2 {
		k, err := storage.ActiveLicenseSigningKey(ctx, r.db, orgID)
		if errors.Is(err, storage.ErrNotFound) {
			k, err = storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.LicenseSigningKey, error) {
				return r.newSigningKey(ctx, q, orgID)
			})
			if errors.Is(err, storage.ErrConflict) {
				continue
			}
		}
		if err != nil {
			return nil, nil, err
		}
		priv, err := licensecert.OpenKey(r.secret, k.SealedPrivateKey)
		return k, priv, err
	}
	return nil, nil, errors.New("no active license signing key after a conflict")
}

func (r *Resolver) newSigningKey(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID) (*storage.LicenseSigningKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	sealed, err := licensecert.SealKey(r.secret, priv)
	if err != nil {
		return nil, err
	}
	return storage.CreateLicenseSigningKey(ctx, q, orgID, licensecert.KeyID(pub), pub, sealed)
}

// rotateLicenseSigningKey retires the organization's signing key and makes a new one. The
// old key stays published until the last certificate it may have signed expires.
func (r *Resolver) rotateLicenseSigningKey(ctx context.Context, organizationID *uuid.UUID) (*storage.LicenseSigningKey, error) {
	orgID, err := targetOrganization(ctx, organizationID)
	if err != nil {
		return nil, err
	}
	var k *storage.LicenseSigningKey
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		now := r.Now()
		if _, err := storage.RetireLicenseSigningKeys(ctx, tx, orgID, now, now.Add(certificateMaxValidity)); err != nil {
			return err
		}
		// Counted after the retirement, which waits for a concurrent rotation's lock, so
		// the count sees the keys that rotation published.
		published, err := storage.PublishedLicenseSigningKeys(ctx, tx, orgID, now)
		if err != nil {
			return err
		}
		if len(published) >= MaxPublishedSigningKeys {
			return Invalid("too_long", fmt.Sprintf("At most %d signing keys may be published at once; a retired key stays "+
				"published until the certificates it may have signed expire.", MaxPublishedSigningKeys), len(published), "organizationId")
		}
		k, err = r.newSigningKey(ctx, tx, orgID)
		return err
	})
	return k, err
}

// licenseSigningKeys lists the keys a verifier must know: the active one and the retired
// ones whose certificates may still be valid.
func (r *Resolver) licenseSigningKeys(ctx context.Context, organizationID *uuid.UUID) ([]*storage.LicenseSigningKey, error) {
	orgID, err := targetOrganization(ctx, organizationID)
	if err != nil {
		return nil, err
	}
	return storage.PublishedLicenseSigningKeys(ctx, r.db, orgID, r.Now())
}

// PublishedLicenseKeys is the organization's license-verification key set, served at its
// well-known URL without authentication.
func (r *Resolver) PublishedLicenseKeys(ctx context.Context, orgID uuid.UUID) (licensecert.KeySet, error) {
	keys, err := storage.PublishedLicenseSigningKeys(ctx, r.db, orgID, r.Now())
	if err != nil {
		return licensecert.KeySet{}, err
	}
	if len(keys) == 0 {
		return licensecert.KeySet{}, licensecert.ErrNoKeys
	}
	set := licensecert.KeySet{Keys: make([]licensecert.JWK, len(keys))}
	for i, k := range keys {
		set.Keys[i] = licensecert.NewJWK(k.PublicKey, k.ValidUntil)
	}
	return set, nil
}
