package resolvers_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"till/internal/licensecert"
)

func TestLicenseCertificatesVerifyOfflineAcrossRotation(t *testing.T) {
	t.Parallel()
	w := newKeyWorld(t, vars{"activations": vars{"limit": 2}, "limit_usage": 50, "expires": vars{"ttl": 10, "timeframe": "day"}})
	activation, gqlErr := w.activate(t, vars{"label": "laptop", "meta": vars{"os": "linux"}})
	if gqlErr != nil {
		t.Fatal(gqlErr)
	}
	ctx := context.Background()
	if _, err := w.s.Resolver.PublishedLicenseKeys(ctx, w.org.ID); !errors.Is(err, licensecert.ErrNoKeys) {
		t.Fatalf("keys before any certificate: %v, want ErrNoKeys", err)
	}
	type cert struct {
		Certificate, KeyID, JwksURL string
		IssuedAt, ExpiresAt         time.Time
	}
	issue := func(tb testing.TB, token string, in vars, hours any) *cert {
		tb.Helper()
		in["key"], in["organizationId"] = w.key.Key, w.org.ID
		field := "validateLicenseKey"
		if token == "" {
			field = "portalValidateLicenseKey"
		}
		var out map[string]struct {
			Certificate *cert
		}
		w.s.Query(tb, token, `mutation($in: LicenseKeyValidateInput!, $h: Int) { `+field+`(input: $in) {
			certificate(validForHours: $h) { certificate keyId issuedAt expiresAt jwksUrl } } }`, vars{"in": in, "h": hours}, &out)
		return out[field].Certificate
	}
	verify := func(tb testing.TB, c *cert) (licensecert.Claims, error) {
		tb.Helper()
		keys, err := w.s.Resolver.PublishedLicenseKeys(ctx, w.org.ID)
		if err != nil {
			tb.Fatal(err)
		}
		return licensecert.Verify(c.Certificate, keys, time.Now(), 0)
	}

	first := issue(t, "", vars{"activationId": activation}, 48)
	if first == nil {
		t.Fatal("no certificate for a valid validation")
	}
	claims, err := verify(t, first)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if claims.LicenseKeyID != w.key.ID || claims.Subject != w.key.ID.String() || claims.OrganizationID != w.org.ID ||
		claims.CustomerID != w.customer.ID || claims.BenefitID != w.benefit.ID || claims.DisplayKey != w.key.DisplayKey ||
		claims.Status != "granted" || claims.LimitUsage == nil || *claims.LimitUsage != 50 || claims.Usage != 0 ||
		claims.Activation == nil || claims.Activation.ID != activation || claims.Activation.Meta["os"] != "linux" ||
		claims.Expiry-claims.IssuedAt != 48*3600 || claims.ExpiresAt == nil || first.KeyID == "" {
		t.Errorf("claims = %+v", claims)
	}
	if long := issue(t, w.org.Token, vars{}, 8760); long.ExpiresAt.After(*claims.ExpiresAt) {
		t.Errorf("certificate expires %s after the key (%s)", long.ExpiresAt, claims.ExpiresAt)
	}
	if c := issue(t, "", vars{"benefitId": w.customer.ID}, nil); c != nil {
		t.Errorf("a failed validation got a certificate")
	}
	if e := w.s.QueryError(t, "", `mutation($in: LicenseKeyValidateInput!) { portalValidateLicenseKey(input: $in) { certificate(validForHours: 0) { keyId } } }`,
		vars{"in": vars{"key": w.key.Key, "organizationId": w.org.ID}}); e.Extensions.Code != "BAD_USER_INPUT" || e.Extensions.Reason != "RequestValidationError" {
		t.Errorf("validForHours 0: %+v", e)
	}

	var rotated struct{ RotateLicenseSigningKey struct{ KeyID string } }
	w.s.Query(t, w.org.Token, `mutation { rotateLicenseSigningKey { keyId } }`, nil, &rotated)
	second := issue(t, "", vars{}, nil)
	if rotated.RotateLicenseSigningKey.KeyID == first.KeyID || second.KeyID != rotated.RotateLicenseSigningKey.KeyID {
		t.Errorf("kids: first %s, rotated %s, second %s", first.KeyID, rotated.RotateLicenseSigningKey.KeyID, second.KeyID)
	}
	for name, c := range map[string]*cert{"before rotation": first, "after rotation": second} {
		if _, err := verify(t, c); err != nil {
			t.Errorf("certificate %s: %v", name, err)
		}
	}
	var listed struct {
		LicenseSigningKeys []struct {
			KeyID      string
			RetiredAt  *string
			ValidUntil *string
		}
	}
	w.s.Query(t, w.org.Token, `{ licenseSigningKeys { keyId retiredAt validUntil } }`, nil, &listed)
	if ks := listed.LicenseSigningKeys; len(ks) != 2 || ks[0].RetiredAt != nil || ks[1].KeyID != first.KeyID || ks[1].ValidUntil == nil {
		t.Errorf("signing keys = %+v", ks)
	}
	var secret []byte
	w.s.Get(t, &secret, `SELECT sealed_private_key FROM license_signing_keys WHERE kid = $1`, first.KeyID)
	if len(secret) == 0 || string(secret) == first.Certificate {
		t.Error("the private key is not stored sealed")
	}
}
