package licensecert

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// JWK is one Ed25519 public key as RFC 8037 spells it.
type JWK struct {
	Kty string `json:"kty"` // always "OKP"
	Crv string `json:"crv"` // always "Ed25519"
	X   string `json:"x"`   // the 32-byte public key, base64url
	Kid string `json:"kid"` // the RFC 7638 thumbprint, see KeyID
	Use string `json:"use"` // always "sig"
	Alg string `json:"alg"` // always "EdDSA"
	// ValidUntil (Unix seconds) is Till's extension for a retired key: no certificate it
	// signed expires later, so once this time has passed the key can be forgotten. It is
	// absent on the active key, whose certificates are still being issued.
	ValidUntil *int64 `json:"till_valid_until,omitempty"`
}

// NewJWK describes pub, with its thumbprint as kid; validUntil is nil for the active key and
// the retired key's last certificate expiry otherwise.
func NewJWK(pub ed25519.PublicKey, validUntil *time.Time) JWK {
	k := JWK{Kty: "OKP", Crv: "Ed25519", X: b64.EncodeToString(pub), Kid: KeyID(pub), Use: "sig", Alg: Algorithm}
	if validUntil != nil {
		u := validUntil.Unix()
		k.ValidUntil = &u
	}
	return k
}

// PublicKey decodes x, checking that the JWK is an Ed25519 signing key.
func (k JWK) PublicKey() (ed25519.PublicKey, error) {
	if k.Kty != "OKP" || k.Crv != "Ed25519" {
		return nil, fmt.Errorf("licensecert: key %q is %s/%s, not OKP/Ed25519", k.Kid, k.Kty, k.Crv)
	}
	// "Ed25519" is RFC 9864's fully-specified name for the same algorithm.
	if (k.Alg != "" && k.Alg != Algorithm && k.Alg != "Ed25519") || (k.Use != "" && k.Use != "sig") {
		return nil, fmt.Errorf("licensecert: key %q is not an EdDSA signing key", k.Kid)
	}
	x, err := b64.DecodeString(k.X)
	if err != nil || len(x) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("licensecert: key %q: x is not a base64url Ed25519 public key", k.Kid)
	}
	return ed25519.PublicKey(x), nil
}

// KeyID is pub's RFC 7638 JWK thumbprint: the base64url SHA-256 of its required members in
// lexicographic order. Deriving the kid from the key means a kid can never name two keys.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + b64.EncodeToString(pub) + `"}`))
	return b64.EncodeToString(sum[:])
}

// KeySet is a JWK Set: an organization's active key and its retired keys that may still have
// live certificates.
type KeySet struct {
	Keys []JWK
}

// Lookup returns the public key published under kid.
func (s KeySet) Lookup(kid string) (ed25519.PublicKey, bool) {
	for _, k := range s.Keys {
		if k.Kid == kid {
			pub, err := k.PublicKey()
			return pub, err == nil
		}
	}
	return nil, false
}

// MarshalJSON writes {"keys":[...]}, with an empty array rather than null for no keys.
func (s KeySet) MarshalJSON() ([]byte, error) {
	keys := s.Keys
	if keys == nil {
		keys = []JWK{}
	}
	return json.Marshal(struct {
		Keys []JWK `json:"keys"`
	}{keys})
}

// UnmarshalJSON reads a JWK Set as ParseKeySet does.
func (s *KeySet) UnmarshalJSON(b []byte) error {
	set, err := ParseKeySet(b)
	if err != nil {
		return err
	}
	*s = set
	return nil
}

// ParseKeySet reads a JWK Set. As RFC 7517 §5 asks, keys of other types or curves are
// skipped, so a set shared with other keys still works; an Ed25519 key that is broken, or
// whose kid is missing or repeated, fails the whole set rather than silently dropping a key
// certificates may depend on.
func ParseKeySet(b []byte) (KeySet, error) {
	var raw struct {
		Keys *[]JWK `json:"keys"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return KeySet{}, fmt.Errorf("licensecert: JWK set: %w", err)
	}
	if raw.Keys == nil {
		return KeySet{}, errors.New(`licensecert: JWK set: no "keys" member`)
	}
	set := KeySet{Keys: []JWK{}}
	seen := map[string]bool{}
	for _, k := range *raw.Keys {
		if k.Kty != "OKP" || k.Crv != "Ed25519" {
			continue
		}
		if _, err := k.PublicKey(); err != nil {
			return KeySet{}, err
		}
		if k.Kid == "" || seen[k.Kid] {
			return KeySet{}, fmt.Errorf("licensecert: JWK set: missing or repeated kid %q", k.Kid)
		}
		seen[k.Kid] = true
		set.Keys = append(set.Keys, k)
	}
	return set, nil
}

// JWKSPath is where Till serves an organization's JWK Set, relative to its public URL.
func JWKSPath(orgID uuid.UUID) string {
	return "/.well-known/till/organizations/" + orgID.String() + "/license-keys.json"
}

// JWKSURL is the JWK Set address for a certificate's issuer and organization.
func JWKSURL(issuer string, orgID uuid.UUID) string {
	return strings.TrimRight(issuer, "/") + JWKSPath(orgID)
}
