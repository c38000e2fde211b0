// Package licensecert signs and verifies Till's offline license certificates: a statement
// about one license key (its status, limits, expiry and optionally one activation) that an
// application checks without reaching Till, using the public keys its seller organization
// publishes as a JWK Set.
//
// A certificate is a JWS in compact serialization signed with Ed25519 (alg "EdDSA", RFC 8037)
// and typed "till-license+jwt", so any JOSE library can verify it as well as this package.
// Encoding and verification are written against the standard library alone so that
// applications can vendor this package without pulling a JOSE dependency.
//
// Signing keys rotate: a retired key stays published until the last certificate it may have
// signed has expired, so certificates issued before a rotation keep verifying.
package licensecert

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Algorithm is the only JWS "alg" a certificate may carry. Pinning it (instead of trusting
// the header) is what makes "none" and HMAC-with-the-public-key forgeries impossible.
const Algorithm = "EdDSA"

// Type is the JWS "typ" of a certificate. Explicit typing (RFC 8725 §3.11) keeps another JWT
// signed by the same key from being accepted as a license certificate.
const Type = "till-license+jwt"

// Sentinel errors of Verify, matched with errors.Is; the returned errors wrap them with
// detail.
var (
	// ErrMalformed means the token is not a well-formed certificate: wrong number of parts,
	// bad base64url or JSON, a wrong "typ" or an unsupported critical header.
	ErrMalformed = errors.New("licensecert: malformed certificate")
	// ErrAlgorithm means the header names an algorithm other than EdDSA.
	ErrAlgorithm = errors.New("licensecert: unsupported algorithm")
	// ErrUnknownKey means the header has no "kid" or one the key set does not hold, for
	// example a key retired so long ago that it is no longer published.
	ErrUnknownKey = errors.New("licensecert: unknown signing key")
	// ErrSignature means the signature does not match the header and claims.
	ErrSignature = errors.New("licensecert: invalid signature")
	// ErrExpired means the certificate's exp has passed (beyond the leeway).
	ErrExpired = errors.New("licensecert: certificate expired")
	// ErrNotYetValid means the certificate's nbf lies in the future (beyond the leeway).
	ErrNotYetValid = errors.New("licensecert: certificate not yet valid")
)

// b64 is base64url without padding, strict so that each value has exactly one encoding and
// a token cannot be altered without breaking its signature.
var b64 = base64.RawURLEncoding.Strict()

// Claims is what a certificate states. The registered claims (iss, sub, iat, nbf, exp) come
// first; the rest mirror the license key as the validate endpoint reports it. Every field is
// always present, null when empty, so applications see one stable shape.
type Claims struct {
	// Issuer is the public URL of the Till server; the organization's JWK Set lives under it
	// (see JWKSURL).
	Issuer string `json:"iss"`
	// Subject is the license key's id.
	Subject string `json:"sub"`
	// IssuedAt, NotBefore and Expiry are Unix seconds. Expiry bounds how long the certificate
	// may be trusted offline; it is independent of the key's own ExpiresAt.
	IssuedAt  int64 `json:"iat"`
	NotBefore int64 `json:"nbf"`
	Expiry    int64 `json:"exp"`

	OrganizationID   uuid.UUID `json:"organization_id"`
	LicenseKeyID     uuid.UUID `json:"license_key_id"`
	DisplayKey       string    `json:"display_key"`
	CustomerID       uuid.UUID `json:"customer_id"`
	BenefitID        uuid.UUID `json:"benefit_id"`
	Status           string    `json:"status"`
	LimitActivations *int      `json:"limit_activations"`
	LimitUsage       *int      `json:"limit_usage"`
	Usage            int       `json:"usage"`
	// ExpiresAt is the license key's own expiry, null when the key never expires.
	ExpiresAt *time.Time `json:"expires_at"`
	// Activation is the activation (device, installation) the certificate was issued for,
	// null for a certificate about the key alone.
	Activation *Activation `json:"activation"`
}

// Activation identifies the activation a certificate is bound to, so an application can check
// that the certificate belongs to the machine it runs on.
type Activation struct {
	ID    uuid.UUID      `json:"id"`
	Label string         `json:"label"`
	Meta  map[string]any `json:"meta"`
}

// header is the JOSE header. Field order is the serialization order.
type header struct {
	Alg  string          `json:"alg"`
	Kid  string          `json:"kid"`
	Typ  string          `json:"typ"`
	Crit json.RawMessage `json:"crit,omitempty"`
}

// Sign returns the certificate for c signed by priv, whose public key is published under kid.
func Sign(priv ed25519.PrivateKey, kid string, c Claims) (string, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return "", errors.New("licensecert: invalid Ed25519 private key")
	}
	if kid == "" {
		return "", errors.New("licensecert: a key id is required")
	}
	h, err := json.Marshal(header{Alg: Algorithm, Kid: kid, Typ: Type})
	if err != nil {
		return "", err
	}
	p, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("licensecert: encoding claims: %w", err)
	}
	input := b64.EncodeToString(h) + "." + b64.EncodeToString(p)
	return input + "." + b64.EncodeToString(ed25519.Sign(priv, []byte(input))), nil
}

