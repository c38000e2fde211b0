package licensecert

import (
	"crypto/ed25519"
	"errors"

	"till/internal/seal"
)

// sealInfo separates the sealing key from every other key derived from the server secret.
const sealInfo = "till license signing key"

// SealKey encrypts priv for storage (seal.Seal). Only the 32-byte seed is sealed; the rest
// of an Ed25519 private key derives from it. A database dump alone then cannot sign
// certificates.
func SealKey(secret []byte, priv ed25519.PrivateKey) ([]byte, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, errors.New("licensecert: invalid Ed25519 private key")
	}
	return seal.Seal(secret, sealInfo, priv.Seed(), nil)
}

// OpenKey decrypts what SealKey sealed. It fails, rather than returning a wrong key, when
// the secret differs or the sealed bytes were altered.
func OpenKey(secret, sealed []byte) (ed25519.PrivateKey, error) {
	seed, err := seal.Open(secret, sealInfo, sealed, nil)
	if err != nil {
		return nil, err
	}
	if len(seed) != ed25519.SeedSize {
		return nil, errors.New("licensecert: sealed key has the wrong length")
	}
	return ed25519.NewKeyFromSeed(seed), nil
}