// Verify checks token against keys at time now and returns its claims. leeway widens the
// validity window on both sides to absorb clock skew between Till and the application. The
// claims are decoded only after the signature checks out.
func Verify(token string, keys KeySet, now time.Time, leeway time.Duration) (Claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return Claims{}, fmt.Errorf("%w: %d dot-separated parts, want 3", ErrMalformed, len(parts))
	}
	pub, err := checkHeader(parts[0], keys)
	if err != nil {
		return Claims{}, err
	}
	sig, err := b64.DecodeString(parts[2])
	if err != nil {
		return Claims{}, fmt.Errorf("%w: signature: %v", ErrMalformed, err)
	}
	if !ed25519.Verify(pub, []byte(parts[0]+"."+parts[1]), sig) {
		return Claims{}, ErrSignature
	}
	c, err := decodeClaims(parts[1])
	if err != nil {
		return Claims{}, err
	}
	return c, checkTime(c, now, leeway)
}

// checkHeader decodes the header, enforces alg and typ and returns the public key its kid
// names.
func checkHeader(part string, keys KeySet) (ed25519.PublicKey, error) {
	raw, err := b64.DecodeString(part)
	if err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrMalformed, err)
	}
	var h header
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrMalformed, err)
	}
	if h.Alg != Algorithm {
		return nil, fmt.Errorf("%w: %q", ErrAlgorithm, h.Alg)
	}
	if !strings.EqualFold(h.Typ, Type) {
		return nil, fmt.Errorf("%w: typ %q, want %q", ErrMalformed, h.Typ, Type)
	}
	// RFC 7515 §4.1.11: a critical extension this code does not implement must be refused.
	if len(h.Crit) > 0 {
		return nil, fmt.Errorf("%w: unsupported critical header %s", ErrMalformed, h.Crit)
	}
	if h.Kid == "" {
		return nil, fmt.Errorf("%w: the header has no kid", ErrUnknownKey)
	}
	pub, ok := keys.Lookup(h.Kid)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownKey, h.Kid)
	}
	return pub, nil
}

func decodeClaims(part string) (Claims, error) {
	raw, err := b64.DecodeString(part)
	if err != nil {
		return Claims{}, fmt.Errorf("%w: claims: %v", ErrMalformed, err)
	}
	var c Claims
	if err := json.Unmarshal(raw, &c); err != nil {
		return Claims{}, fmt.Errorf("%w: claims: %v", ErrMalformed, err)
	}
	return c, nil
}

// checkTime enforces nbf - leeway <= now < exp + leeway. A certificate without exp decodes
// as exp 0 and is therefore expired: there are no certificates valid forever.
func checkTime(c Claims, now time.Time, leeway time.Duration) error {
	leeway = max(leeway, 0)
	if nbf := time.Unix(c.NotBefore, 0); now.Before(nbf.Add(-leeway)) {
		return fmt.Errorf("%w: valid from %s", ErrNotYetValid, nbf.UTC().Format(time.RFC3339))
	}
	if exp := time.Unix(c.Expiry, 0); !now.Before(exp.Add(leeway)) {
		return fmt.Errorf("%w: at %s", ErrExpired, exp.UTC().Format(time.RFC3339))
	}
	return nil
}

// UnverifiedClaims decodes a certificate's claims without checking anything. It exists to
// find where the keys are (Issuer and OrganizationID, see JWKSURL) before verifying; nothing
// it returns may be trusted until Verify has accepted the same token.
func UnverifiedClaims(token string) (Claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return Claims{}, fmt.Errorf("%w: %d dot-separated parts, want 3", ErrMalformed, len(parts))
	}
	return decodeClaims(parts[1])
}
